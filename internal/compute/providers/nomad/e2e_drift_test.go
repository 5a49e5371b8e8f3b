package nomad_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEndDriftIsRepaired drives `landlord serve` against the real
// agent with the nomad CLI's changes behind its back, each through the
// agent's API as the CLI makes it, on a ready tenant: nomad job scale,
// nomad alloc stop (Nomad places the replacement on another port), nomad
// var purge, then nomad alloc stop again (the replacement renders the
// Variable landlord wrote back). The controller polls once an hour: what
// tells it is the provider's change watch. After each the tenant is ready
// again and every endpoint it reports is a running allocation's and
// accepts a connection; the scale and the purge are recorded as drift at
// their paths. It logs how long each repair took, and how long the tenant
// read ready with an endpoint nothing answered on.
func TestEndToEndDriftIsRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	a, images := start(t)
	l := startServe(t, a.Address, "workers: 2", "poll_interval: 1h", "resync: 1h", "lease_ttl: 2s")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()
	const job, secret = "landlord-e2e-drift", "k-drift"
	created := servetest.CreateTenant(ctx, t, tenants, "e2e-drift", appConfig(images[0], "hello", `"secrets": {"API_KEY": "`+secret+`"}`))
	if t.Failed() {
		t.FailNow()
	}
	id := created.ID
	w := &endpointWatch{a: a, job: job}
	tn := waitTenant(ctx, t, tenants, id, w.serving)

	// nomad job scale landlord-e2e-drift tenant 3
	seen := len(history(ctx, t, tenants, id))
	begin := time.Now()
	if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(3), "scaled by hand", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the count put back to 1", func() bool {
		j, _, err := a.Client.Jobs().Info(job, nil)
		return err == nil && *j.TaskGroups[0].Count == 1
	})
	reverted := time.Since(begin)
	tn = waitTenant(ctx, t, tenants, id, w.serving)
	t.Logf("nomad job scale 3: count put back %v after, tenant ready and answering %v after", reverted.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	driftRecorded(ctx, t, tenants, id, seen, "job/count")

	// nomad alloc stop: the endpoint follows the replacement.
	old := tn.Endpoints[0].Address
	begin = time.Now()
	w.reset()
	stopAlloc(t, a, job)
	tn = waitTenant(ctx, t, tenants, id, w.serving)
	t.Logf("nomad alloc stop: endpoint %s → %s, tenant ready and answering %v after; it read ready with a dead endpoint in %s",
		old, tn.Endpoints[0].Address, time.Since(begin).Round(time.Millisecond), w.dead())

	// nomad var purge: the Variable is written again.
	seen = len(history(ctx, t, tenants, id))
	begin = time.Now()
	if _, err := a.Client.Variables().Delete("nomad/jobs/"+job+"/tenant/app", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Variable written again", func() bool {
		v, _, err := a.Client.Variables().Peek("nomad/jobs/"+job+"/tenant/app", nil)
		return err == nil && v != nil
	})
	rewritten := time.Since(begin)
	tn = waitTenant(ctx, t, tenants, id, w.serving)
	t.Logf("nomad var purge: Variable written again %v after, tenant ready and answering %v after", rewritten.Round(time.Millisecond), time.Since(begin).Round(time.Millisecond))
	driftRecorded(ctx, t, tenants, id, seen, "variable/app")

	// A new allocation renders the Variable landlord wrote back.
	begin = time.Now()
	w.reset()
	stopAlloc(t, a, job)
	tn = waitTenant(ctx, t, tenants, id, w.serving)
	if env := endpointEnv(ctx, t, tn); env["API_KEY"] != secret || env["GREETING"] != "hello" {
		t.Errorf("the replacement's environment after the purge: API_KEY=%q GREETING=%q", env["API_KEY"], env["GREETING"])
	}
	t.Logf("nomad alloc stop after the purge: tenant ready and answering %v after; it read ready with a dead endpoint in %s",
		time.Since(begin).Round(time.Millisecond), w.dead())

	if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTenant(ctx, t, tenants, id, llclient.UntilDeleted)
	if n := countResources(t, a, id, job); n != 0 {
		t.Errorf("%d resources left after delete", n)
	}
}

// endpointWatch tells whether a tenant serves where it says, and keeps
// how long it read ready with an endpoint that did not answer.
type endpointWatch struct {
	a         *nomadtest.Agent
	job       string
	deadReads int
	deadFrom  time.Time
	deadUntil time.Time
}

func (w *endpointWatch) reset() { w.deadReads, w.deadFrom, w.deadUntil = 0, time.Time{}, time.Time{} }

// dead words how often, and for how long, the tenant read ready with an
// endpoint that did not answer.
func (w *endpointWatch) dead() string {
	return fmt.Sprintf("%d reads over %v", w.deadReads, w.deadUntil.Sub(w.deadFrom).Round(time.Millisecond))
}

// serving is a condition for Wait: the tenant is ready, and every
// endpoint it reports is a running allocation's and accepts a TCP
// connection.
func (w *endpointWatch) serving(tn llclient.Tenant) (bool, error) {
	if tn.Status != llclient.StatusReady || len(tn.Endpoints) == 0 {
		return false, nil
	}
	live := w.liveAddresses()
	ok := len(tn.Endpoints) == len(live)
	for _, e := range tn.Endpoints {
		c, err := net.DialTimeout("tcp", e.Address, 2*time.Second)
		if err != nil {
			now := time.Now()
			w.deadReads++
			if w.deadFrom.IsZero() {
				w.deadFrom = now
			}
			w.deadUntil = now
			return false, nil
		}
		_ = c.Close()
		ok = ok && slices.Contains(live, e.Address)
	}
	return ok, nil
}

// liveAddresses are the host addresses of the job's running allocations
// that Nomad wants running.
func (w *endpointWatch) liveAddresses() []string {
	allocs, _, err := w.a.Client.Jobs().Allocations(w.job, false, nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, stub := range allocs {
		if stub.DesiredStatus != api.AllocDesiredStatusRun || stub.ClientStatus != api.AllocClientStatusRunning {
			continue
		}
		al, _, err := w.a.Client.Allocations().Info(stub.ID, nil)
		if err != nil || al.AllocatedResources == nil {
			continue
		}
		for _, pm := range al.AllocatedResources.Shared.Ports {
			out = append(out, net.JoinHostPort(pm.HostIP, strconv.Itoa(pm.Value)))
		}
	}
	return out
}

// history is the tenant's events, oldest first.
func history(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string) []llclient.Event {
	t.Helper()
	var out []llclient.Event
	for ev, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// driftRecorded fails t unless the tenant's history, past its first seen
// events, has a drift event that names path.
func driftRecorded(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string, seen int, path string) {
	t.Helper()
	var drift []string
	for _, ev := range history(ctx, t, tenants, id)[seen:] {
		if ev.Type == "drift_detected" {
			if strings.Contains(ev.Message, path) {
				return
			}
			drift = append(drift, ev.Message)
		}
	}
	t.Errorf("no drift_detected event names %s since the change; drift events: %q", path, drift)
}
