package release

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/demo"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// labelPrefix marks what the landlord in the image creates, for the
// clean-up.
const labelPrefix = "landlord-release-test"

// imageConfig is the landlord.yaml the image is run with: the Docker
// provider on the Engine whose socket is mounted, with this test's labels
// and a part of the tests' address pool of its own.
var imageConfig = `compute:
  docker:
    pull_policy: never
    label_prefix: ` + labelPrefix + `
    stop_timeout: 2s
    address_pool: ` + dockertest.AddressPoolOf("198.19.48.0/20") + `
controller:
  resync: 2s
  lease_ttl: 3s
`

// TestImageRunsAndRestores runs the release image on the Docker Engine as
// an operator would (its own user, a read-only root file system, the
// configuration mounted, the Engine's socket for the Docker provider), and
// proves it: /readyz answers a probe without a token, landlord provisions
// three tenants whose endpoints answer, `landlord backup` in the container
// copies its database while it runs; then, as on a new machine, a second
// container from the same image on a new volume holding only that copy
// adopts the running tenants: every one ready again, with the same
// containers, none created twice.
func TestImageRunsAndRestores(t *testing.T) {
	cli := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	runID := dockertest.RunID()
	t.Cleanup(func() { dockertest.RemoveManaged(cli, labelPrefix) })

	// The image, from a static binary as the release builds it.
	bin := filepath.Join(t.TempDir(), "landlord")
	m := Meta{Version: "v0.0.0-test", Commit: strings.Repeat("ab", 20), Date: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	o := Options{Meta: m, Source: moduleRoot(t), Go: "go"}
	if err := o.Build(ctx, "linux", runtime.GOARCH, bin); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Image(content, runtime.GOARCH, m)
	if err != nil {
		t.Fatal(err)
	}
	ref := "landlord-test/release:" + runID
	archive := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteDockerArchive(archive, img, ref); err != nil {
		t.Fatal(err)
	}
	docker(t, ctx, "load", "--quiet", "--input", archive)
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true}) })
	demoRef := "landlord-test/release-demo:" + runID
	if _, err := demo.Load(ctx, cli, demo.Options{Binary: bin, Ref: demoRef}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), demoRef, client.ImageRemoveOptions{Force: true}) })
	inspect := docker(t, ctx, "image", "inspect", "--format", "{{.Config.User}} {{index .Config.Labels \"org.opencontainers.image.version\"}} {{.Size}}", ref)
	if !strings.HasPrefix(inspect, "65532:65532 v0.0.0-test ") {
		t.Errorf("image: %s", inspect)
	}
	t.Logf("image %s: user, version and size: %s", ref, inspect)
	if out := docker(t, ctx, "run", "--rm", ref, "version"); !strings.HasPrefix(out, "landlord v0.0.0-test (commit abababababab, built 2026-12-01T00:00:00Z") {
		t.Errorf("landlord version in the image: %s", out)
	}

	first := startImage(t, ctx, ref, runID+"-a", newVolume(t, nil))
	tenants := first.Tenants()
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("shipped-%d", i)
		names = append(names, name)
		cfg := fmt.Sprintf(`{"image": %q, "args": [%q], "ports": [{"name": "http", "container_port": 8080}],
			"health_check": {"http": {"path": "/", "port": 8080}, "interval": "1s"}}`, demoRef, name)
		servetest.CreateTenant(ctx, t, tenants, name, json.RawMessage(cfg))
	}
	before := map[string]string{}
	for _, name := range names {
		tn, err := tenants.Wait(ctx, name, llclient.UntilReady, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page(t, ctx, tn, name)
		before[name] = containerOf(t, ctx, name)
	}
	out := docker(t, ctx, "exec", first.container, "/landlord", "backup", "/var/lib/landlord/backup.db")
	t.Logf("%s", out)
	if !strings.Contains(out, "3 tenants") {
		t.Errorf("backup: %s", out)
	}
	backup, err := os.ReadFile(filepath.Join(first.volume, "backup.db"))
	if err != nil {
		t.Fatal(err)
	}
	docker(t, ctx, "rm", "--force", first.container)

	// A new machine: a new volume with the backup as its database.
	second := startImage(t, ctx, ref, runID+"-b", newVolume(t, backup))
	restored := second.Tenants()
	for _, name := range names {
		tn, err := restored.Wait(ctx, name, llclient.UntilReady, nil)
		if err != nil {
			t.Fatalf("%s after the restore: %v", name, err)
		}
		page(t, ctx, tn, name)
		// The provider's live view, through the new landlord.
		live, err := restored.Status(ctx, name)
		if err != nil || live.State != "running" {
			t.Errorf("%s's workload seen by the restored landlord: %+v, %v", name, live, err)
		}
	}
	// It drives them as its own: a change replaces one container, a
	// delete removes the other's.
	if _, err := restored.Patch(ctx, names[1], json.RawMessage(`{"compute_config": {"args": ["changed"]}}`), llclient.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := restored.Delete(ctx, names[2], llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := restored.Wait(ctx, names[2], llclient.UntilDeleted, nil); err != nil {
		t.Fatalf("delete after the restore: %v", err)
	}
	changed, err := restored.Wait(ctx, names[1], func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < 2 {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil)
	if err != nil {
		t.Fatalf("change after the restore: %v", err)
	}
	page(t, ctx, changed, "changed")
	if after := containerOf(t, ctx, names[0]); after != before[names[0]] {
		t.Errorf("%s: container %s before the restore, %s after: the restore replaced it", names[0], before[names[0]], after)
	}
	if after := containerOf(t, ctx, names[1]); after == before[names[1]] {
		t.Errorf("%s: its change kept container %s", names[1], after)
	}
	all := docker(t, ctx, "ps", "--all", "--quiet", "--filter", "label="+labelPrefix+".managed-by=landlord")
	if n := len(strings.Fields(all)); n != 2 {
		t.Errorf("%d tenant containers after the restore, a change and a delete; want 2: %s", n, all)
	}
	for _, name := range names {
		for e, err := range restored.AllEvents(ctx, name, llclient.EventOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s %s %s→%s (generation %d) %s", name, e.Time.Format(time.RFC3339Nano), e.Type, e.From, e.To, e.Generation, e.Message)
		}
	}
}

// instance is landlord running from the image.
type instance struct {
	container, volume string
	client            *llclient.Client
}

func (i *instance) Tenants() *llclient.Tenants { return i.client.Tenants() }

// newVolume is a directory for the image's data volume, owned by its user,
// holding db as landlord.db when db is not nil.
func newVolume(t *testing.T, db []byte) string {
	dir := t.TempDir()
	if db != nil {
		if err := os.WriteFile(filepath.Join(dir, "landlord.db"), db, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, "landlord.db"), UID, GID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, UID, GID); err != nil {
		t.Skipf("the image's user must own its volume, and this test cannot chown: %v", err)
	}
	return dir
}

// startImage runs landlord from ref as name, with volume at DataDir, and
// waits for /readyz to answer a caller without a token.
func startImage(t *testing.T, ctx context.Context, ref, name, volume string) *instance {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "landlord.yaml")
	if err := os.WriteFile(cfg, []byte(imageConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := servetest.FreeAddr(t)
	const token = "release-test-admin-token"
	socket := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		socket = strings.TrimPrefix(h, "unix://")
	}
	fi, err := os.Stat(socket)
	if err != nil {
		t.Skipf("the Docker provider in the image needs the Engine's socket: %v", err)
	}
	// The image's user reaches the socket through its group.
	gid := fi.Sys().(*syscall.Stat_t).Gid
	// The host's network, so that the tenants' ports published on the
	// host's loopback answer landlord's probes as they would on the host.
	docker(t, ctx, "run", "--detach", "--name", name, "--network", "host",
		"--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--group-add", strconv.Itoa(int(gid)),
		"--volume", volume+":"+DataDir, "--volume", cfg+":/etc/landlord/landlord.yaml:ro",
		"--volume", socket+":/var/run/docker.sock",
		"--env", "LANDLORD_CONFIG=/etc/landlord/landlord.yaml", "--env", "LANDLORD_LISTEN="+addr,
		"--env", "LANDLORD_ADMIN_TOKEN="+token, ref)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := exec.Command("docker", "logs", "--tail", "60", name).CombinedOutput()
			t.Logf("logs of %s:\n%s", name, logs)
		}
		_ = exec.Command("docker", "rm", "--force", name).Run()
	})
	poll.Until(t, name+"'s /readyz answers a probe", 90*time.Second, func() (bool, string) {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == `{"status":"ok"}`, res.Status + " " + string(body)
	})
	c, err := llclient.New(llclient.Config{Address: "http://" + addr, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return &instance{container: name, volume: volume, client: c}
}

// page GETs the demo page at tn's endpoint and checks it names the tenant.
func page(t *testing.T, ctx context.Context, tn *llclient.Tenant, name string) {
	t.Helper()
	if len(tn.Endpoints) == 0 {
		t.Fatalf("%s is ready without an endpoint", name)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+tn.Endpoints[0].Address+"/", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s's endpoint: %v", name, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), name) {
		t.Errorf("%s's endpoint: %s %.200s", name, res.Status, body)
	}
}

// containerOf is the id of the one container landlord runs for tenant name.
func containerOf(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	ids := strings.Fields(docker(t, ctx, "ps", "--all", "--quiet", "--no-trunc", "--filter", "label="+labelPrefix+".managed-by=landlord", "--filter", "label="+labelPrefix+".tenant_name="+name))
	if len(ids) != 1 {
		t.Fatalf("%s has %d containers: %v", name, len(ids), ids)
	}
	return ids[0]
}

// docker runs the docker CLI and returns its trimmed output.
func docker(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// moduleRoot is the repository's root, two directories up.
func moduleRoot(t *testing.T) string {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
