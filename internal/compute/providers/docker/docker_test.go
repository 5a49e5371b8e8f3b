package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// testBase starts the names of what the tests create on the Engine.
const testBase = "lltest"

// testPrefix is the label prefix of the tests' providers, lltest-<run id>:
// it keeps the tests' resources apart from a real landlord's and from those
// of other runs of these tests on the same Engine, so that each run's
// cleanup removes only its own (see dockertest.Prefix).
var testPrefix = dockertest.Prefix(testBase)

// testBlock is the tests' provider configuration. Their networks take
// subnets of the tests' own address pool, so that no test needs one of the
// Engine's default pools, which other programs may hold.
var testBlock = json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "2s", "address_pool": ` + dockertest.AddressPool + `}`)

// testHashKey is the install key of the tests' providers; a restarted
// provider gets the same one, as landlord keeps it in its database.
var testHashKey = []byte("landlord-test-hash-key-0123456789")

func mustProvider(t *testing.T, logs *providertest.LogBuffer) *Provider {
	t.Helper()
	p, err := New(context.Background(), Options{Block: testBlock, HashKey: testHashKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// sharedNetworkProvider is a Provider whose tenants all join the network
// name, with the test key and stop timeout stop; it is closed when tb ends.
func sharedNetworkProvider(tb testing.TB, name, stop string) *Provider {
	tb.Helper()
	block := json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "` + stop + `", "network_name": "` + name + `", "address_pool": ` + dockertest.AddressPool + `}`)
	p, err := New(context.Background(), Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// cleanupByLabel removes every container and network this run's tests
// created, even when they fail, and nothing of other runs.
func cleanupByLabel(t *testing.T, cli *client.Client) {
	t.Cleanup(func() { dockertest.RemoveManaged(cli, testPrefix) })
}

func tenantFilter(tenantID string) client.Filters {
	return client.Filters{}.Add("label", testPrefix+".tenant_id="+tenantID)
}

// TestConformance runs the conformance suite in both network modes: a
// network of each tenant's own (the default), and one network every tenant
// joins (network_name), which the provider creates.
func TestConformance(t *testing.T) {
	cli := dockertest.Engine(t)
	cleanupByLabel(t, cli)
	t.Run("network per tenant", func(t *testing.T) {
		logs := &providertest.LogBuffer{}
		newProvider := func(t *testing.T) provider.Provider { return mustProvider(t, logs) }
		conformance(t, cli, newProvider, logs, func(t *testing.T, tenantID string) string { return tenantNetwork(t, cli, tenantID) })
	})
	t.Run("shared network", func(t *testing.T) {
		shared := testPrefix + "-conformance-shared"
		t.Cleanup(func() { removeNetworkNamed(cli, shared) })
		block := json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "2s", "network_name": "` + shared + `", "address_pool": ` + dockertest.AddressPool + `}`)
		logs := &providertest.LogBuffer{}
		newProvider := func(t *testing.T) provider.Provider {
			p, err := New(context.Background(), Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { _ = p.Close() })
			return p
		}
		conformance(t, cli, newProvider, logs, func(t *testing.T, _ string) string {
			t.Helper()
			ids := networksNamed(t, cli, shared)
			if len(ids) != 1 {
				t.Fatalf("%d networks named %s, want 1", len(ids), shared)
			}
			return ids[0]
		})
	})
}

// conformance runs the suite on the providers newProvider makes, whose
// tenants' containers join the network tenantNet names.
func conformance(t *testing.T, cli *client.Client, newProvider func(t *testing.T) provider.Provider, logs *providertest.LogBuffer, tenantNet func(t *testing.T, tenantID string) string) {
	images := dockertest.EchoImage(t)
	providertest.Run(t, providertest.Harness{
		Provider: newProvider(t),
		Config: func(v int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{
				"image": %q,
				"env": {"GREETING": "variant-%d"},
				"ports": [{"name": "http", "container_port": 8080}],
				"health_check": {"http": {"path": "/healthz", "port": 8080}, "interval": "1s"},
				"resources": {"cpu_millicores": 250, "memory_mib": 64},
				"sidecars": [{"name": "side", "image": %q, "env": {"PORT": "9090"}}]
			}`, images[v%2], v, images[0]))
		},
		InvalidConfigs: []providertest.InvalidConfig{
			{Name: "privileged not allowed", Config: json.RawMessage(`{"image": "a", "privileged": true}`), Pointer: "/privileged"},
			{Name: "host network not allowed", Config: json.RawMessage(`{"image": "a", "host_network": true}`), Pointer: "/host_network"},
			{Name: "bind mounts not allowed", Config: json.RawMessage(`{"image": "a", "binds": ["/var/run/docker.sock:/var/run/docker.sock"]}`), Pointer: "/binds/0"},
			{Name: "bad image reference", Config: json.RawMessage(`{"image": "Not/An:Image:Ref"}`), Pointer: "/image"},
			{Name: "host port twice", Config: json.RawMessage(`{"image": "a", "ports": [{"container_port": 1, "host_port": 9000}, {"container_port": 2, "host_port": 9000}]}`), Pointer: "/ports/1/host_port"},
		},
		Disrupt: func(t *testing.T, tenantID string) {
			ctx := context.Background()
			cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: tenantFilter(tenantID)})
			if err != nil || len(cs.Items) == 0 {
				t.Fatalf("disrupt: list containers of %s: %v (%d found)", tenantID, err, len(cs.Items))
			}
			if _, err := cli.ContainerRemove(ctx, cs.Items[0].ID, client.ContainerRemoveOptions{Force: true}); err != nil {
				t.Fatalf("disrupt: docker rm -f: %v", err)
			}
		},
		CountResources: func(t *testing.T, tenantID string) int {
			ctx := context.Background()
			cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: tenantFilter(tenantID)})
			if err != nil {
				t.Fatalf("count containers: %v", err)
			}
			ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: tenantFilter(tenantID)})
			if err != nil {
				t.Fatalf("count networks: %v", err)
			}
			return len(cs.Items) + len(ns.Items)
		},
		Tampers:       tampers(cli, images[1], tenantNet),
		Restart:       newProvider,
		Logs:          logs.Bytes,
		DialEndpoints: true,
		ReadyTimeout:  60 * time.Second,
		Parallel:      10,
	})
}
