package docker

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
)

// TestEndToEndDriftThroughServe: `docker network disconnect` and then
// `docker stop` on a ready tenant's container are reverted by `landlord
// serve` (the tenant records a drift_detected event, is ready again, and
// its reported endpoint accepts a connection), while a tenant whose
// compute_config says "drift": "observe" is left disconnected, with the
// drift recorded.
func TestEndToEndDriftThroughServe(t *testing.T) {
	cli, images, l, ctx := startServe(t)
	tenants := l.Client().Tenants()
	observed := observeConfig(t, echoConfig(images[0], "observed"))
	repairID := createReady(ctx, t, tenants, "e2e-drift-repair", echoConfig(images[0], "repaired"))
	observeID := createReady(ctx, t, tenants, "e2e-drift-observe", observed)

	// docker network disconnect, on both.
	for _, id := range []string{repairID, observeID} {
		app := tenantContainer(t, cli, id, "app")
		if _, err := cli.NetworkDisconnect(ctx, tenantNetwork(t, cli, id), client.NetworkDisconnectOptions{Container: app.ID}); err != nil {
			t.Fatalf("docker network disconnect: %v", err)
		}
	}
	start := time.Now()
	waitRepaired(ctx, t, cli, tenants, repairID, 1)
	t.Logf("docker network disconnect repaired through serve in %s", time.Since(start).Round(time.Millisecond))

	// The observed tenant has its drift recorded and is left as found.
	before := tenantContainer(t, cli, observeID, "app")
	waitServe(ctx, t, "a drift_detected event of the observed tenant", func() (bool, string) {
		return driftEvents(ctx, t, tenants, observeID) >= 1, "no drift_detected event"
	})
	tn, err := tenants.Get(ctx, observeID, llclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("observed tenant: %s: %s; endpoints %+v", tn.Status, tn.StatusMessage, tn.Endpoints)
	// Ready, with only endpoints that answer: a detached container has none.
	for _, e := range tn.Endpoints {
		if c, err := net.DialTimeout("tcp", e.Address, 2*time.Second); err != nil {
			t.Errorf("the observed tenant is %s with endpoint %s, which does not answer: %v", tn.Status, e.Address, err)
		} else {
			_ = c.Close()
		}
	}
	after := tenantContainer(t, cli, observeID, "app")
	if after.ID != before.ID || attached(t, cli, after.ID, tenantNetwork(t, cli, observeID)) {
		t.Errorf("the observed tenant's container was changed (%s → %s) or attached again", before.ID, after.ID)
	}

	// docker stop, on the repaired tenant.
	app := tenantContainer(t, cli, repairID, "app")
	secs := 1
	if _, err := cli.ContainerStop(ctx, app.ID, client.ContainerStopOptions{Timeout: &secs}); err != nil {
		t.Fatalf("docker stop: %v", err)
	}
	start = time.Now()
	waitRepaired(ctx, t, cli, tenants, repairID, 2)
	t.Logf("docker stop repaired through serve in %s", time.Since(start).Round(time.Millisecond))
}

// observeConfig adds "drift": "observe" to a compute_config.
func observeConfig(t *testing.T, config json.RawMessage) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(config, &m); err != nil {
		t.Fatal(err)
	}
	m["drift"] = "observe"
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// createReady creates a tenant and waits until it is ready.
func createReady(ctx context.Context, t *testing.T, tenants *llclient.Tenants, name string, config json.RawMessage) string {
	t.Helper()
	created, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: name, ComputeConfig: config}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if _, err := tenants.Wait(ctx, created.ID, llclient.UntilReady, nil); err != nil {
		t.Fatalf("wait %s ready: %v", name, err)
	}
	return created.ID
}

// waitRepaired waits until the tenant has at least events drift_detected
// events, is ready, its app container runs attached to its network, and
// the endpoint it reports for port 8080 accepts a connection.
func waitRepaired(ctx context.Context, t *testing.T, cli *client.Client, tenants *llclient.Tenants, id string, events int) {
	t.Helper()
	waitServe(ctx, t, "the controller to repair the tenant", func() (bool, string) {
		if n := driftEvents(ctx, t, tenants, id); n < events {
			return false, "no new drift_detected event"
		}
		tn, err := tenants.Get(ctx, id, llclient.GetOptions{})
		if err != nil || tn.Status != llclient.StatusReady {
			return false, "tenant not ready"
		}
		f := tenantFilter(id).Add("label", testPrefix+".container=app")
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil || len(cs.Items) != 1 {
			return false, "not one app container"
		}
		app := cs.Items[0]
		if app.State != "running" || !attached(t, cli, app.ID, tenantNetwork(t, cli, id)) {
			return false, "container " + string(app.State) + ", or not attached to the tenant's network"
		}
		i := slices.IndexFunc(tn.Endpoints, func(e llclient.Endpoint) bool { return e.ContainerPort == 8080 })
		if i < 0 {
			return false, "no endpoint for port 8080"
		}
		c, err := net.DialTimeout("tcp", tn.Endpoints[i].Address, 2*time.Second)
		if err != nil {
			return false, "endpoint " + tn.Endpoints[i].Address + " does not answer: " + err.Error()
		}
		_ = c.Close()
		return true, ""
	})
}

// driftEvents counts the tenant's drift_detected events.
func driftEvents(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string) int {
	t.Helper()
	n := 0
	for e, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatalf("events of %s: %v", id, err)
		}
		if e.Type == "drift_detected" {
			n++
		}
	}
	return n
}

// attached reports whether the container is attached to the network with
// id networkID.
func attached(t *testing.T, cli *client.Client, containerID, networkID string) bool {
	t.Helper()
	res, err := cli.ContainerInspect(context.Background(), containerID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("docker inspect: %v", err)
	}
	if res.Container.NetworkSettings == nil {
		return false
	}
	for _, ep := range res.Container.NetworkSettings.Networks {
		if ep != nil && ep.NetworkID == networkID {
			return true
		}
	}
	return false
}
