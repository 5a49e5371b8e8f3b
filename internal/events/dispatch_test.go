package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// openStore opens a SQLite store in a test directory.
func openStore(t *testing.T) *sqlite.Store { return openStoreT(t) }

// openStoreT is openStore for a test or a benchmark.
func openStoreT(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rig is a store, a receiver and a dispatcher between them.
type rig struct {
	store    *sqlite.Store
	receiver *webhooktest.Receiver
	sub      *events.Subscription
	opts     events.Options
}

func newRig(t *testing.T, answer func(*webhooktest.Request) int) *rig {
	t.Helper()
	s := openStore(t)
	secret := events.NewSecret()
	rc := &webhooktest.Receiver{Secrets: []string{secret}, Answer: answer, Hang: 2 * time.Second}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	sub, err := s.CreateSubscription(t.Context(), &events.Subscription{ID: tenant.NewID(), Name: "hooks", URL: srv.URL, Enabled: true,
		Secrets: []events.Secret{{Value: secret, CreatedAt: time.Now()}}})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{store: s, receiver: rc, sub: sub, opts: events.Options{
		Store: s, Leases: s, Identity: "test", LeaseTTL: 5 * time.Second,
		Encoder: &events.Encoder{Source: "test", Tenant: func(t *tenant.Tenant) wire.Tenant {
			return wire.Tenant{ID: t.ID, Name: t.Name, Status: string(t.Status), Generation: t.Generation, Labels: t.Labels}
		}},
		Guard:   events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}),
		Timeout: time.Second, Initial: 5 * time.Millisecond, MaxWait: 20 * time.Millisecond, Horizon: time.Minute, Poll: 5 * time.Millisecond,
	}}
}

// run runs a dispatcher until the test ends.
func (r *rig) run(t *testing.T, opts events.Options) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { events.New(opts).Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// lifecycle creates a tenant and takes it to ready.
func lifecycle(t testing.TB, s tenant.Store, name string) *tenant.Tenant {
	t.Helper()
	ctx := t.Context()
	tn, err := s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"a"}`), Labels: map[string]string{"tier": "gold"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		if tn, err = s.UpdateObserved(ctx, tn.ID, tenant.Observation{Generation: 1, Status: st, Settles: st == tenant.StatusReady, Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// delivered counts the distinct events answered 2xx.
func delivered(reqs []webhooktest.Request) map[string]bool {
	ok := map[string]bool{}
	for _, r := range reqs {
		if r.Status >= 200 && r.Status < 300 {
			ok[r.ID] = true
		}
	}
	return ok
}

// TestDispatchInOrderDespiteFailures: the receiver fails every event's
// first attempt; each event is delivered, signed, and each tenant's in
// the order they were written, the next not sent before the one before
// is delivered.
func TestDispatchInOrderDespiteFailures(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	r := newRig(t, func(req *webhooktest.Request) int {
		mu.Lock()
		defer mu.Unlock()
		seen[req.ID]++
		if seen[req.ID] == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	const n = 20
	for i := range n {
		lifecycle(t, r.store, fmt.Sprintf("t%02d", i))
	}
	r.run(t, r.opts)
	waitFor(t, "every event delivered", func() bool { return len(delivered(r.receiver.Requests())) == 2*n })
	// The receiver answers before the dispatcher records it.
	waitFor(t, "every delivery recorded", func() bool {
		pending, _, err := r.store.DeliveryStats(t.Context())
		return err == nil && pending == 0
	})

	reqs := r.receiver.Requests()
	last := map[string]int64{}
	for _, q := range reqs {
		if q.VerifyError != nil {
			t.Errorf("event %s does not verify: %v", q.ID, q.VerifyError)
		}
		if q.Sequence < last[q.Subject] {
			t.Errorf("tenant %s: event %d after %d", q.Subject, q.Sequence, last[q.Subject])
		}
		last[q.Subject] = q.Sequence
	}
	byID := map[string][]byte{}
	for _, q := range reqs {
		if prev, ok := byID[q.ID]; ok && string(prev) != string(q.Body) {
			t.Errorf("event %s: two deliveries with different bodies", q.ID)
		}
		byID[q.ID] = q.Body
	}
	page, err := r.store.Deliveries(t.Context(), r.sub.ID, events.DeliveryListOptions{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range page.Deliveries {
		if d.State != events.Delivered || d.Tries != 2 || d.LastStatus != http.StatusNoContent {
			t.Errorf("delivery of %s: %s after %d attempts (last %d), want delivered after 2", d.EventID, d.State, d.Tries, d.LastStatus)
		}
	}
	d, log, err := r.store.Delivery(t.Context(), r.sub.ID, page.Deliveries[0].EventID)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Status != 500 || log[1].Status != 204 || log[0].Error == "" || d.State != events.Delivered {
		t.Errorf("attempt log %+v, want a 500 then a 204", log)
	}
}

// TestDispatchGivesUpAndDisables: a receiver that always fails gets every
// attempt of the schedule, then the delivery fails and the subscription
// is disabled with a reason; enabled again and redelivered, the events
// arrive.
func TestDispatchGivesUpAndDisables(t *testing.T) {
	var mu sync.Mutex
	failing := true
	r := newRig(t, func(*webhooktest.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	tn := lifecycle(t, r.store, "acme")
	opts := r.opts
	opts.Initial, opts.MaxWait, opts.Horizon = time.Millisecond, 2*time.Millisecond, 6*time.Millisecond
	r.run(t, opts)
	ctx := t.Context()
	var sub *events.Subscription
	waitFor(t, "the subscription disabled", func() bool {
		var err error
		sub, err = r.store.Subscription(ctx, "hooks")
		return err == nil && !sub.Enabled
	})
	if sub.DisabledReason == "" {
		t.Error("disabled without a reason")
	}
	t.Logf("disabled: %s", sub.DisabledReason)
	want := events.MaxAttempts(opts.Initial, opts.MaxWait, opts.Horizon)
	if got := len(r.receiver.Requests()); got != want {
		t.Errorf("%d attempts, want %d", got, want)
	}
	failed, err := r.store.Deliveries(ctx, sub.ID, events.DeliveryListOptions{State: events.Failed})
	if err != nil || len(failed.Deliveries) != 1 || failed.Deliveries[0].Subject != tn.ID {
		t.Fatalf("failed deliveries %+v, %v: want the tenant's first", failed, err)
	}
	// The tenant's second event waits, pending, while the subscription is disabled.
	pending, err := r.store.Deliveries(ctx, sub.ID, events.DeliveryListOptions{State: events.Pending})
	if err != nil || len(pending.Deliveries) != 1 {
		t.Fatalf("pending deliveries %+v, %v: want the tenant's second", pending, err)
	}

	mu.Lock()
	failing = false
	mu.Unlock()
	sub.Enabled, sub.DisabledReason = true, ""
	if _, err := r.store.UpdateSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if n, err := r.store.Redeliver(ctx, sub.ID, events.Redelivery{EventID: failed.Deliveries[0].EventID}); err != nil || n != 1 {
		t.Fatalf("redeliver: %d, %v", n, err)
	}
	waitFor(t, "both events delivered", func() bool { return len(delivered(r.receiver.Requests())) == 2 })
}

// TestDispatchFenced: a dispatcher whose lease another replica took makes
// no delivery; the new holder makes them.
func TestDispatchFenced(t *testing.T) {
	r := newRig(t, nil)
	lifecycle(t, r.store, "acme")
	if _, err := r.store.AcquireLease(t.Context(), events.LeaseName, "other", time.Hour); err != nil {
		t.Fatal(err)
	}
	r.run(t, r.opts)
	time.Sleep(200 * time.Millisecond)
	if n := len(r.receiver.Requests()); n != 0 {
		t.Fatalf("%d deliveries while another replica holds the lease", n)
	}
	other := r.opts
	other.Identity = "other"
	other.LeaseTTL = time.Hour
	r.run(t, other)
	waitFor(t, "the holder's deliveries", func() bool { return len(delivered(r.receiver.Requests())) == 2 })
}

// httpHandlerFunc answers 204 to every request, calling got first.
type httpHandlerFunc func()

func (f httpHandlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f()
	w.WriteHeader(http.StatusNoContent)
}
