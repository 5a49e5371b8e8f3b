package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// eventsLease is the lease the tests' dispatchers hold.
const eventsLease = "events"

// mustFence takes the events lease for holder and returns its fence.
func mustFence(t *testing.T, s tenant.Store, holder string) events.Fence {
	t.Helper()
	l, err := leases(t, s).AcquireLease(ctx, eventsLease, holder, time.Minute)
	if err != nil {
		t.Fatalf("AcquireLease(%s, %s): %v", eventsLease, holder, err)
	}
	return events.Fence{Lease: l.Name, Holder: l.Holder, Epoch: l.Epoch}
}

// mustSubscribe creates subscription name (id "sub_" + name), enabled,
// with one secret, after edit changes it.
func mustSubscribe(t *testing.T, es events.Store, name string, edit func(*events.Subscription)) *events.Subscription {
	t.Helper()
	in := &events.Subscription{ID: "sub_" + name, Name: name, URL: "https://hooks.example.com/" + name, Enabled: true,
		Secrets: []events.Secret{{Value: "whsec_c2VjcmV0", CreatedAt: tenant.Timestamp(time.Now())}}, CreatedBy: "alice"}
	if edit != nil {
		edit(in)
	}
	out, err := es.CreateSubscription(ctx, in)
	if err != nil {
		t.Fatalf("CreateSubscription(%s): %v", name, err)
	}
	return out
}

func mustSubscription(t *testing.T, es events.Store, idOrName string) *events.Subscription {
	t.Helper()
	sub, err := es.Subscription(ctx, idOrName)
	if err != nil {
		t.Fatalf("Subscription(%s): %v", idOrName, err)
	}
	return sub
}

// mustFanOut does what the dispatcher does for subscription id: it reads
// the outbox after the subscription's cursor and fans out the events that
// pass its filters, moving its cursor to the last read. It returns the
// events fanned out.
func mustFanOut(t *testing.T, es events.Store, fence events.Fence, id string) []events.Record {
	t.Helper()
	sub := mustSubscription(t, es, id)
	recs := mustOutbox(t, es, sub.Cursor)
	if len(recs) == 0 {
		return nil
	}
	var (
		ds  []events.NewDelivery
		out []events.Record
	)
	for _, r := range recs {
		if sub.Matches(&r) {
			ds = append(ds, events.NewDelivery{Position: r.Position, EventID: r.ID, Key: r.Key})
			out = append(out, r)
		}
	}
	if err := es.FanOut(ctx, fence, id, sub.Cursor, recs[len(recs)-1].Position, ds); err != nil {
		t.Fatalf("FanOut to %s: %v", id, err)
	}
	return out
}

// mustAttempt records an attempt at subscription sub's delivery of r that
// leaves it in state: answered 200 when delivered, else 500 and due again
// in an hour.
func mustAttempt(t *testing.T, es events.Store, fence events.Fence, sub string, r events.Record, state events.DeliveryState, disable string) (events.Attempt, events.DeliveryUpdate) {
	t.Helper()
	a := events.Attempt{Subscription: sub, Position: r.Position, Time: time.Now(), Status: 200, Latency: 1234 * time.Microsecond, Response: "ok"}
	next := events.DeliveryUpdate{State: state, NextAttemptAt: time.Now()}
	if state != events.Delivered {
		a.Status, a.Error, a.Response = 500, "HTTP 500", "oops"
		next.NextAttemptAt = time.Now().Add(time.Hour)
	}
	if err := es.RecordAttempt(ctx, fence, a, next, disable); err != nil {
		t.Fatalf("RecordAttempt(%s, %s → %s): %v", sub, r.ID, state, err)
	}
	return a, next
}

func mustDelivery(t *testing.T, es events.Store, sub, eventID string) (*events.Delivery, []events.Attempt) {
	t.Helper()
	d, attempts, err := es.Delivery(ctx, sub, eventID)
	if err != nil {
		t.Fatalf("Delivery(%s, %s): %v", sub, eventID, err)
	}
	return d, attempts
}

// deliveryKeys names deliveries by subscription and position, sorted.
func deliveryKeys(ds []events.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s@%d", d.Subscription, d.Position)
	}
	slices.Sort(out)
	return out
}

func keysOf(sub string, recs ...events.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s@%d", sub, r.Position)
	}
	return out
}

// testSubscriptions: subscriptions are created at version 1 with the
// outbox's head as cursor, read by id or name, listed by name, updated
// optimistically and deleted; names are unique.
func testSubscriptions(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	mustCreate(t, s, newTenant("before"))
	mustSequence(t, es)
	head := mustHead(t, es)
	now := tenant.Timestamp(time.Now())
	expires := now.Add(24 * time.Hour)
	in := &events.Subscription{ID: "sub_1", Name: "billing", URL: "https://billing.example.com/hook",
		Types: []events.Type{events.TenantReady, events.TenantDeleted}, Labels: map[string]string{"tier": "gold"},
		Secrets:     []events.Secret{{Value: "whsec_bmV3", CreatedAt: now}, {Value: "whsec_b2xk", CreatedAt: now.Add(-time.Hour), ExpiresAt: &expires}},
		Description: "the billing system", Enabled: true, CreatedBy: "alice"}
	created, err := es.CreateSubscription(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := *in
	want.Version, want.Cursor, want.CreatedAt, want.UpdatedAt = 1, head, created.CreatedAt, created.CreatedAt
	if diff := cmp.Diff(&want, created); diff != "" || created.CreatedAt.IsZero() {
		t.Errorf("CreateSubscription (-want +got):\n%s", diff)
	}
	for _, key := range []string{"sub_1", "billing"} {
		if diff := cmp.Diff(created, mustSubscription(t, es, key), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Subscription(%s) (-created +got):\n%s", key, diff)
		}
	}
	mustSubscribe(t, es, "alerts", nil)
	_, err = es.CreateSubscription(ctx, &events.Subscription{ID: "sub_2", Name: "billing", URL: "https://x.example.com/"})
	wantErr(t, "CreateSubscription of a name taken", err, events.ErrConflict)
	list, err := es.Subscriptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "alerts" || list[1].Name != "billing" {
		t.Errorf("Subscriptions = %+v, want alerts, billing", list)
	}

	change := *created
	change.URL, change.Types, change.Labels, change.Secrets = "https://billing.example.com/v2", nil, nil, created.Secrets[:1]
	change.Enabled, change.DisabledReason, change.Description = false, "paused by alice", ""
	updated, err := es.UpdateSubscription(ctx, &change)
	if err != nil {
		t.Fatal(err)
	}
	want = change
	want.Version, want.UpdatedAt = 2, updated.UpdatedAt
	if diff := cmp.Diff(&want, updated, cmpopts.EquateEmpty()); diff != "" || updated.UpdatedAt.Before(created.UpdatedAt) {
		t.Errorf("UpdateSubscription (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(updated, mustSubscription(t, es, "sub_1"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Subscription after the update (-updated +got):\n%s", diff)
	}
	_, err = es.UpdateSubscription(ctx, created)
	wantErr(t, "UpdateSubscription at a stale version", err, events.ErrConflict)
	rename := *updated
	rename.Name = "alerts"
	_, err = es.UpdateSubscription(ctx, &rename)
	wantErr(t, "UpdateSubscription to a name taken", err, events.ErrConflict)
	_, err = es.UpdateSubscription(ctx, &events.Subscription{ID: "sub_nope", Name: "nope", Version: 1})
	wantErr(t, "UpdateSubscription of an unknown subscription", err, events.ErrNotFound)
	if got := mustSubscription(t, es, "sub_1"); got.Version != 2 || got.Name != "billing" {
		t.Errorf("refused updates wrote version %d, name %s", got.Version, got.Name)
	}

	if err := es.DeleteSubscription(ctx, "sub_1"); err != nil {
		t.Fatal(err)
	}
	_, err = es.Subscription(ctx, "billing")
	wantErr(t, "Subscription after its deletion", err, events.ErrNotFound)
	wantErr(t, "DeleteSubscription again", es.DeleteSubscription(ctx, "sub_1"), events.ErrNotFound)
	if list, err := es.Subscriptions(ctx); err != nil || len(list) != 1 || list[0].Name != "alerts" {
		t.Errorf("Subscriptions after the deletion = %v, %v", list, err)
	}
}

// testFanOut: FanOut records deliveries and moves the cursor under the
// events lease: a fence not held is ErrFenced and writes nothing, a cursor
// moved ErrConflict.
func testFanOut(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	first := mustFence(t, s, "dispatcher-a")
	sub := mustSubscribe(t, es, "hooks", nil)
	c := mustCreate(t, s, newTenant("acme"))
	recs := mustOutbox(t, es, sub.Cursor)
	if len(recs) != 1 {
		t.Fatalf("records %v, want 1", recordTypes(recs))
	}
	r := recs[0]
	ds := []events.NewDelivery{{Position: r.Position, EventID: r.ID, Key: r.Key}}
	for _, bad := range []events.Fence{
		{Lease: "never-held", Holder: first.Holder, Epoch: first.Epoch},
		{Lease: first.Lease, Holder: "dispatcher-b", Epoch: first.Epoch},
		{Lease: first.Lease, Holder: first.Holder, Epoch: first.Epoch + 1},
	} {
		err := es.FanOut(ctx, bad, sub.ID, sub.Cursor, r.Position, ds)
		wantErr(t, fmt.Sprintf("FanOut under %+v", bad), err, events.ErrFenced)
	}
	if got := mustSubscription(t, es, sub.ID); got.Cursor != sub.Cursor {
		t.Errorf("a fenced FanOut moved the cursor to %d", got.Cursor)
	}
	_, _, err := es.Delivery(ctx, sub.ID, r.ID)
	wantErr(t, "Delivery after a fenced FanOut", err, events.ErrNotFound)

	before := tenant.Timestamp(time.Now())
	if err := es.FanOut(ctx, first, sub.ID, sub.Cursor, r.Position, ds); err != nil {
		t.Fatal(err)
	}
	if got := mustSubscription(t, es, sub.ID); got.Cursor != r.Position || got.Version != sub.Version {
		t.Errorf("after FanOut: cursor %d, version %d; want %d, %d", got.Cursor, got.Version, r.Position, sub.Version)
	}
	d, attempts := mustDelivery(t, es, sub.ID, r.ID)
	if d.Subscription != sub.ID || d.Position != r.Position || d.EventID != r.ID || d.Type != events.TenantCreated || d.Subject != c.ID || d.Key != c.ID ||
		d.State != events.Pending || d.Attempts != 0 || d.Tries != 0 || d.NextAttemptAt.Before(before) || d.CreatedAt.IsZero() || len(attempts) != 0 {
		t.Errorf("delivery after FanOut = %+v, attempts %v", d, attempts)
	}
	err = es.FanOut(ctx, first, sub.ID, sub.Cursor, r.Position, ds)
	wantErr(t, "FanOut from a cursor that moved", err, events.ErrConflict)
	err = es.FanOut(ctx, first, "sub_nope", 0, r.Position, nil)
	wantErr(t, "FanOut to an unknown subscription", err, events.ErrConflict)

	// The lease changes hands: the former holder is fenced, in FanOut and
	// in RecordAttempt.
	if err := leases(t, s).ReleaseLease(ctx, eventsLease, first.Holder, first.Epoch); err != nil {
		t.Fatal(err)
	}
	second := mustFence(t, s, "dispatcher-b")
	if second.Epoch != first.Epoch+1 {
		t.Fatalf("the lease changed hands at epoch %d, want %d", second.Epoch, first.Epoch+1)
	}
	mustCreate(t, s, newTenant("other"))
	more := mustOutbox(t, es, r.Position)
	next := []events.NewDelivery{{Position: more[0].Position, EventID: more[0].ID, Key: more[0].Key}}
	err = es.FanOut(ctx, first, sub.ID, r.Position, more[0].Position, next)
	wantErr(t, "FanOut by the former holder", err, events.ErrFenced)
	err = es.RecordAttempt(ctx, first, events.Attempt{Subscription: sub.ID, Position: r.Position, Time: time.Now(), Status: 200},
		events.DeliveryUpdate{State: events.Delivered, NextAttemptAt: time.Now()}, "")
	wantErr(t, "RecordAttempt by the former holder", err, events.ErrFenced)
	if d, attempts := mustDelivery(t, es, sub.ID, r.ID); d.State != events.Pending || len(attempts) != 0 {
		t.Errorf("a fenced RecordAttempt wrote %+v, %v", d, attempts)
	}
	if err := es.FanOut(ctx, second, sub.ID, r.Position, more[0].Position, next); err != nil {
		t.Errorf("FanOut by the new holder: %v", err)
	}
}

// testDueDeliveries: due are the pending deliveries of enabled
// subscriptions that are due and first of their key, less the busy keys.
func testDueDeliveries(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	fence := mustFence(t, s, "dispatcher-a")
	a := mustSubscribe(t, es, "a", nil)
	b := mustSubscribe(t, es, "b", nil)
	one := mustCreate(t, s, newTenant("one"))
	if _, err := s.UpdateDesired(ctx, one.ID, tenant.DesiredChange{Version: one.Version, ComputeConfig: one.ComputeConfig, Labels: map[string]string{"x": "y"}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, newTenant("two"))
	recs := mustFanOut(t, es, fence, a.ID)
	if len(recs) != 3 || len(mustFanOut(t, es, fence, b.ID)) != 3 {
		t.Fatalf("fanned out %v, want one's created and changed and two's created", recordTypes(recs))
	}
	created1, changed1, created2 := recs[0], recs[1], recs[2]
	due := func(now time.Time, limit int, busy map[string]bool) []string {
		t.Helper()
		ds, err := es.DueDeliveries(ctx, now, limit, busy)
		if err != nil {
			t.Fatalf("DueDeliveries: %v", err)
		}
		if len(ds) > limit {
			t.Errorf("DueDeliveries(limit %d) returned %d", limit, len(ds))
		}
		return deliveryKeys(ds)
	}
	check := func(what string, got []string, want ...[]string) {
		t.Helper()
		w := slices.Concat(want...)
		slices.Sort(w)
		if diff := cmp.Diff(w, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	now := time.Now()
	check("DueDeliveries", due(now, 100, nil), keysOf(a.ID, created1, created2), keysOf(b.ID, created1, created2))
	check("DueDeliveries with a busy key", due(now, 100, map[string]bool{a.ID + "\x00" + one.ID: true}),
		keysOf(a.ID, created2), keysOf(b.ID, created1, created2))
	if got := due(now, 1, nil); len(got) != 1 {
		t.Errorf("DueDeliveries(limit 1) = %v", got)
	}
	if got := due(now, 3, map[string]bool{a.ID + "\x00" + one.ID: true, b.ID + "\x00" + one.ID: true}); len(got) != 2 {
		t.Errorf("DueDeliveries(limit 3, two keys busy) = %v, want the other two", got)
	}
	if got := due(now.Add(-time.Hour), 100, nil); len(got) != 0 {
		t.Errorf("DueDeliveries an hour ago = %v, want none", got)
	}

	// A disabled subscription's deliveries wait.
	off := *b
	off.Enabled = false
	if _, err := es.UpdateSubscription(ctx, &off); err != nil {
		t.Fatal(err)
	}
	check("DueDeliveries with b disabled", due(now, 100, nil), keysOf(a.ID, created1, created2))
	// A failed attempt makes a delivery due later.
	mustAttempt(t, es, fence, a.ID, created2, events.Pending, "")
	check("DueDeliveries after a failed attempt", due(time.Now(), 100, nil), keysOf(a.ID, created1))
	check("DueDeliveries two hours later", due(time.Now().Add(2*time.Hour), 100, nil), keysOf(a.ID, created1, created2))
	// Delivered, the key's next is due.
	mustAttempt(t, es, fence, a.ID, created1, events.Delivered, "")
	check("DueDeliveries after a delivery", due(time.Now(), 100, nil), keysOf(a.ID, changed1))
}

// testRecordAttempt: an attempt updates its delivery and is logged; one
// that disables the subscription disables it in the same write.
func testRecordAttempt(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	fence := mustFence(t, s, "dispatcher-a")
	sub := mustSubscribe(t, es, "hooks", nil)
	c := mustCreate(t, s, newTenant("acme"))
	mustObserve(t, s, c, tenant.StatusProvisioning)
	if _, err := s.RequestDeletion(ctx, c.ID, 0, "alice"); err != nil {
		t.Fatal(err)
	}
	recs := mustFanOut(t, es, fence, sub.ID)
	if len(recs) != 2 {
		t.Fatalf("fanned out %v, want created and deletion_requested", recordTypes(recs))
	}
	r := recs[0]

	failed, next := mustAttempt(t, es, fence, sub.ID, r, events.Pending, "")
	d, attempts := mustDelivery(t, es, sub.ID, r.ID)
	if d.State != events.Pending || d.Attempts != 1 || d.Tries != 1 || !d.NextAttemptAt.Equal(tenant.Timestamp(next.NextAttemptAt)) ||
		d.LastStatus != 500 || d.LastError != "HTTP 500" || d.EventID != r.ID || d.Position != r.Position {
		t.Errorf("delivery after a failed attempt = %+v", d)
	}
	wantAttempt := events.Attempt{Subscription: sub.ID, Position: r.Position, Number: 1, Time: tenant.Timestamp(failed.Time),
		Status: 500, Latency: 1234 * time.Microsecond, Error: "HTTP 500", Response: "oops"}
	if diff := cmp.Diff([]events.Attempt{wantAttempt}, attempts); diff != "" {
		t.Errorf("attempts after a failed one (-want +got):\n%s", diff)
	}

	mustAttempt(t, es, fence, sub.ID, r, events.Delivered, "")
	d, attempts = mustDelivery(t, es, sub.ID, r.ID)
	if d.State != events.Delivered || d.Attempts != 2 || d.Tries != 2 || d.LastStatus != 200 || d.LastError != "" || len(attempts) != 2 ||
		attempts[0].Number != 1 || attempts[1].Number != 2 || attempts[1].Status != 200 || attempts[1].Response != "ok" {
		t.Errorf("after delivery: %+v, attempts %+v", d, attempts)
	}

	// Given up on: the delivery fails and the subscription is disabled.
	mustAttempt(t, es, fence, sub.ID, recs[1], events.Failed, "every attempt failed for a day")
	d, _ = mustDelivery(t, es, sub.ID, recs[1].ID)
	got := mustSubscription(t, es, sub.ID)
	if d.State != events.Failed || got.Enabled || got.DisabledReason != "every attempt failed for a day" || got.Version != sub.Version+1 {
		t.Errorf("after giving up: delivery %s, subscription enabled %v, reason %q, version %d", d.State, got.Enabled, got.DisabledReason, got.Version)
	}

	// An attempt at a delivery that is gone records nothing.
	gone := events.Record{Position: r.Position + 1000, ID: "evt_gone"}
	mustAttempt(t, es, fence, sub.ID, gone, events.Delivered, "")
	_, _, err := es.Delivery(ctx, sub.ID, "evt_00000000000000000000000000000000")
	wantErr(t, "Delivery of an unknown event", err, events.ErrNotFound)
	_, _, err = es.Delivery(ctx, "sub_nope", r.ID)
	wantErr(t, "Delivery of an unknown subscription", err, events.ErrNotFound)
}

// testDeliveriesPaging: Deliveries pages a subscription's deliveries,
// newest first, of one state when asked.
func testDeliveriesPaging(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	fence := mustFence(t, s, "dispatcher-a")
	sub := mustSubscribe(t, es, "hooks", nil)
	other := mustSubscribe(t, es, "other", nil)
	for i := range 5 {
		mustCreate(t, s, newTenant(fmt.Sprintf("t%d", i)))
	}
	recs := mustFanOut(t, es, fence, sub.ID)
	mustFanOut(t, es, fence, other.ID)
	mustAttempt(t, es, fence, sub.ID, recs[1], events.Delivered, "")
	mustAttempt(t, es, fence, sub.ID, recs[3], events.Delivered, "")
	list := func(state events.DeliveryState, size int) []string {
		t.Helper()
		var out []string
		opts := events.DeliveryListOptions{State: state, PageSize: size}
		for range 100 {
			page, err := es.Deliveries(ctx, sub.ID, opts)
			if err != nil {
				t.Fatalf("Deliveries(%+v): %v", opts, err)
			}
			if len(page.Deliveries) > size {
				t.Fatalf("Deliveries(page size %d) returned %d", size, len(page.Deliveries))
			}
			for _, d := range page.Deliveries {
				out = append(out, fmt.Sprintf("%s@%d", d.Subscription, d.Position))
			}
			if page.NextPageToken == "" {
				return out
			}
			opts.PageToken = page.NextPageToken
		}
		t.Fatal("Deliveries never ended")
		return nil
	}
	for _, tc := range []struct {
		state events.DeliveryState
		want  []events.Record
	}{
		{"", []events.Record{recs[4], recs[3], recs[2], recs[1], recs[0]}},
		{events.Delivered, []events.Record{recs[3], recs[1]}},
		{events.Pending, []events.Record{recs[4], recs[2], recs[0]}},
		{events.Failed, nil},
	} {
		for _, size := range []int{2, 100} {
			if diff := cmp.Diff(keysOf(sub.ID, tc.want...), list(tc.state, size), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Deliveries(state %q, page size %d) (-want +got):\n%s", tc.state, size, diff)
			}
		}
	}
	_, err := es.Deliveries(ctx, sub.ID, events.DeliveryListOptions{PageToken: "nope"})
	wantErr(t, "Deliveries with a bad page token", err, tenant.ErrInvalidPageToken)
	if page, err := es.Deliveries(ctx, "sub_nope", events.DeliveryListOptions{}); err != nil || len(page.Deliveries) != 0 {
		t.Errorf("Deliveries of an unknown subscription = %+v, %v", page, err)
	}
}

// testRedeliver: Redeliver makes deliveries pending again, attempts from 0
// and tries kept, creating those that do not exist: one event by id, or
// the events of a time range that pass the subscription's filters.
func testRedeliver(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	fence := mustFence(t, s, "dispatcher-a")
	early := mustCreate(t, s, newTenant("early"))
	mustSequence(t, es)
	sub := mustSubscribe(t, es, "hooks", func(s *events.Subscription) { s.Types = []events.Type{events.TenantCreated} })
	late := mustCreate(t, s, newTenant("late"))
	mustObserve(t, s, mustObserve(t, s, late, tenant.StatusProvisioning), tenant.StatusReady)
	recs := mustFanOut(t, es, fence, sub.ID)
	if len(recs) != 1 || recs[0].Key != late.ID {
		t.Fatalf("fanned out %v, want late's created", recordTypes(recs))
	}
	lateCreated := recs[0]
	mustAttempt(t, es, fence, sub.ID, lateCreated, events.Delivered, "")
	all := mustOutbox(t, es, 0)
	earlyCreated, lateReady := ofKey(all, early.ID)[0], ofKey(all, late.ID)[1]

	before := tenant.Timestamp(time.Now())
	if n, err := es.Redeliver(ctx, sub.ID, events.Redelivery{EventID: lateCreated.ID}); err != nil || n != 1 {
		t.Fatalf("Redeliver of a delivered event = %d, %v; want 1", n, err)
	}
	d, attempts := mustDelivery(t, es, sub.ID, lateCreated.ID)
	if d.State != events.Pending || d.Attempts != 0 || d.Tries != 1 || d.LastStatus != 200 || d.NextAttemptAt.Before(before) || d.NextAttemptAt.After(time.Now()) || len(attempts) != 1 {
		t.Errorf("redelivered: %+v, %d attempts; want pending, due now, attempts 0, tries 1, its log kept", d, len(attempts))
	}
	// By id, an event is sent whatever the filters; one fanned out before
	// the subscription existed gets a delivery. By name too.
	for _, r := range []events.Record{earlyCreated, lateReady} {
		if n, err := es.Redeliver(ctx, sub.Name, events.Redelivery{EventID: r.ID}); err != nil || n != 1 {
			t.Fatalf("Redeliver(%s) = %d, %v; want 1", r.Type, n, err)
		}
		if d, _ := mustDelivery(t, es, sub.ID, r.ID); d.State != events.Pending || d.Tries != 0 || d.Key != r.Key {
			t.Errorf("delivery made by Redeliver(%s) = %+v", r.Type, d)
		}
	}

	// A time range: what passes the filters, in [Since, Until).
	mustAttempt(t, es, fence, sub.ID, earlyCreated, events.Delivered, "")
	mustAttempt(t, es, fence, sub.ID, lateCreated, events.Delivered, "")
	n, err := es.Redeliver(ctx, sub.ID, events.Redelivery{Since: earlyCreated.Time, Until: time.Now().Add(time.Minute)})
	if err != nil || n != 2 {
		t.Errorf("Redeliver of every created event = %d, %v; want 2", n, err)
	}
	for _, tc := range []struct {
		r     events.Record
		tries int
	}{{earlyCreated, 1}, {lateCreated, 2}} {
		if d, _ := mustDelivery(t, es, sub.ID, tc.r.ID); d.State != events.Pending || d.Attempts != 0 || d.Tries != tc.tries {
			t.Errorf("after Redeliver of a range, the delivery of %s = %+v; want pending, attempts 0, tries %d", tc.r.Key, d, tc.tries)
		}
	}
	if n, err := es.Redeliver(ctx, sub.ID, events.Redelivery{Since: earlyCreated.Time, Until: earlyCreated.Time}); err != nil || n != 0 {
		t.Errorf("Redeliver of an empty range = %d, %v", n, err)
	}
	if n, err := es.Redeliver(ctx, sub.ID, events.Redelivery{Since: lateCreated.Time, Until: lateReady.Time.Add(time.Microsecond)}); err != nil || n != 1 {
		t.Errorf("Redeliver of a range from late's created = %d, %v; want 1", n, err)
	}

	_, err = es.Redeliver(ctx, sub.ID, events.Redelivery{EventID: "evt_00000000000000000000000000000000"})
	wantErr(t, "Redeliver of an unknown event", err, events.ErrNotFound)
	_, err = es.Redeliver(ctx, "nope", events.Redelivery{EventID: lateCreated.ID})
	wantErr(t, "Redeliver to an unknown subscription", err, events.ErrNotFound)
}

// testDeliveryStats: the pending deliveries' count, and the time of the
// oldest event among them.
func testDeliveryStats(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	stats := func() (int, time.Time) {
		t.Helper()
		n, oldest, err := es.DeliveryStats(ctx)
		if err != nil {
			t.Fatalf("DeliveryStats: %v", err)
		}
		return n, oldest
	}
	if n, oldest := stats(); n != 0 || !oldest.IsZero() {
		t.Errorf("DeliveryStats of a new store = %d, %v", n, oldest)
	}
	fence := mustFence(t, s, "dispatcher-a")
	sub := mustSubscribe(t, es, "hooks", nil)
	mustCreate(t, s, newTenant("one"))
	mustCreate(t, s, newTenant("two"))
	recs := mustFanOut(t, es, fence, sub.ID)
	if n, oldest := stats(); n != 2 || !oldest.Equal(recs[0].Time) {
		t.Errorf("DeliveryStats = %d, %v; want 2, %v", n, oldest, recs[0].Time)
	}
	mustAttempt(t, es, fence, sub.ID, recs[0], events.Delivered, "")
	if n, oldest := stats(); n != 1 || !oldest.Equal(recs[1].Time) {
		t.Errorf("DeliveryStats after one delivered = %d, %v; want 1, %v", n, oldest, recs[1].Time)
	}
	mustAttempt(t, es, fence, sub.ID, recs[1], events.Delivered, "")
	if n, oldest := stats(); n != 0 || !oldest.IsZero() {
		t.Errorf("DeliveryStats after both delivered = %d, %v", n, oldest)
	}
}
