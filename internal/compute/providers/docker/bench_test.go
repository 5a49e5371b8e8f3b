package docker

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// benchEngine returns the Engine and the echo image for benchmarks, which
// also need the docker CLI; it skips when no Engine answers (fails when
// LANDLORD_REQUIRE_DOCKER=1) and removes every managed container and
// network when the benchmark ends.
func benchEngine(b *testing.B) (*client.Client, string) {
	b.Helper()
	cli := dockertest.Engine(b)
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skipf("the docker CLI is needed to compare with docker run: %v", err)
	}
	image := dockertest.EchoImage(b)[0]
	b.Cleanup(func() { dockertest.RemoveManaged(cli, testPrefix) })
	return cli, image
}

func benchSpec(id, image string) *provider.TenantComputeSpec {
	return &provider.TenantComputeSpec{TenantID: id, TenantName: "bench", ProviderType: Name, Generation: 1,
		Workload: workload.Workload{Containers: []workload.ContainerSpec{{Name: "app", Image: image, Env: map[string]string{"GREETING": "bench"},
			Ports: []workload.PortMapping{{ContainerPort: 8080, Protocol: workload.ProtocolTCP}}}}}}
}

// provisionRunning provisions a tenant and waits until its workload runs.
func provisionRunning(ctx context.Context, p *Provider, id, image string) error {
	if _, err := p.Provision(ctx, benchSpec(id, image)); err != nil {
		return err
	}
	for {
		st, err := p.GetStatus(ctx, id)
		if err != nil {
			return err
		}
		if st.State == provider.StateRunning {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("tenant %s never ran: %s", id, st.State)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// benchID is a tenant id; resource names use its first 8 characters.
func benchID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-0000be7c0000", 0xbe700000+n) }

// BenchmarkProvisionVsDockerRun compares the provider's Provision→running and
// Destroy of one tenant with `docker run -d` and `docker rm -f` of the same
// image in the same run, and provisions 50 tenants in parallel.
func BenchmarkProvisionVsDockerRun(b *testing.B) {
	cli, image := benchEngine(b)
	p, err := New(context.Background(), Options{Block: testBlock, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	b.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()

	// With a network per tenant, as by default: compared with `docker run
	// -d` on the default bridge (the issue's baseline) and with what the
	// same isolation costs through the CLI, `docker network create` + `docker
	// run --network` and `docker rm -f` + `docker network rm`.
	b.Run("one-tenant", func(b *testing.B) { benchOneTenant(b, p, image, true) })

	// On an operator network that exists already, the Engine's network work
	// is out of the comparison: what remains is the provider's own.
	b.Run("one-tenant-shared-network", func(b *testing.B) {
		shared := testPrefix + "-bench-one-shared"
		p := sharedNetworkProvider(b, shared, "2s")
		b.Cleanup(func() { removeNetworkNamed(cli, shared) })
		if _, err := docker(ctx, "network", "create", shared); err != nil {
			b.Fatal(err)
		}
		benchOneTenant(b, p, image, false)
	})

	// 50 networks exceed the Engine's default address pools (about 30
	// bridge networks), so the 50 tenants share one network.
	b.Run("50-tenants-parallel", func(b *testing.B) {
		const tenants = 50
		shared := testPrefix + "-bench-shared"
		p := sharedNetworkProvider(b, shared, "2s")
		b.Cleanup(func() {
			dockertest.RemoveManaged(cli, testPrefix)
			removeNetworkNamed(cli, shared)
		})
		var prov, destroy time.Duration
		round := 0
		for b.Loop() {
			round++
			errs := make([]error, tenants)
			var wg sync.WaitGroup
			start := time.Now()
			for i := range tenants {
				wg.Go(func() { errs[i] = provisionRunning(ctx, p, benchID(round*1000+i), image) })
			}
			wg.Wait()
			prov += time.Since(start)
			for _, err := range errs {
				if err != nil {
					b.Fatalf("provision: %v", err)
				}
			}
			start = time.Now()
			for i := range tenants {
				wg.Go(func() { errs[i] = p.Destroy(ctx, benchID(round*1000+i)) })
			}
			wg.Wait()
			destroy += time.Since(start)
			for _, err := range errs {
				if err != nil {
					b.Fatalf("destroy: %v", err)
				}
			}
		}
		b.ReportMetric(float64(prov.Nanoseconds())/float64(round), "provision-50-ns/op")
		b.ReportMetric(float64(destroy.Nanoseconds())/float64(round), "destroy-50-ns/op")
		b.ReportMetric(float64(prov.Nanoseconds())/float64(round*tenants), "provision-ns/tenant")
	})
}

// benchOneTenant provisions (until running) and destroys one tenant per
// iteration, then does the same with the docker CLI, and reports both and
// their ratio. With ownNetwork it also times the CLI with a network per
// container, as the provider's default isolation needs.
func benchOneTenant(b *testing.B, p *Provider, image string, ownNetwork bool) {
	ctx := context.Background()
	var prov, destroy, run, rm, netRun, netRm time.Duration
	n := 0
	timed := func(total *time.Duration, args ...string) string {
		start := time.Now()
		out, err := docker(ctx, args...)
		if err != nil {
			b.Fatal(err)
		}
		*total += time.Since(start)
		return out
	}
	labels := []string{"--label", testPrefix + ".managed-by=landlord", "--label", testPrefix + ".tenant_id=docker-run-bench"}
	runArgs := append(append([]string{"run", "-d"}, labels...), "-e", "GREETING=bench", "-p", "127.0.0.1::8080")
	for b.Loop() {
		id := benchID(n)
		n++
		start := time.Now()
		if err := provisionRunning(ctx, p, id, image); err != nil {
			b.Fatalf("provision: %v", err)
		}
		prov += time.Since(start)
		start = time.Now()
		if err := p.Destroy(ctx, id); err != nil {
			b.Fatalf("destroy: %v", err)
		}
		destroy += time.Since(start)

		args := runArgs
		if !ownNetwork {
			args = append(append([]string{}, runArgs...), "--network", p.settings.NetworkName)
		}
		cid := timed(&run, append(args, image)...)
		timed(&rm, "rm", "-f", cid)

		if ownNetwork {
			net := fmt.Sprintf("%s-bench-cli-%d", testPrefix, n)
			timed(&netRun, append([]string{"network", "create"}, append(labels, net)...)...)
			cid := timed(&netRun, append(append([]string{}, runArgs...), "--network", net, image)...)
			timed(&netRm, "rm", "-f", cid)
			timed(&netRm, "network", "rm", net)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(prov), "provision-ns/op")
	b.ReportMetric(per(destroy), "destroy-ns/op")
	b.ReportMetric(per(prov+destroy), "landlord-ns/op")
	b.ReportMetric(per(run), "docker-run-ns/op")
	b.ReportMetric(per(rm), "docker-rm-ns/op")
	b.ReportMetric(per(run+rm), "docker-ns/op")
	b.ReportMetric(float64(prov)/float64(run), "provision/run-ratio")
	b.ReportMetric(float64(destroy)/float64(rm), "destroy/rm-ratio")
	b.ReportMetric(float64(prov+destroy)/float64(run+rm), "landlord/docker-ratio")
	if ownNetwork {
		b.ReportMetric(per(netRun), "docker-net+run-ns/op")
		b.ReportMetric(per(netRm), "docker-rm+net-rm-ns/op")
		b.ReportMetric(float64(prov)/float64(netRun), "provision/net+run-ratio")
		b.ReportMetric(float64(destroy)/float64(netRm), "destroy/rm+net-rm-ratio")
	}
}

// removeNetworkNamed removes every network named exactly name.
func removeNetworkNamed(cli *client.Client, name string) {
	ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: client.Filters{}.Add("name", name)})
	if err != nil {
		return
	}
	for _, n := range ns.Items {
		if n.Name == name {
			_, _ = cli.NetworkRemove(context.Background(), n.ID, client.NetworkRemoveOptions{})
		}
	}
}
