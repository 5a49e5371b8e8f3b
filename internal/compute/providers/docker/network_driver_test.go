package docker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The networks the provider creates use the network_driver setting: a
// tenant's own network is created with it, and a driver the Engine does not
// have fails the provision with a terminal error that names the driver and
// the setting, and leaves nothing behind.
func TestNetworkDriver(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	ctx := context.Background()
	withDriver := func(t *testing.T, driver string) *Provider {
		t.Helper()
		block, err := json.Marshal(map[string]any{"label_prefix": testPrefix, "stop_timeout": "1s", "network_driver": driver, "address_pool": json.RawMessage(dockertest.AddressPool)})
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(ctx, Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}

	t.Run("a tenant's network has the configured driver", func(t *testing.T) {
		p := withDriver(t, "bridge")
		spec := benchSpec("d21fe000-0000-4000-8000-000000000001", image)
		t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
		if _, err := p.Provision(ctx, spec); err != nil {
			t.Fatalf("Provision: %v", err)
		}
		nets := tenantNetworks(t, cli, spec.TenantID)
		if len(nets) != 1 {
			t.Fatalf("the tenant has %d networks, want 1", len(nets))
		}
		nw, err := cli.NetworkInspect(ctx, nets[0], client.NetworkInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if nw.Network.Driver != "bridge" {
			t.Errorf("the tenant's network %s has driver %q, want bridge", nw.Network.Name, nw.Network.Driver)
		}
		for _, c := range tenantContainers(t, cli, spec.TenantID) {
			in, err := cli.ContainerInspect(ctx, c, client.ContainerInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ep := in.Container.NetworkSettings.Networks[nw.Network.Name]; ep == nil || ep.NetworkID != nets[0] {
				t.Errorf("container %s is on %+v, want the tenant's network %s", c, in.Container.NetworkSettings.Networks, nets[0])
			}
		}
	})

	t.Run("a driver the Engine lacks fails clearly", func(t *testing.T) {
		const driver = "landlord-no-such-driver"
		p := withDriver(t, driver)
		spec := benchSpec("d21fe000-0000-4000-8000-000000000002", image)
		t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
		// The Engine looks for a plugin of that name for 15 seconds.
		_, err := p.Provision(ctx, spec)
		if err == nil {
			t.Fatal("Provision succeeded with a network driver the Engine does not have")
		}
		if !errors.Is(err, provider.ErrProvisionFailed) || !provider.IsTerminal(err) {
			t.Errorf("Provision = %v; want a terminal error wrapping ErrProvisionFailed", err)
		}
		for _, want := range []string{`network driver "` + driver + `"`, "network_driver"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %s: %v", want, err)
			}
		}
		if cs, ns := tenantContainers(t, cli, spec.TenantID), tenantNetworks(t, cli, spec.TenantID); len(cs)+len(ns) != 0 {
			t.Errorf("a failed provision left containers %q and networks %q", cs, ns)
		}
	})
}

// TestDefaultBridgeNetwork: the seed configuration's network_name: bridge
// (the Engine's default bridge, which refuses network-scoped aliases) runs
// tenants, and Destroy leaves the network.
func TestDefaultBridgeNetwork(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	ctx := context.Background()
	p := sharedNetworkProvider(t, "bridge", "1s")
	spec := benchSpec("b41d0000-0000-4000-8000-0000000000b1", image)
	t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatalf("Provision on the default bridge: %v", err)
	}
	if err := p.Destroy(ctx, spec.TenantID); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if _, err := cli.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{}); err != nil {
		t.Errorf("the default bridge network after Destroy: %v", err)
	}
}

// An Engine whose address pools are all taken answers a network create with
// a 404, as it does for a driver it lacks; unlike that, it passes when
// networks are removed, so the provision is retried (not failed for good)
// and says what to do.
func TestNetworkPoolsExhausted(t *testing.T) {
	image := dockertest.EchoImage(t)[0]
	p := behindProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/networks/create") {
			return false
		}
		engineAnswers(w, http.StatusNotFound, "could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network")
		return true
	})
	spec := benchSpec("d21fe000-0000-4000-8000-000000000003", image)
	t.Cleanup(func() { _ = p.Destroy(context.Background(), spec.TenantID) })
	_, err := p.Provision(context.Background(), spec)
	if err == nil {
		t.Fatal("Provision succeeded with no address pool for its network")
	}
	if provider.IsTerminal(err) {
		t.Errorf("Provision = %v; want a retryable error: the pools free up when networks are removed", err)
	}
	for _, want := range []string{"no free address pool", "docker network prune"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

// A status read the Engine fails is a retryable read error, not a failed
// provision: it changed nothing (it read "provisioning failed" before,
// even after an update).
func TestStatusReadFails(t *testing.T) {
	p := behindProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/containers/json") {
			return false
		}
		engineAnswers(w, http.StatusInternalServerError, "the engine is busy")
		return true
	})
	_, err := p.GetStatus(context.Background(), "d21fe000-0000-4000-8000-000000000004")
	if err == nil || provider.IsTerminal(err) || errors.Is(err, provider.ErrProvisionFailed) || errors.Is(err, provider.ErrUpdateFailed) {
		t.Fatalf("GetStatus = %v; want a retryable error that is neither a failed provision nor a failed update", err)
	}
	if !strings.Contains(err.Error(), "status") || !strings.Contains(err.Error(), "the engine is busy") {
		t.Errorf("the error does not say it was a status read and why: %v", err)
	}
}

// behindProxy returns a provider whose Engine is the real one behind a
// proxy where intercept may answer a request itself (true) as an Engine in
// trouble would.
func behindProxy(t *testing.T, intercept func(w http.ResponseWriter, r *http.Request) bool) *Provider {
	t.Helper()
	return behindProxyWith(t, map[string]any{"label_prefix": testPrefix, "stop_timeout": "1s"}, intercept)
}

// behindProxyWith is behindProxy with the settings of block (its host
// aside).
func behindProxyWith(t *testing.T, block map[string]any, intercept func(w http.ResponseWriter, r *http.Request) bool) *Provider {
	t.Helper()
	engine := engineProxy(t)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			engine.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(proxy.Close)
	block = maps.Clone(block)
	block["host"] = "tcp://" + proxy.Listener.Addr().String()
	raw, err := json.Marshal(block)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), Options{Block: raw, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// engineProxy passes requests to the real Engine.
func engineProxy(t *testing.T) *httputil.ReverseProxy {
	t.Helper()
	daemon, err := url.Parse(dockertest.Engine(t).DaemonHost())
	if err != nil {
		t.Fatal(err)
	}
	network, address := "tcp", daemon.Host
	if daemon.Scheme == "unix" {
		network, address = "unix", daemon.Path
	}
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, address)
		}},
	}
}

// engineAnswers writes an Engine's error answer.
func engineAnswers(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}
