package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestFreeSubnet(t *testing.T) {
	p := netip.MustParsePrefix
	for _, tt := range []struct {
		name string
		base string
		size int
		used []string
		want string // "" when none is free
	}{
		{"empty engine", "10.213.0.0/16", 24, nil, "10.213.0.0/24"},
		{"first taken", "10.213.0.0/16", 24, []string{"10.213.0.0/24"}, "10.213.1.0/24"},
		{"a wider network covers several", "10.213.0.0/16", 24, []string{"10.213.0.0/23", "10.213.3.0/24"}, "10.213.2.0/24"},
		{"a narrower one takes the whole candidate", "10.213.0.0/16", 24, []string{"10.213.0.128/25"}, "10.213.1.0/24"},
		{"networks elsewhere do not matter", "10.213.0.0/16", 24, []string{"172.17.0.0/16", "192.168.0.0/20"}, "10.213.0.0/24"},
		{"a network over the whole base", "10.213.0.0/16", 24, []string{"10.0.0.0/8"}, ""},
		{"full", "10.213.0.0/23", 24, []string{"10.213.0.0/24", "10.213.1.0/24"}, ""},
		{"size of the base", "10.213.4.0/24", 24, nil, "10.213.4.0/24"},
		{"last one", "10.213.0.0/22", 24, []string{"10.213.0.0/23", "10.213.2.0/24"}, "10.213.3.0/24"},
		{"near the top of the address space", "255.255.255.0/24", 26, []string{"255.255.255.0/25"}, "255.255.255.128/26"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var used []netip.Prefix
			for _, u := range tt.used {
				used = append(used, p(u))
			}
			got, ok := freeSubnet(p(tt.base), tt.size, used)
			switch {
			case tt.want == "" && ok:
				t.Errorf("freeSubnet = %s, want none free", got)
			case tt.want != "" && (!ok || got != p(tt.want)):
				t.Errorf("freeSubnet = %s (%v), want %s", got, ok, tt.want)
			}
		})
	}
}

// The address_pool setting is checked where it is, every problem at once.
func TestAddressPoolSettings(t *testing.T) {
	for _, tt := range []struct {
		name, pool string
		want       []string
	}{
		{"not an object", `"10.213.0.0/16"`, []string{"/address_pool", "must be an object"}},
		{"unknown key", `{"base": "10.213.0.0/16", "bits": 24}`, []string{"/address_pool", `unknown field "bits"`}},
		{"not a prefix", `{"base": "10.213.0.0"}`, []string{"/address_pool", "10.213.0.0"}},
		{"IPv6", `{"base": "fd00::/64"}`, []string{"/address_pool/base", "not an IPv4 prefix"}},
		{"host bits", `{"base": "10.213.7.0/16"}`, []string{"/address_pool/base", "10.213.0.0/16"}},
		{"size wider than the base", `{"base": "10.213.0.0/16", "size": 12}`, []string{"/address_pool/size", "12"}},
		{"size too narrow", `{"base": "10.213.0.0/16", "size": 30}`, []string{"/address_pool/size", "30"}},
		{"no base", `{"size": 24}`, []string{"/address_pool/base"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{Block: json.RawMessage(`{"address_pool": ` + tt.pool + `}`), HashKey: testHashKey})
			if !errors.Is(err, provider.ErrInvalidSpec) && !errors.Is(err, workload.ErrInvalid) {
				t.Fatalf("New = %v, want an invalid configuration", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %s: %v", want, err)
				}
			}
		})
	}
	p, err := New(context.Background(), Options{Block: json.RawMessage(`{"address_pool": {"base": "10.213.0.0/16"}}`), HashKey: testHashKey})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.settings.AddressPool.Size; got != DefaultAddressPoolSize {
		t.Errorf("the default size is %d, want %d", got, DefaultAddressPoolSize)
	}
}

// An Engine whose default address pools other programs took (a quickstart's
// tenants, say) refuses every network create that does not name its subnet.
// The tests' settings (dockertest.AddressPool) need none of those pools, in
// either network mode; without address_pool, the error says to set it.
func TestTestSettingsNeedNoEnginePool(t *testing.T) {
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, dockertest.Engine(t))
	var refused sync.Map // the networks refused, by name
	poolsTaken := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/networks/create") {
			return false
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req network.CreateRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Errorf("a network create the Engine cannot read: %v", err)
		}
		if req.IPAM != nil && len(req.IPAM.Config) > 0 && req.IPAM.Config[0].Subnet.IsValid() {
			return false
		}
		refused.Store(req.Name, true)
		engineAnswers(w, http.StatusNotFound, "could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network")
		return true
	}
	base := netip.MustParsePrefix(dockertest.AddressPoolBase)
	for _, tt := range []struct {
		name    string
		network string // network_name; "" for one per tenant
	}{
		{"network per tenant", ""},
		{"shared network", testPrefix + "-nopool-shared"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			block := map[string]any{"label_prefix": testPrefix, "stop_timeout": "1s", "address_pool": json.RawMessage(dockertest.AddressPool)}
			if tt.network != "" {
				block["network_name"] = tt.network
				t.Cleanup(func() { removeNetworkNamed(dockertest.Engine(t), tt.network) })
			}
			p := behindProxyWith(t, block, poolsTaken)
			spec := benchSpec(fmt.Sprintf("a001%04x-0000-4000-8000-000000000000", len(tt.network)), image)
			t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
			if _, err := p.Provision(context.Background(), spec); err != nil {
				t.Fatalf("Provision on an Engine without free pools: %v", err)
			}
			name := tt.network
			if name == "" {
				name = p.naming(spec.TenantID, spec.TenantName).network()
			}
			res, err := p.client.NetworkInspect(context.Background(), name, client.NetworkInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cfg := res.Network.IPAM.Config; len(cfg) != 1 || !base.Contains(cfg[0].Subnet.Addr()) || cfg[0].Subnet.Bits() != 24 {
				t.Errorf("network %s has subnets %+v, want one /24 of %s", name, cfg, base)
			}
		})
	}
	t.Run("without address_pool", func(t *testing.T) {
		p := behindProxyWith(t, map[string]any{"label_prefix": testPrefix, "stop_timeout": "1s"}, poolsTaken)
		spec := benchSpec("a001ffff-0000-4000-8000-000000000000", image)
		t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
		_, err := p.Provision(context.Background(), spec)
		if err == nil || provider.IsTerminal(err) {
			t.Fatalf("Provision = %v, want a retryable error", err)
		}
		for _, want := range []string{"no free address pool", "address_pool", "network_name", "docker network prune"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %s: %v", want, err)
			}
		}
	})
	if n := 0; func() bool { refused.Range(func(any, any) bool { n++; return true }); return n != 1 }() {
		t.Errorf("the Engine refused creates of %d networks, want 1 (the one without address_pool)", n)
	}
}

// Each network the provider creates takes a /size of address_pool that no
// network on the Engine uses, in this process or another at once; a pool
// with none left is a retryable error that names it, leaving nothing behind.
func TestAddressPool(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	ctx := context.Background()
	withPool := func(t *testing.T, pool string) *Provider {
		t.Helper()
		block := json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "1s", "address_pool": ` + pool + `}`)
		p, err := New(ctx, Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	subnetOf := func(t *testing.T, tenantID string) netip.Prefix {
		t.Helper()
		nets := tenantNetworks(t, cli, tenantID)
		if len(nets) != 1 {
			t.Fatalf("tenant %s has %d networks, want 1", tenantID, len(nets))
		}
		res, err := cli.NetworkInspect(ctx, nets[0], client.NetworkInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Network.IPAM.Config) != 1 {
			t.Fatalf("tenant %s's network has subnets %+v, want one", tenantID, res.Network.IPAM.Config)
		}
		return res.Network.IPAM.Config[0].Subnet
	}

	t.Run("two processes, tenants at once", func(t *testing.T) {
		a, b := withPool(t, dockertest.AddressPool), withPool(t, dockertest.AddressPool)
		const each = 6
		ids := make([]string, 2*each)
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i := range ids {
			ids[i] = fmt.Sprintf("a002%04x-0000-4000-8000-000000000000", i) // names take the first 8 characters
			p := a
			if i%2 == 1 {
				p = b
			}
			t.Cleanup(func() { _ = p.Destroy(context.Background(), ids[i]) })
			wg.Go(func() { _, errs[i] = p.Provision(ctx, benchSpec(ids[i], image)) })
		}
		wg.Wait()
		base := netip.MustParsePrefix(dockertest.AddressPoolBase)
		seen := map[netip.Prefix]string{}
		for i, id := range ids {
			if errs[i] != nil {
				t.Errorf("tenant %d: %v", i, errs[i])
				continue
			}
			s := subnetOf(t, id)
			if !base.Contains(s.Addr()) || s.Bits() != 24 {
				t.Errorf("tenant %s's network is on %s, want a /24 of %s", id, s, base)
			}
			if other, ok := seen[s]; ok {
				t.Errorf("tenants %s and %s share the subnet %s", other, id, s)
			}
			seen[s] = id
		}
	})

	t.Run("none left", func(t *testing.T) {
		// A pool of one /24, which a network made by hand holds.
		held := createTestNetwork(t, cli, testPrefix+"-pool-holder", nil)
		res, err := cli.NetworkInspect(ctx, held, client.NetworkInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		full := res.Network.IPAM.Config[0].Subnet
		p := withPool(t, `{"base": "`+full.String()+`", "size": 24}`)
		spec := benchSpec("a0030000-0000-4000-8000-000000000001", image)
		t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
		_, err = p.Provision(ctx, spec)
		if err == nil || provider.IsTerminal(err) || !errors.Is(err, provider.ErrProvisionFailed) {
			t.Fatalf("Provision = %v, want a retryable failed provision", err)
		}
		for _, want := range []string{"address_pool " + full.String(), "no /24 left", "docker network prune"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		}
		if cs, ns := tenantContainers(t, cli, spec.TenantID), tenantNetworks(t, cli, spec.TenantID); len(cs)+len(ns) != 0 {
			t.Errorf("a failed provision left containers %q and networks %q", cs, ns)
		}
	})
}
