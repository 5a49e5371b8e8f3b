package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// Tenants that share an operator-named network, provisioned in parallel,
// create it once: Docker would accept several networks of one name.
func TestSharedNetworkCreatedOnce(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	shared := testPrefix + "-shared-once"
	p := sharedNetworkProvider(t, shared, "1s")
	t.Cleanup(func() {
		cleanupByLabel(t, cli)
		removeNetworkNamed(cli, shared)
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = p.Provision(ctx, benchSpec(fmt.Sprintf("%08x-0000-4000-8000-000000000e70", 0x5e700000+i), image))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("tenant %d: %v", i, err)
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", shared)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, nw := range ns.Items {
		if nw.Name == shared {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d networks named %s after parallel provisions, want 1", n, shared)
	}
	for i := range errs {
		_ = p.Destroy(ctx, fmt.Sprintf("%08x-0000-4000-8000-000000000e70", 0x5e700000+i))
	}
}

// Two landlord processes on one Engine (two Providers with their own
// clients) creating the same network at once converge on one: each keeps the
// oldest and removes the duplicate it created, and containers join the
// survivor. Run for an operator-named network shared by tenants and for a
// tenant's own network.
func TestNetworkCreationConvergesAcrossProcesses(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	shared := testPrefix + "-shared-converge"
	block := json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "1s", "network_name": "` + shared + `", "address_pool": ` + dockertest.AddressPool + `}`)
	logs := &providertest.LogBuffer{}
	newProvider := func(block json.RawMessage) *Provider {
		p, err := New(context.Background(), Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	removeNamed := func(name string) {
		if ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: client.Filters{}.Add("name", name)}); err == nil {
			for _, n := range ns.Items {
				if n.Name == name {
					_, _ = cli.NetworkRemove(context.Background(), n.ID, client.NetworkRemoveOptions{})
				}
			}
		}
	}
	t.Cleanup(func() { removeNamed(shared) })
	cleanupByLabel(t, cli)
	ctx := context.Background()
	diverged := 0

	t.Run("shared network, tenants provisioned by both", func(t *testing.T) {
		a, b := newProvider(block), newProvider(block)
		for round := range 5 {
			removeNamed(shared)
			ids := [2]string{
				fmt.Sprintf("%08x-0000-4000-8000-00000000c0a0", 0xc0a00000+2*round),
				fmt.Sprintf("%08x-0000-4000-8000-00000000c0a0", 0xc0a00000+2*round+1),
			}
			var errs [2]error
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, p := range []*Provider{a, b} {
				wg.Go(func() {
					<-start
					_, errs[i] = p.Provision(ctx, benchSpec(ids[i], image))
				})
			}
			close(start)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("round %d, tenant %d: %v", round, i, err)
				}
			}
			if len(networksNamed(t, cli, shared)) != 1 {
				// Both saw only their own network: the next converge of
				// each tenant settles it.
				diverged++
				for i, p := range []*Provider{a, b} {
					if _, err := p.Provision(ctx, benchSpec(ids[i], image)); err != nil {
						t.Fatalf("round %d, tenant %d, again: %v", round, i, err)
					}
				}
				_, _ = a.Provision(ctx, benchSpec(ids[0], image))
			}
			nets := networksNamed(t, cli, shared)
			if len(nets) != 1 {
				t.Fatalf("round %d: %d networks named %s, want 1", round, len(nets), shared)
			}
			for _, id := range ids {
				for _, c := range tenantContainers(t, cli, id) {
					res, err := cli.ContainerInspect(ctx, c, client.ContainerInspectOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if ep := res.Container.NetworkSettings.Networks[shared]; ep == nil || ep.NetworkID != nets[0] {
						t.Errorf("round %d: container of %s is not attached to the surviving network %s: %+v", round, id, nets[0], res.Container.NetworkSettings.Networks)
					}
				}
				if err := a.Destroy(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	t.Run("a tenant's own network, created by both", func(t *testing.T) {
		a, b := newProvider(testBlock), newProvider(testBlock)
		for round := range 5 {
			spec := benchSpec(fmt.Sprintf("%08x-0000-4000-8000-00000000c0a1", 0xc0a10000+round), image)
			var ids [2]string
			var errs [2]error
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, p := range []*Provider{a, b} {
				wg.Go(func() {
					<-start
					var err error
					ids[i], _, err = p.ensureNetwork(ctx, p.plan(spec))
					errs[i] = err
				})
			}
			close(start)
			wg.Wait()
			name := a.naming(spec.TenantID, spec.TenantName).network()
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("round %d: %v", round, errs)
			}
			if ids[0] != ids[1] {
				// Both saw only their own network: the next call of each
				// settles it.
				diverged++
				for i, p := range []*Provider{a, b} {
					var err error
					if ids[i], _, err = p.ensureNetwork(ctx, p.plan(spec)); err != nil {
						t.Fatal(err)
					}
				}
			}
			nets := networksNamed(t, cli, name)
			if ids[0] != ids[1] || len(nets) != 1 || nets[0] != ids[0] {
				t.Errorf("round %d: the two processes got networks %q (errors %v); networks named %s: %q; want one, the same for both", round, ids, errs, name, nets)
			}
			removeNamed(name)
		}
	})
	t.Logf("duplicates removed: %d; rounds that needed a second converge: %d", strings.Count(logs.String(), "removed a duplicate network"), diverged)
}

// networksNamed lists the ids of the networks named exactly name.
func networksNamed(t *testing.T, cli *client.Client, name string) []string {
	t.Helper()
	ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: client.Filters{}.Add("name", name)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range ns.Items {
		if n.Name == name {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// When two processes each kept their own network (both saw only theirs),
// the next converge moves the containers on the losing network to the
// oldest, and the one after removes the emptied duplicate.
func TestContainersOnADuplicateNetworkMoveToTheOldest(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	shared := testPrefix + "-shared-heal"
	p := sharedNetworkProvider(t, shared, "1s")
	ctx := context.Background()
	labels := map[string]string{testPrefix + ".managed-by": "landlord"}
	var nets [2]string
	for i := range nets {
		nets[i] = createTestNetwork(t, cli, shared, labels)
	}
	cleanupByLabel(t, cli)

	// The tenant's container joined the newer network, as a process that
	// saw only that one would have done.
	spec := benchSpec("4ea10000-0000-4000-8000-0000000000a1", image)
	pl := p.plan(spec)
	pl.attach(nets[1])
	r := &run{p: p, pl: pl, log: p.log(spec.TenantID), sentinel: provider.ErrProvisionFailed, ids: map[string]string{}}
	if _, err := r.create(ctx, pl.containers[0]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })

	res, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	if len(res.ResourceIDs) != 1 || res.Message == "already provisioned" {
		t.Errorf("Provision = %+v, want the container replaced onto the oldest network", res)
	}
	for _, c := range tenantContainers(t, cli, spec.TenantID) {
		in, err := cli.ContainerInspect(ctx, c, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ep := in.Container.NetworkSettings.Networks[shared]; ep == nil || ep.NetworkID != nets[0] {
			t.Errorf("container %s is on %+v, want the oldest network %s", c, in.Container.NetworkSettings.Networks, nets[0])
		}
	}
	res, err = p.Provision(ctx, spec)
	if err != nil || res.Message != "already provisioned" {
		t.Errorf("second Provision = %+v, %v; want no change", res, err)
	}
	if got := networksNamed(t, cli, shared); len(got) != 1 || got[0] != nets[0] {
		t.Errorf("networks named %s: %q, want only the oldest %s", shared, got, nets[0])
	}
}

// createTestNetwork creates a bridge network as `docker network create`
// would, on a subnet of the tests' address pool (none of the Engine's
// default pools, which other programs may hold), and removes it when t
// ends. It returns its id.
func createTestNetwork(t *testing.T, cli *client.Client, name string, labels map[string]string) string {
	t.Helper()
	ctx := context.Background()
	base := netip.MustParsePrefix(dockertest.AddressPoolBase)
	for attempt := 0; ; attempt++ {
		res, err := cli.NetworkList(ctx, client.NetworkListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var used []netip.Prefix
		for _, n := range res.Items {
			for _, c := range n.IPAM.Config {
				used = append(used, c.Subnet)
			}
		}
		subnet, ok := freeSubnet(base, 24, used)
		if !ok {
			t.Fatalf("no free /24 in %s for a test network", base)
		}
		opts := client.NetworkCreateOptions{Driver: "bridge", Labels: labels}
		withSubnet(&opts, subnet)
		created, err := cli.NetworkCreate(ctx, name, opts)
		if isPoolOverlap(err) && attempt < 20 {
			time.Sleep(50 * time.Millisecond)
			continue // another run took it meanwhile
		}
		if err != nil {
			t.Fatalf("docker network create --subnet %s %s: %v", subnet, name, err)
		}
		t.Cleanup(func() { _, _ = cli.NetworkRemove(context.Background(), created.ID, client.NetworkRemoveOptions{}) })
		return created.ID
	}
}

// On a network every tenant shares, no container answers to its bare
// container name ("app"), which every tenant's app has: a sidecar that
// asks for "app" would reach another tenant's. A tenant's containers reach
// each other by their Docker names there; on a network of the tenant's
// own, by the container name too.
func TestSharedNetworkNamesNoContainerForEveryTenant(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	ctx := context.Background()
	shared := testPrefix + "-shared-names"
	t.Cleanup(func() { removeNetworkNamed(cli, shared) })
	sharedP := sharedNetworkProvider(t, shared, "1s")
	ownP := mustProvider(t, &providertest.LogBuffer{})
	for _, tt := range []struct {
		name string
		p    *Provider
		ids  []string
		want func(tenantID string) []string // the aliases of each tenant's app
	}{
		{"shared", sharedP, []string{"5a4e0001-0000-4000-8000-000000000000", "5a4e0002-0000-4000-8000-000000000000"}, func(string) []string { return nil }},
		{"own", ownP, []string{"5a4e0003-0000-4000-8000-000000000000"}, func(string) []string { return []string{"app"} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, id := range tt.ids {
				t.Cleanup(func() { _ = tt.p.Destroy(context.Background(), id) })
				if _, err := tt.p.Provision(ctx, benchSpec(id, image)); err != nil {
					t.Fatalf("Provision %s: %v", id, err)
				}
			}
			for _, id := range tt.ids {
				pl := tt.p.plan(benchSpec(id, image))
				in, err := cli.ContainerInspect(ctx, pl.n.container("app"), client.ContainerInspectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				ep := in.Container.NetworkSettings.Networks[pl.network]
				if ep == nil {
					t.Fatalf("tenant %s's app is not on %s: %+v", id, pl.network, in.Container.NetworkSettings.Networks)
				}
				// The Engine adds the short container id as an alias of its own.
				got := slices.DeleteFunc(slices.Clone(ep.Aliases), func(a string) bool { return strings.HasPrefix(in.Container.ID, a) })
				if !slices.Equal(got, tt.want(id)) {
					t.Errorf("tenant %s's app answers to %q on %s, want %q", id, got, pl.network, tt.want(id))
				}
				if d, err := tt.p.Inspect(ctx, benchSpec(id, image)); err != nil || len(d.Drift) > 0 {
					t.Errorf("Inspect of tenant %s = %v, %v; want no drift", id, d, err)
				}
			}
		})
	}
}
