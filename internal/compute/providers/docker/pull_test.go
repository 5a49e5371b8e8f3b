package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// pullSpec is a one-container echo tenant with a pull policy.
// pullsOver finds how many pulls an offline registry's error counts.
var pullsOver = regexp.MustCompile(`\((\d+) pulls over `)

func pullSpec(id, image string, policy PullPolicy) *provider.TenantComputeSpec {
	spec := benchSpec(id, image)
	spec.TenantName = "pull"
	spec.Options = tenantOptions{PullPolicy: policy}
	return spec
}

func pullID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-0000000b0000", 0x9011000+n) }

// hasImage reports whether the Engine holds ref.
func hasImage(t *testing.T, cli *client.Client, ref string) bool {
	t.Helper()
	_, err := cli.ImageInspect(context.Background(), ref)
	if err != nil && !isNotFound(err) {
		t.Fatalf("inspect image %s: %v", ref, err)
	}
	return err == nil
}

// Pull policies against a registry served by the test: if-not-present pulls
// only a missing image, always pulls every time, never refuses a missing
// image with a terminal error and leaves nothing behind.
func TestPullPolicies(t *testing.T) {
	cli := dockertest.Engine(t)
	counter := &countingHandler{next: newTestRegistry()}
	reg := startRegistry(t, cli, counter)
	ref := reg.push(t, "landlord-test/echo", "policies", echoRegistryImage(t, 1, 1<<16))
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	ctx := context.Background()

	steps := []struct {
		name      string
		policy    PullPolicy
		removeImg bool
		pulls     bool // the registry is asked for the manifest
		wantErr   bool
	}{
		{name: "if-not-present pulls a missing image", policy: PullIfNotPresent, removeImg: true, pulls: true},
		{name: "if-not-present uses the image on the engine", policy: PullIfNotPresent},
		{name: "always pulls again", policy: PullAlways, pulls: true},
		{name: "never refuses a missing image", policy: PullNever, removeImg: true, wantErr: true},
		{name: "never uses the image on the engine", policy: PullNever},
	}
	for i, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			if s.removeImg {
				if _, err := cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true}); err != nil && !isNotFound(err) {
					t.Fatal(err)
				}
			} else if !hasImage(t, cli, ref) {
				// Put it back for this step.
				if _, err := p.Provision(ctx, pullSpec(pullID(100+i), ref, PullIfNotPresent)); err != nil {
					t.Fatal(err)
				}
				_ = p.Destroy(ctx, pullID(100+i))
			}
			before := counter.manifests.Load()
			id := pullID(i)
			_, err := p.Provision(ctx, pullSpec(id, ref, s.policy))
			defer func() { _ = p.Destroy(ctx, id) }()
			pulled := counter.manifests.Load() > before
			if pulled != s.pulls {
				t.Errorf("the registry was asked for the image: %v, want %v", pulled, s.pulls)
			}
			if s.wantErr {
				if !errors.Is(err, errImageMissing) || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "pull_policy is never") {
					t.Fatalf("Provision = %v, want a terminal error saying the image is missing and pull_policy is never", err)
				}
				if _, err := p.GetStatus(ctx, id); !errors.Is(err, provider.ErrTenantNotFound) {
					t.Errorf("after the failed Provision GetStatus = %v, want ErrTenantNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Provision: %v", err)
			}
			if !hasImage(t, cli, ref) {
				t.Errorf("%s is not on the engine after Provision", ref)
			}
		})
	}
}

// A pull reports its progress through the context, at most about once a
// second: a first line, byte and layer counts while it runs, and a last line.
func TestPullReportsProgress(t *testing.T) {
	cli := dockertest.Engine(t)
	// About 1.3 MB/s per blob: the pull of three layers lasts a few seconds.
	reg := startRegistry(t, cli, slowBlobs(newTestRegistry(), 128<<10, 100*time.Millisecond))
	ref := reg.push(t, "landlord-test/echo", "progress", echoRegistryImage(t, 2, 3<<20))
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})

	type report struct {
		at  time.Time
		msg string
	}
	var mu sync.Mutex
	var reports []report
	ctx := provider.WithProgress(context.Background(), func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, report{time.Now(), msg})
	})
	id := pullID(20)
	spec := pullSpec(id, ref, PullIfNotPresent)
	spec.Secrets = []workload.SecretReference{{Container: "app", Name: "TOKEN", Value: workload.NewSecretValue("progress-secret-value")}}
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })

	mu.Lock()
	defer mu.Unlock()
	if len(reports) < 3 {
		t.Fatalf("got %d progress reports, want a first, at least one while pulling, and a last: %v", len(reports), reports)
	}
	if got, want := reports[0].msg, "pulling image "+ref; got != want {
		t.Errorf("first report %q, want %q", got, want)
	}
	if got, want := reports[len(reports)-1].msg, "pulled image "+ref; got != want {
		t.Errorf("last report %q, want %q", got, want)
	}
	during := regexp.MustCompile(`^pulling image ` + regexp.QuoteMeta(ref) + `(: \d+\.\d of \d+\.\d MB)? \(\d of 3 layers\)$`)
	withBytes := false
	for i, r := range reports[1 : len(reports)-1] {
		if !during.MatchString(r.msg) {
			t.Errorf("report %q does not read like %s", r.msg, during)
		}
		withBytes = withBytes || strings.Contains(r.msg, " MB ")
		if gap := r.at.Sub(reports[i].at); i > 0 && gap < 900*time.Millisecond {
			t.Errorf("reports %q and %q came %s apart; want about a second at least", reports[i].msg, r.msg, gap)
		}
	}
	if !withBytes {
		t.Errorf("no report counted bytes: %v", reports)
	}
	for _, r := range reports {
		if strings.Contains(r.msg, "progress-secret-value") {
			t.Errorf("report %q contains a secret", r.msg)
		}
	}
	for _, r := range reports {
		t.Logf("%s %s", r.at.Format("15:04:05.000"), r.msg)
	}
}

// Why a pull failed decides whether the controller retries: a tag or
// repository the registry does not have, access it refuses, or a registry
// the Engine cannot resolve or connect to for the whole grace is terminal
// and says what to do; a registry that answers and fails is retryable.
func TestPullFailures(t *testing.T) {
	cli := dockertest.Engine(t)
	good := startRegistry(t, cli, nil)
	ref := good.push(t, "landlord-test/echo", "exists", echoRegistryImage(t, 0, 0))
	repo := strings.TrimPrefix(ref, good.Host)
	failing := func(status int, body string) *testRegistry {
		return startRegistry(t, cli, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Basic realm="landlord-test"`)
			}
			http.Error(w, body, status)
		}))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nobody := ln.Addr().String()
	_ = ln.Close()
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	p.registryGrace = 2 * time.Second
	const unresolvable = "landlord-test.invalid" // RFC 6761: never resolves

	cases := []struct {
		name     string
		image    string
		terminal bool
		is       error
		says     string
	}{
		{name: "unknown tag", image: good.Host + repo[:strings.LastIndex(repo, ":")] + ":no-such-tag", terminal: true, is: errImageMissing, says: "check the image name and tag"},
		{name: "unknown repository", image: good.Host + "/landlord-test/no-such-repo:v1", terminal: true, is: errImageMissing, says: "check the image name and tag"},
		{name: "access denied", image: failing(http.StatusUnauthorized, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`).Host + repo, terminal: true, is: errRegistryDenied, says: "docker login"},
		{name: "nobody listens", image: nobody + repo, terminal: true, is: errRegistryOffline, says: "cannot resolve or reach the registry " + nobody},
		{name: "unresolvable registry", image: unresolvable + repo, terminal: true, is: errRegistryOffline, says: "cannot resolve or reach the registry " + unresolvable},
		{name: "registry fails with 500", image: failing(http.StatusInternalServerError, "boom").Host + repo, is: errRegistryFailed, says: "registry failed to hand over"},
		{name: "registry fails with 503", image: failing(http.StatusServiceUnavailable, "busy").Host + repo, is: errRegistryFailed, says: "registry failed to hand over"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good.removeFromEngine(t, c.image)
			id := pullID(40 + i)
			start := time.Now()
			_, err := p.Provision(context.Background(), pullSpec(id, c.image, PullIfNotPresent))
			took := time.Since(start)
			if err == nil {
				_ = p.Destroy(context.Background(), id)
				t.Fatalf("Provision of %s succeeded", c.image)
			}
			if !errors.Is(err, c.is) || !errors.Is(err, provider.ErrProvisionFailed) || provider.IsTerminal(err) != c.terminal || !strings.Contains(err.Error(), c.says) {
				t.Errorf("Provision of %s = %v\nwant ErrProvisionFailed and %v, terminal %v, saying %q", c.image, err, c.is, c.terminal, c.says)
			}
			t.Logf("after %s: %v", took.Round(time.Millisecond), err)
			if offline := errors.Is(err, errRegistryOffline); offline {
				// Pulled again through the grace (1, 2, 4 and 8 s apart:
				// five pulls, fewer when pulls are slow), then told what
				// to do.
				if m := pullsOver.FindStringSubmatch(err.Error()); m == nil || m[1] == "1" {
					t.Errorf("Provision did not pull again through the grace of %s: %v", p.registryGrace, err)
				}
				for _, says := range []string{"docker load", "pull_policy", "registry mirror"} {
					if !strings.Contains(err.Error(), says) {
						t.Errorf("error does not say %q: %v", says, err)
					}
				}
			}
			if !strings.Contains(err.Error(), "image of container app") {
				t.Errorf("error %q does not name the failed step", err)
			}
			if _, err := p.GetStatus(context.Background(), id); !errors.Is(err, provider.ErrTenantNotFound) {
				t.Errorf("after the failed Provision GetStatus = %v, want ErrTenantNotFound", err)
			}
			ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: tenantFilter(id)})
			if err != nil || len(ns.Items) != 0 {
				t.Errorf("a failed Provision left %d networks (%v)", len(ns.Items), err)
			}
		})
	}
}

// A registry that cannot be reached for a moment (here: nobody listens on
// its port for the first 2 s, as while it restarts) is tried again within
// the grace, and the pull then succeeds; the wait is reported as progress.
func TestPullRegistryBackWithinGrace(t *testing.T) {
	cli := dockertest.Engine(t)
	// Push through a registry on a port, then stop serving it there.
	counter := &countingHandler{next: newTestRegistry()}
	first := startRegistry(t, cli, counter)
	ln, err := net.Listen("tcp", first.Host)
	if err == nil {
		_ = ln.Close()
		t.Fatal("the registry's port is free while it serves")
	}
	ref := first.push(t, "landlord-test/echo", "comes-back", echoRegistryImage(t, 0, 0))
	host := first.Host
	first.stop()
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	p.registryGrace = 20 * time.Second

	go func() {
		time.Sleep(2 * time.Second)
		ln, err := net.Listen("tcp", host)
		if err != nil {
			t.Errorf("serve the registry again on %s: %v", host, err)
			return
		}
		srv := &http.Server{Handler: counter, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}()
	var mu sync.Mutex
	var reports []string
	ctx := provider.WithProgress(context.Background(), func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, msg)
	})
	id := pullID(70)
	start := time.Now()
	if _, err := p.Provision(ctx, pullSpec(id, ref, PullIfNotPresent)); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	t.Logf("pulled after %s", time.Since(start).Round(time.Millisecond))
	if counter.manifests.Load() == 0 {
		t.Error("the registry was never asked for the image")
	}
	mu.Lock()
	defer mu.Unlock()
	waited := false
	for _, r := range reports {
		waited = waited || strings.Contains(r, "cannot resolve or reach the registry "+host)
	}
	if !waited {
		t.Errorf("no progress report said the registry could not be reached: %q", reports)
	}
}

// An error the Engine reports inside the pull's progress stream, after the
// pull started, is returned as an error (here: the registry fails every blob
// download; the Engine retries for a few seconds and gives up).
func TestPullErrorInStream(t *testing.T) {
	cli := dockertest.Engine(t)
	next := newTestRegistry()
	reg := startRegistry(t, cli, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			http.Error(w, "blob storage is down", http.StatusInternalServerError)
			return
		}
		next.ServeHTTP(w, r)
	}))
	// Fresh random layers, so the Engine has to download them.
	ref := reg.push(t, "landlord-test/echo", "broken-blobs", echoRegistryImage(t, 1, 1<<16))
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	id := pullID(60)
	_, err := p.Provision(context.Background(), pullSpec(id, ref, PullIfNotPresent))
	if err == nil {
		_ = p.Destroy(context.Background(), id)
		t.Fatal("Provision succeeded although no blob could be downloaded")
	}
	var streamErr *jsonstream.Error
	if !errors.As(err, &streamErr) || !errors.Is(err, errRegistryFailed) || !provider.IsRetryable(err) {
		t.Errorf("Provision = %v (%T), want the stream's error, retryable, saying the registry failed", err, err)
	}
}

func TestPullProgressLine(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pp := newPullProgress("example/app:1", start)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	msgs := []struct {
		at   int
		m    jsonstream.Message
		want string
	}{
		{0, jsonstream.Message{ID: "1", Status: "Pulling from example/app"}, ""},
		{10, jsonstream.Message{ID: "a", Status: "Pulling fs layer"}, ""},
		{10, jsonstream.Message{ID: "b", Status: "Pulling fs layer"}, ""},
		{10, jsonstream.Message{ID: "c", Status: "Already exists"}, ""},
		{500, jsonstream.Message{ID: "a", Status: "Downloading", Progress: &jsonstream.Progress{Current: 2_000_000, Total: 10_000_000}}, ""},
		{1000, jsonstream.Message{ID: "b", Status: "Waiting"}, "pulling image example/app:1: 2.0 of 10.0 MB (1 of 3 layers)"},
		{1500, jsonstream.Message{ID: "b", Status: "Downloading", Progress: &jsonstream.Progress{Current: 1_000_000, Total: 5_000_000}}, ""},
		{1900, jsonstream.Message{ID: "a", Status: "Download complete"}, ""},
		{2000, jsonstream.Message{ID: "a", Status: "Extracting", Progress: &jsonstream.Progress{Current: 1, Total: 30_000_000}}, "pulling image example/app:1: 11.0 of 15.0 MB (1 of 3 layers)"},
		{2100, jsonstream.Message{ID: "a", Status: "Pull complete"}, ""},
		{3100, jsonstream.Message{ID: "b", Status: "Pull complete"}, "pulling image example/app:1: 15.0 of 15.0 MB (3 of 3 layers)"},
		{3200, jsonstream.Message{Status: "Digest: sha256:0"}, ""},
	}
	for _, m := range msgs {
		got, ok := pp.observe(m.m, at(m.at))
		if ok != (m.want != "") || got != m.want {
			t.Errorf("at %dms after %s %q: report %q (%v), want %q", m.at, m.m.ID, m.m.Status, got, ok, m.want)
		}
	}
	if got, want := newPullProgress("x", start).line(), "pulling image x (0 of 0 layers)"; got != want {
		t.Errorf("line before any layer = %q, want %q", got, want)
	}
}
