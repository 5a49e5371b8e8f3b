package controller_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// eventually waits for cond, as every wait of these tests does.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, 30*time.Second, cond)
}

// driftCounter is a ReconcileObserver that counts drift as the metrics do.
type driftCounter struct {
	mu    sync.Mutex
	kinds map[string]int
}

func (c *driftCounter) ObserveReconcile(string, time.Duration) {}

func (c *driftCounter) ObserveDrift(provider string, kind provider.DriftKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kinds == nil {
		c.kinds = map[string]int{}
	}
	c.kinds[provider+"/"+string(kind)]++
}

func (c *driftCounter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kinds[key]
}

const driftConfig = `{"image":"example.com/app:1","env":{"MODE":"prod"},"ports":[{"container_port":8080}]}`

// TestFieldDriftIsRepaired: a workload that still runs but differs from
// its declared state (an image and an environment value changed by hand)
// is found at the next resync, recorded (the tenant's drift, one event
// naming each path with the expected and found values, the metric) and
// put back.
func TestFieldDriftIsRepaired(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.Resync = 50 * time.Millisecond
	counter := &driftCounter{}
	opts.Observer = counter
	e.run(t, opts)
	tn := e.create(t, "acme", driftConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)

	if err := e.mock.Tamper(tn.ID, func(w *workload.Workload) {
		w.Containers[0].Image = "example.com/app:hacked"
		w.Containers[0].Env["MODE"] = "debug"
	}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, e, tn.ID, tenant.EventDrift)
	eventually(t, "the workload put back and the tenant ready", func() (bool, string) {
		got := e.get(t, tn.ID)
		in, err := e.mock.Inspect(ctx, e.spec(t, got))
		if err != nil {
			return false, err.Error()
		}
		return got.Status == tenant.StatusReady && len(in.Drift) == 0, string(got.Status) + " " + provider.Summarize(in.Drift)
	})
	got := e.get(t, tn.ID)
	want := []provider.Drift{
		{Path: "containers/app/env/MODE", Kind: provider.DriftEnv, Expected: "prod", Found: "debug"},
		{Path: "containers/app/image", Kind: provider.DriftImage, Expected: "example.com/app:1", Found: "example.com/app:hacked"},
	}
	if got.Drift == nil || got.Drift.Policy != provider.DriftRepair || !sameDrift(got.Drift.Differences, want) {
		t.Errorf("recorded drift = %+v, want %v repaired", got.Drift, want)
	}
	events := e.events(t, tn.ID, tenant.EventDrift)
	if len(events) != 1 || !strings.Contains(events[0].Message, "containers/app/image: expected example.com/app:1, found example.com/app:hacked") ||
		!strings.Contains(events[0].Message, "repairing") {
		t.Errorf("drift events = %+v, want one naming the image's path and values", events)
	}
	if counter.count("mock/image") != 1 || counter.count("mock/env") != 1 {
		t.Errorf("drift counted %v, want one image and one env", counter.kinds)
	}
	eventually(t, "the drift marked resolved", func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.Drift != nil && got.Drift.ResolvedAt != nil, fmt.Sprintf("%+v", got.Drift)
	})
	// The same change again, once resolved, is a drift of its own.
	if err := e.mock.Tamper(tn.ID, func(w *workload.Workload) { w.Containers[0].Image = "example.com/app:hacked" }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a second drift event for the change made again", func() (bool, string) {
		n := len(e.events(t, tn.ID, tenant.EventDrift))
		return n == 2, fmt.Sprint(n, " drift events")
	})
	var updating bool
	for _, ev := range e.events(t, tn.ID, tenant.EventStatus) {
		updating = updating || (ev.From == tenant.StatusReady && ev.To == tenant.StatusUpdating)
	}
	if !updating {
		t.Error("the repair of a running workload did not go through updating")
	}
}

// TestObservedDriftIsLeftAsFound: under "drift": "observe" a changed
// workload is reported once (however many resyncs see it) and left as it
// is; the tenant stays ready and says so; when the change is undone by
// hand the message goes; a workload that no longer runs fails the tenant
// instead of leaving it ready, and is not provisioned again.
func TestObservedDriftIsLeftAsFound(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.Resync = 20 * time.Millisecond
	e.run(t, opts)
	tn := e.create(t, "acme", `{"image":"example.com/app:1","drift":"observe","ports":[{"container_port":8080}]}`, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)
	updates := e.mock.Calls(tn.ID, mock.OpUpdate)

	hack := func(image string) {
		t.Helper()
		if err := e.mock.Tamper(tn.ID, func(w *workload.Workload) { w.Containers[0].Image = image }); err != nil {
			t.Fatal(err)
		}
	}
	hack("example.com/app:hacked")
	waitEvent(t, e, tn.ID, tenant.EventDrift)
	eventually(t, "the observed drift in the status message", func() (bool, string) {
		got := e.get(t, tn.ID)
		return strings.Contains(got.StatusMessage, "drift observed, not repaired") && strings.Contains(got.StatusMessage, "example.com/app:hacked"), got.StatusMessage
	})
	// Many resyncs later: still as found, still one event.
	resyncs := e.mock.Calls(tn.ID, mock.OpStatus)
	eventually(t, "ten more resyncs", func() (bool, string) { return e.mock.Calls(tn.ID, mock.OpStatus) > resyncs+10, "" })
	st, err := e.mock.GetStatus(ctx, tn.ID)
	if err != nil || st.Containers[0].Image != "example.com/app:hacked" {
		t.Fatalf("an observed workload was changed: %+v, %v", st, err)
	}
	if n := len(e.events(t, tn.ID, tenant.EventDrift)); n != 1 {
		t.Errorf("%d drift events for one drift seen many times, want 1", n)
	}
	if got := e.get(t, tn.ID); got.Status != tenant.StatusReady || got.Drift == nil || got.Drift.Policy != provider.DriftObserve {
		t.Errorf("tenant %s with drift %+v, want ready with the observed drift", got.Status, got.Drift)
	}
	if n := e.mock.Calls(tn.ID, mock.OpUpdate); n != updates {
		t.Errorf("%d updates of an observed tenant, want %d", n, updates)
	}

	hack("example.com/app:1") // undone by hand
	eventually(t, "the message gone once the drift is undone", func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.Status == tenant.StatusReady && got.StatusMessage == "", got.StatusMessage
	})

	// Made again once undone, the same change is news again.
	hack("example.com/app:hacked")
	eventually(t, "a second drift event for the change made again", func() (bool, string) {
		n := len(e.events(t, tn.ID, tenant.EventDrift))
		return n == 2, fmt.Sprint(n, " drift events")
	})
	hack("example.com/app:1")
	eventually(t, "the message gone again", func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.StatusMessage == "" && !got.Drift.Open(), got.StatusMessage
	})

	provisions := e.mock.Calls(tn.ID, mock.OpProvision)
	e.mock.Remove(tn.ID)
	eventually(t, "a gone workload failing an observed tenant", func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.Status == tenant.StatusFailed && len(got.Endpoints) == 0, string(got.Status) + ": " + got.StatusMessage
	})
	if got := e.get(t, tn.ID); !strings.Contains(got.StatusMessage, "not repaired (drift policy observe)") {
		t.Errorf("message %q does not say why nothing was repaired", got.StatusMessage)
	}
	if n := e.mock.Calls(tn.ID, mock.OpProvision); n != provisions {
		t.Errorf("an observed tenant's workload was provisioned again (%d calls, want %d)", n, provisions)
	}
}

// spec resolves the tenant's current desired state, as the controller does.
func (e *env) spec(t *testing.T, tn *tenant.Tenant) *provider.TenantComputeSpec {
	t.Helper()
	res, err := e.manager.Resolve(ctx, compute.ResolveRequest{TenantID: tn.ID, TenantName: tn.Name, Generation: tn.Generation,
		ComputeConfig: tn.ComputeConfig, Provider: tn.Provider})
	if err != nil {
		t.Fatal(err)
	}
	return res.Spec
}

func sameDrift(a, b []provider.Drift) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ controller.DriftObserver = (*driftCounter)(nil)

// TestUnrepairableDriftFailsTheTenant: a change something else puts back
// at once (another controller that owns the field) is not a tenant ready
// and repaired again at every check: each repair that leaves the drift is
// a failed attempt, and after the last the tenant fails, saying what
// still differs; later checks leave it failed.
func TestUnrepairableDriftFailsTheTenant(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	opts := fast()
	opts.Resync = 20 * time.Millisecond
	opts.MaxRetries = 2
	e.run(t, opts)
	tn := e.create(t, "acme", driftConfig, nil)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)

	if err := e.mock.Fight(tn.ID, func(w *workload.Workload) { w.Containers[0].Image = "example.com/app:theirs" }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the tenant failed", func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.Status == tenant.StatusFailed, string(got.Status) + ": " + got.StatusMessage
	})
	got := e.get(t, tn.ID)
	for _, want := range []string{"still differs from its spec after the repair", "containers/app/image: expected example.com/app:1, found example.com/app:theirs", "repair failed 3 times"} {
		if !strings.Contains(got.StatusMessage, want) {
			t.Errorf("message %q does not say %q", got.StatusMessage, want)
		}
	}
	if n := len(e.events(t, tn.ID, tenant.EventAttempt)); n != 3 {
		t.Errorf("%d failed attempts recorded, want 3 (the first and 2 retries)", n)
	}
	updates, checks := e.mock.Calls(tn.ID, mock.OpUpdate), e.mock.Calls(tn.ID, mock.OpStatus)
	eventually(t, "ten more checks", func() (bool, string) { return e.mock.Calls(tn.ID, mock.OpStatus) > checks+10, "" })
	if got := e.get(t, tn.ID); got.Status != tenant.StatusFailed {
		t.Errorf("a later check made the tenant %s", got.Status)
	}
	if n := e.mock.Calls(tn.ID, mock.OpUpdate); n != updates {
		t.Errorf("%d more updates of a failed tenant", n-updates)
	}
}
