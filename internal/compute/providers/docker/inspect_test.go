package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// imageWithDefaults builds, from the echo image, one that sets everything
// the Engine copies into a container that does not set it (moby
// daemon/commit.go merge): environment, entrypoint and command, a health
// check, labels and exposed ports. It is removed when the test ends.
func imageWithDefaults(t *testing.T, cli *client.Client, from string) string {
	t.Helper()
	tag := from + "-defaults"
	dockerfile := "FROM " + from + "\n" +
		"ENV FROM_IMAGE=yes GREETING=image-default\n" +
		"LABEL example.label=1\n" +
		"EXPOSE 9999\n" +
		"CMD [\"ignored-by-echo\"]\n" +
		// Never run within a test: only its configuration matters here.
		"HEALTHCHECK --interval=1h --timeout=3s --retries=2 CMD [\"/echo\"]\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(dockerfile)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("docker build: %v", err)
	}
	out, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if bytes.Contains(out, []byte(`"error"`)) {
		t.Fatalf("docker build: %s", out)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true})
	})
	return tag
}

// waitInspect polls Inspect until the workload runs, and returns what it
// found then.
func waitInspect(t *testing.T, p *Provider, spec *provider.TenantComputeSpec) *provider.Inspection {
	t.Helper()
	var in *provider.Inspection
	eventually(t, "the workload to run", func() bool {
		var err error
		in, err = p.Inspect(context.Background(), spec)
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
		return in.Status.State == provider.StateRunning
	})
	return in
}

// What the Engine copies from the image into a container that does not set
// it is not drift: for each way a spec leaves something to the image, a
// workload as Provision left it shows none.
func TestInspectExpectsWhatTheImageSets(t *testing.T) {
	cli := dockertest.Engine(t)
	image := imageWithDefaults(t, cli, dockertest.EchoImage(t)[0])
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	for i, c := range []struct {
		name string
		edit func(*workload.ContainerSpec)
	}{
		{"nothing set", func(*workload.ContainerSpec) {}},
		{"command without args", func(c *workload.ContainerSpec) { c.Command = []string{"/echo"} }},
		{"args without command", func(c *workload.ContainerSpec) { c.Args = []string{"ignored"} }},
		{"an http probe beside the image's HEALTHCHECK", func(c *workload.ContainerSpec) {
			c.HealthCheck = &workload.HealthCheckConfig{HTTP: &workload.HTTPProbe{Path: "/healthz", Port: 8080}, Interval: time.Second}
		}},
		{"a command health check with fields left to the image", func(c *workload.ContainerSpec) {
			c.HealthCheck = &workload.HealthCheckConfig{Command: []string{"/echo", "check"}, Interval: time.Hour}
		}},
		{"env over the image's", func(c *workload.ContainerSpec) { c.Env = map[string]string{"GREETING": "spec"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := benchSpec(benchID(0x1a6e0+i), image)
			c.edit(&spec.Containers[0])
			if _, err := p.Provision(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
			if in := waitInspect(t, p, spec); len(in.Drift) != 0 {
				t.Errorf("a workload as Provision left it shows drift: %v", in.Drift)
			}
			res, err := p.Update(context.Background(), spec.TenantID, spec)
			if err != nil {
				t.Fatal(err)
			}
			if !res.NoChanges() {
				t.Errorf("Update with the provisioned spec made changes: %v", res.Changes)
			}
		})
	}
}

// A secret changed by hand is reported at its path with both values
// redacted, and neither value appears anywhere in the inspection; a
// variable added by hand is reported too; Update puts both back.
func TestInspectComparesSecretsWithoutRevealingThem(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	const secret, other = "s3cret-declared-0d1e", "s3cret-by-hand-7f2a"
	spec := benchSpec(benchID(0x5ec0), image)
	spec.Secrets = []workload.SecretReference{{Container: "app", Name: "API_KEY", Value: workload.NewSecretValue(secret)}}
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
	waitInspect(t, p, spec)

	recreate(t, cli, spec.TenantID, "app", func(cfg *container.Config) {
		cfg.Env = slices.DeleteFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, "API_KEY=") })
		cfg.Env = append(cfg.Env, "API_KEY="+other, "DEBUG=1")
	})
	in := waitInspect(t, p, spec)
	b, _ := json.Marshal(in)
	if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(other)) {
		t.Fatalf("the inspection reveals a secret value: %s", b)
	}
	want := []provider.Drift{
		{Path: "containers/app/env/DEBUG", Kind: provider.DriftEnv, Found: "1"},
		{Path: "containers/app/secrets/API_KEY", Kind: provider.DriftEnv, Expected: workload.RedactedValue, Found: workload.RedactedValue},
	}
	if !slices.Equal(in.Drift, want) {
		t.Errorf("drift = %v, want %v", in.Drift, want)
	}
	if _, err := p.Update(context.Background(), spec.TenantID, spec); err != nil {
		t.Fatal(err)
	}
	if in := waitInspect(t, p, spec); len(in.Drift) != 0 {
		t.Errorf("after Update the drift is %v, want none", in.Drift)
	}
}

// Inspect of a tenant with no container is ErrTenantNotFound, and a spec
// the provider refuses is refused.
func TestInspectUnknownTenant(t *testing.T) {
	dockertest.Engine(t)
	p := mustProvider(t, &providertest.LogBuffer{})
	_, err := p.Inspect(context.Background(), benchSpec(benchID(0x404), "example/unused:1"))
	if !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("Inspect of an unknown tenant = %v, want ErrTenantNotFound", err)
	}
	bad := benchSpec(benchID(0x405), "Not/An:Image:Ref")
	if _, err := p.Inspect(context.Background(), bad); !errors.Is(err, provider.ErrInvalidSpec) {
		t.Errorf("Inspect of an invalid spec = %v, want ErrInvalidSpec", err)
	}
}

// eventually polls cond until it holds, for at most 60 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, what, 60*time.Second, func() (bool, string) { return cond(), "" })
}
