package dockertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// AddressPoolBase is the range the networks of tests take their subnets
// from: 198.18.0.0/15, which RFC 2544 sets aside for benchmarking network
// devices, so no LAN or VPN of the host uses it.
const AddressPoolBase = "198.18.0.0/15"

// AddressPool is the docker provider's address_pool setting for tests, in
// JSON (and so YAML): networks of /24 from AddressPoolBase, instead of the
// Engine's default address pools, which other programs on the Engine (a
// quickstart's tenants, another project's compose networks) may have taken
// all of. Tests that create networks themselves give them a subnet of
// AddressPoolBase too.
const AddressPool = `{"base": "` + AddressPoolBase + `", "size": 24}`

// AddressPoolOf is an address_pool setting of /24 networks from base, a
// part of AddressPoolBase: packages whose tests run beside the docker
// provider's own (which take the lowest free /24 of AddressPoolBase) give
// their servers a part of their own, so that they do not race those tests
// for the same subnets.
func AddressPoolOf(base string) string { return `{"base": "` + base + `", "size": 24}` }

// EnvRequire names the variable that, set to 1, turns "no Docker Engine
// answers" skips into failures.
const EnvRequire = "LANDLORD_REQUIRE_DOCKER"

// Engine returns a client of the local Docker Engine (configured from the
// environment, DOCKER_HOST and so on), closed when tb ends. It skips tb when
// no Engine answers, and fails it instead when LANDLORD_REQUIRE_DOCKER=1.
func Engine(tb testing.TB) *client.Client {
	tb.Helper()
	cli, err := ping()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			tb.Fatalf("no Docker Engine answers and %s=1: %v", EnvRequire, err)
		}
		tb.Skipf("no Docker Engine answers (set %s=1 to fail instead): %v", EnvRequire, err)
	}
	tb.Cleanup(func() { _ = cli.Close() })
	return cli
}

// ping returns a client of the Engine once it has answered.
func ping() (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		_ = cli.Close()
		return nil, err
	}
	return cli, nil
}

// RemoveManaged removes every container (with its volumes) and network
// that landlord's Docker provider made under the label prefix, at the end
// of a test, whatever the test left.
func RemoveManaged(cli *client.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := client.Filters{}.Add("label", prefix+".managed-by=landlord")
	if cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}
	}
	if ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			_, _ = cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		}
	}
}
