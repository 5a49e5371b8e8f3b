package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// eventStore is s as an events.Store: every store keeps the outbox, the
// subscriptions and their deliveries beside its tenants.
func eventStore(t testing.TB, s tenant.Store) events.Store {
	t.Helper()
	es, ok := s.(events.Store)
	if !ok {
		t.Fatalf("%T does not implement events.Store", s)
	}
	return es
}

// mustSequence positions every event committed so far: SequenceOutbox
// until it positions none (at once on SQLite).
func mustSequence(t testing.TB, es events.Store) {
	t.Helper()
	for range 100000 {
		n, err := es.SequenceOutbox(ctx, 100)
		if err != nil {
			t.Fatalf("SequenceOutbox: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("SequenceOutbox never ended")
}

// mustOutbox positions what has committed, then reads the outbox after
// after, of types, in pages.
func mustOutbox(t testing.TB, es events.Store, after int64, types ...events.Type) []events.Record {
	t.Helper()
	mustSequence(t, es)
	var all []events.Record
	for {
		page, err := es.ReadOutbox(ctx, after, 7, types)
		if err != nil {
			t.Fatalf("ReadOutbox(after %d, %v): %v", after, types, err)
		}
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = page[len(page)-1].Position
	}
}

func mustHead(t testing.TB, es events.Store) int64 {
	t.Helper()
	head, err := es.OutboxHead(ctx)
	if err != nil {
		t.Fatalf("OutboxHead: %v", err)
	}
	return head
}

func recordTypes(rs []events.Record) []events.Type {
	out := make([]events.Type, len(rs))
	for i, r := range rs {
		out[i] = r.Type
	}
	return out
}

func recordIDs(rs []events.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d %s", r.Position, r.ID)
	}
	return out
}

// published are the entries of a tenant's history that are published
// (docs/events.md), in their order.
func published(history []tenant.Event) []tenant.Event {
	var out []tenant.Event
	for _, e := range history {
		switch e.Type {
		case tenant.EventCreated, tenant.EventUpdated, tenant.EventDeleteRequested, tenant.EventDrift, tenant.EventForgotten:
			out = append(out, e)
		case tenant.EventStatus:
			if e.Placement == "" && (e.To == tenant.StatusReady || e.To == tenant.StatusFailed || e.To == tenant.StatusDeleted) {
				out = append(out, e)
			}
		}
	}
	return out
}

// eventIDRule is the form of the ids the stores give events.
var eventIDRule = regexp.MustCompile(`^evt_[0-9a-f]{32}$`)

// checkTenantRecords checks that recs are the records of tenant id's
// published history, in its order, and that each is well formed; it
// returns the history entries.
func checkTenantRecords(t *testing.T, s tenant.Store, id string, recs []events.Record) []tenant.Event {
	t.Helper()
	history := published(mustEvents(t, s, id))
	if len(recs) != len(history) {
		t.Fatalf("tenant %s: %d records %v, want %d for its history %+v", id, len(recs), recordTypes(recs), len(history), history)
	}
	for i, r := range recs {
		if !eventIDRule.MatchString(r.ID) || r.Key != id || r.Subject != id || r.Data != nil || r.History == nil || r.Tenant == nil {
			t.Errorf("record %d of tenant %s: id %q, key %q, subject %q, data %s, history %v, tenant %v", i, id, r.ID, r.Key, r.Subject, r.Data, r.History, r.Tenant != nil)
			continue
		}
		// The history does not show what an "updated" event changed;
		// its record does.
		if diff := cmp.Diff(history[i], *r.History, cmpopts.IgnoreFields(tenant.Event{}, "Changed")); diff != "" {
			t.Errorf("record %d (%s) of tenant %s: history entry (-stored +record):\n%s", i, r.Type, id, diff)
		}
		if want := r.Type == events.TenantChanged; want != (len(r.History.Changed) > 0) {
			t.Errorf("record %d (%s) of tenant %s names changed fields %v", i, r.Type, id, r.History.Changed)
		}
		if !r.Time.Equal(history[i].Time) || r.Tenant.ID != id || r.Tenant.Generation != history[i].Generation {
			t.Errorf("record %d of tenant %s: time %v, tenant %s at generation %d; want %v, %s, %d",
				i, id, r.Time, r.Tenant.ID, r.Tenant.Generation, history[i].Time, id, history[i].Generation)
		}
		if i > 0 && r.Position <= recs[i-1].Position {
			t.Errorf("record %d of tenant %s at position %d, after %d", i, id, r.Position, recs[i-1].Position)
		}
	}
	return history
}

// ofKey are the records of one key, in their order.
func ofKey(recs []events.Record, key string) []events.Record {
	var out []events.Record
	for _, r := range recs {
		if r.Key == key {
			out = append(out, r)
		}
	}
	return out
}

// testOutboxLifecycle: a tenant's lifecycle writes, in the transactions
// of its changes, one record per published history entry, in order, each
// with a fresh id and the tenant as the store returned it at that step;
// writes that fail write none, and entries that are not published none.
func testOutboxLifecycle(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	if recs := mustOutbox(t, es, 0); len(recs) != 0 || mustHead(t, es) != 0 {
		t.Fatalf("a new store's outbox has %v, head %d", recordTypes(recs), mustHead(t, es))
	}
	created := mustCreate(t, s, newTenant("acme"))
	changed, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: created.ComputeConfig,
		Labels: map[string]string{"tier": "platinum", "region": "eu"}, Annotations: created.Annotations, Actor: "alice", Message: "upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	// Writes that roll back write no record.
	_, err = s.Create(ctx, newTenant("acme"), "test")
	wantErr(t, "Create of a name taken", err, tenant.ErrNameTaken)
	_, err = s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: created.ComputeConfig, Labels: map[string]string{"x": "y"}})
	wantErr(t, "UpdateDesired at a stale version", err, tenant.ErrConflict)
	_, err = s.RequestDeletion(ctx, created.ID, created.Version, "alice")
	wantErr(t, "RequestDeletion at a stale version", err, tenant.ErrConflict)
	// Entries that are not published: a status other than ready, failed
	// or deleted, a placement's status, notes, failed attempts.
	provisioning := mustObserve(t, s, changed, tenant.StatusProvisioning)
	for _, e := range []tenant.Event{
		{TenantID: created.ID, Type: tenant.EventNote, Message: "a note"},
		{TenantID: created.ID, Type: tenant.EventAttempt, Message: "attempt 1 failed"},
		{TenantID: created.ID, Type: tenant.EventStatus, Placement: "web", From: tenant.StatusProvisioning, To: tenant.StatusReady},
	} {
		if err := s.AppendEvent(ctx, e); err != nil {
			t.Fatalf("AppendEvent(%s): %v", e.Type, err)
		}
	}
	ready := mustObserve(t, s, provisioning, tenant.StatusReady)
	deleting, err := s.RequestDeletion(ctx, ready.ID, ready.Version, "alice")
	if err != nil {
		t.Fatal(err)
	}
	deleted := mustObserve(t, s, deleting, tenant.StatusDeleted)

	recs := mustOutbox(t, es, 0)
	want := []struct {
		typ events.Type
		at  *tenant.Tenant
	}{
		{events.TenantCreated, created}, {events.TenantChanged, changed}, {events.TenantReady, ready},
		{events.TenantDeletionRequested, deleting}, {events.TenantDeleted, deleted},
	}
	if len(recs) != len(want) {
		t.Fatalf("records %v, want %d", recordTypes(recs), len(want))
	}
	checkTenantRecords(t, s, created.ID, recs)
	seen := map[string]bool{}
	for i, w := range want {
		r := recs[i]
		if r.Type != w.typ {
			t.Errorf("record %d is %s, want %s", i, r.Type, w.typ)
		}
		sameTenant(t, fmt.Sprintf("record %d (%s): tenant", i, r.Type), r.Tenant, w.at)
		if got := r.Labels(); !cmp.Equal(got, w.at.Labels, tenantCmp) {
			t.Errorf("record %d: Labels() = %v, want %v", i, got, w.at.Labels)
		}
		if seen[r.ID] {
			t.Errorf("record %d: id %s given twice", i, r.ID)
		}
		seen[r.ID] = true
		got, err := es.OutboxEvent(ctx, r.ID)
		if err != nil {
			t.Fatalf("OutboxEvent(%s): %v", r.ID, err)
		}
		if diff := cmp.Diff(r, got, tenantCmp); diff != "" {
			t.Errorf("OutboxEvent(%s) (-read +got):\n%s", r.ID, diff)
		}
	}
	if head := mustHead(t, es); head != recs[len(recs)-1].Position {
		t.Errorf("OutboxHead = %d, want the last position %d", head, recs[len(recs)-1].Position)
	}
	_, err = es.OutboxEvent(ctx, "evt_00000000000000000000000000000000")
	wantErr(t, "OutboxEvent of an unknown id", err, events.ErrNotFound)
}

// testOutboxStatuses: failed and drift are published, with the tenant as
// it was then; forgetting publishes forgotten and deleted.
func testOutboxStatuses(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	failing := mustCreate(t, s, newTenant("failing"))
	failed := mustObserve(t, s, mustObserve(t, s, failing, tenant.StatusProvisioning), tenant.StatusFailed)

	drifting := mustCreate(t, s, newTenant("drifting"))
	ready := mustObserve(t, s, mustObserve(t, s, drifting, tenant.StatusProvisioning), tenant.StatusReady)
	report := &tenant.DriftReport{
		DetectedAt:  tenant.Timestamp(time.Now()),
		Generation:  ready.Generation,
		Policy:      provider.DriftObserve,
		Differences: []provider.Drift{{Path: "deployment/replicas", Kind: provider.DriftScale, Expected: "1", Found: "5"}},
	}
	drifted, err := s.UpdateObserved(ctx, ready.ID, tenant.Observation{Generation: ready.Generation, Status: tenant.StatusReady, Drift: report, Actor: "controller"})
	if err != nil {
		t.Fatal(err)
	}

	forgotten := mustCreate(t, s, newTenant("forgotten"))
	f, ok := s.(tenant.Forgetter)
	if !ok {
		t.Fatalf("%T does not implement tenant.Forgetter", s)
	}
	gone, err := f.Forget(ctx, forgotten.ID, forgotten.Version, "alice", "moved by hand")
	if err != nil {
		t.Fatal(err)
	}

	recs := mustOutbox(t, es, 0)
	for _, tc := range []struct {
		id   string
		want []events.Type
		last *tenant.Tenant
	}{
		{failing.ID, []events.Type{events.TenantCreated, events.TenantFailed}, failed},
		{drifting.ID, []events.Type{events.TenantCreated, events.TenantReady, events.TenantDriftDetected}, drifted},
		{forgotten.ID, []events.Type{events.TenantCreated, events.TenantForgotten, events.TenantDeleted}, gone},
	} {
		mine := ofKey(recs, tc.id)
		if got := recordTypes(mine); !slices.Equal(got, tc.want) {
			t.Errorf("records of tenant %s: %v, want %v", tc.id, got, tc.want)
			continue
		}
		checkTenantRecords(t, s, tc.id, mine)
		sameTenant(t, fmt.Sprintf("tenant of %s's last record", tc.id), mine[len(mine)-1].Tenant, tc.last)
	}
	if d := ofKey(recs, drifting.ID); len(d) == 3 && !d[2].Tenant.Drift.Same(report) {
		t.Errorf("the drift record's tenant has drift %+v, want %+v", d[2].Tenant.Drift, report)
	}
}

// testOutboxFleet: a plan's version published and a rollout's start and
// halt are published with their data; a pause is not.
func testOutboxFleet(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a","env":{"B":"2","A":"1"}}`)
	mustPublish(t, f, "standard", `{"image":"b"}`)
	r := mustRollout(t, f, "standard", 2, nil)
	r.State, r.Message = fleet.StatePaused, "paused by bob"
	paused, err := f.UpdateRollout(ctx, r, fleet.Event{Type: fleet.EventPaused, Actor: "bob", Message: "paused by bob"})
	if err != nil {
		t.Fatal(err)
	}
	paused.State, paused.Message = fleet.StateHalted, "too many failures"
	if _, err := f.UpdateRollout(ctx, paused, fleet.Event{Type: fleet.EventHalted, Actor: "driver", Message: "too many failures"}); err != nil {
		t.Fatal(err)
	}

	recs := mustOutbox(t, es, 0)
	want := []events.Type{events.PlanVersionPublished, events.PlanVersionPublished, events.RolloutStarted, events.RolloutHalted}
	if got := recordTypes(recs); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for i, v := range []struct {
		version int64
		config  string
	}{{1, `{"image":"a","env":{"B":"2","A":"1"}}`}, {2, `{"image":"b"}`}} {
		p := recs[i]
		wantData := fmt.Sprintf(`{"plan":"standard","version":%d,"message":"publish %s","actor":"alice","config":%s}`, v.version, jsonString(v.config), v.config)
		if p.Subject != "standard" || p.Key != "plan:standard" || p.Tenant != nil || p.History != nil || !eventIDRule.MatchString(p.ID) || !sameJSON(p.Data, []byte(wantData)) {
			t.Errorf("record of version %d: subject %q, key %q, id %q, data %s; want data %s", v.version, p.Subject, p.Key, p.ID, p.Data, wantData)
		}
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []struct {
		state, event, actor, message string
	}{{"running", "started", "alice", ""}, {"halted", "halted", "driver", "too many failures"}} {
		rec := recs[2+i]
		var data struct {
			Rollout struct {
				ID, Plan, State, Message string
				Wave                     int
				Rollback                 bool
				Spec                     json.RawMessage
				CreatedBy                string `json:"created_by"`
			}
			Event struct {
				Seq                  int64
				Type, Message, Actor string
				Wave                 int
			}
		}
		if err := json.Unmarshal(rec.Data, &data); err != nil {
			t.Fatalf("record %s: data %s: %v", rec.Type, rec.Data, err)
		}
		if rec.Subject != r.ID || rec.Key != "rollout:"+r.ID || rec.Tenant != nil || data.Rollout.ID != r.ID || data.Rollout.Plan != "standard" ||
			data.Rollout.State != w.state || data.Rollout.Message != w.message || data.Rollout.CreatedBy != "alice" || !sameJSON(data.Rollout.Spec, spec) ||
			data.Event.Type != w.event || data.Event.Actor != w.actor || data.Event.Message != w.message || data.Event.Seq < 1 {
			t.Errorf("record %s: subject %q, key %q, data %s", rec.Type, rec.Subject, rec.Key, rec.Data)
		}
	}
	if recs[3].Time.Before(recs[2].Time) {
		t.Errorf("halted at %v, before started at %v", recs[3].Time, recs[2].Time)
	}
}

// jsonString is s as the text of a JSON string, without its quotes.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// testOutboxCreates: the creates that insert the tenant and its event in
// one statement (on a plan, idempotent, both) publish the tenant as it was
// created: the event's trigger sees the row the statement inserted.
func testOutboxCreates(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	is := mustIdempotencyStore(t, s)
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	onPlan := mustCreate(t, s, planTenant("on-plan", "standard", 1))
	res := mustReserve(t, is, "alice", "key-1", "h1", time.Hour)
	idem, err := is.CreateIdempotent(ctx, newTenant("idempotent"), "alice", res, respondCreated)
	if err != nil {
		t.Fatal(err)
	}
	res = mustReserve(t, is, "alice", "key-2", "h2", time.Hour)
	both, err := is.CreateIdempotent(ctx, planTenant("idempotent-on-plan", "standard", 1), "alice", res, respondCreated)
	if err != nil {
		t.Fatal(err)
	}
	// A reservation lost creates nothing, and publishes nothing.
	_, err = is.CreateIdempotent(ctx, newTenant("lost"), "alice", res, respondCreated)
	wantErr(t, "CreateIdempotent of a reservation completed", err, tenant.ErrReservationLost)

	recs := mustOutbox(t, es, 0, events.TenantCreated)
	if len(recs) != 3 {
		t.Fatalf("%d created records, want 3", len(recs))
	}
	for i, want := range []*tenant.Tenant{onPlan, idem, both} {
		checkTenantRecords(t, s, want.ID, recs[i:i+1])
		sameTenant(t, "tenant of the created record of "+want.Name, recs[i].Tenant, want)
	}
}

// testOutboxRead: ReadOutbox pages by position, in any page size, and
// filters by type.
func testOutboxRead(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	for i := range 6 {
		c := mustCreate(t, s, newTenant(fmt.Sprintf("t%d", i)))
		if i%2 == 0 {
			mustObserve(t, s, mustObserve(t, s, c, tenant.StatusProvisioning), tenant.StatusReady)
		}
	}
	all := mustOutbox(t, es, 0)
	if len(all) != 9 {
		t.Fatalf("%d records %v, want 9", len(all), recordTypes(all))
	}
	for _, size := range []int{1, 2, 4, 100} {
		var got []events.Record
		var after int64
		for {
			page, err := es.ReadOutbox(ctx, after, size, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > size {
				t.Fatalf("ReadOutbox(limit %d) returned %d", size, len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			after = page[len(page)-1].Position
		}
		if diff := cmp.Diff(recordIDs(all), recordIDs(got)); diff != "" {
			t.Errorf("paging by %d (-all +paged):\n%s", size, diff)
		}
	}
	ready := mustOutbox(t, es, 0, events.TenantReady)
	if len(ready) != 3 {
		t.Errorf("ReadOutbox(ready) = %v, want 3 ready records", recordTypes(ready))
	}
	for _, r := range ready {
		if r.Type != events.TenantReady {
			t.Errorf("ReadOutbox(ready) returned a %s record", r.Type)
		}
	}
	if got := mustOutbox(t, es, 0, events.TenantReady, events.TenantCreated); len(got) != 9 {
		t.Errorf("ReadOutbox(ready, created) = %d records, want 9", len(got))
	}
	if got := mustOutbox(t, es, 0, events.RolloutStarted); len(got) != 0 {
		t.Errorf("ReadOutbox(rollout started) = %v, want none", recordTypes(got))
	}
	if diff := cmp.Diff(recordIDs(all[5:]), recordIDs(mustOutbox(t, es, all[4].Position))); diff != "" {
		t.Errorf("ReadOutbox after the fifth (-want +got):\n%s", diff)
	}
	if got := mustOutbox(t, es, mustHead(t, es)); len(got) != 0 {
		t.Errorf("ReadOutbox after the head = %v", recordTypes(got))
	}
}

// testOutboxPrune: PruneOutbox deletes old events and their deliveries,
// keeps those a delivery is pending for, and keeps the head where it was:
// the next event is after it.
func testOutboxPrune(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	fence := mustFence(t, s, "dispatcher-a")
	sub := mustSubscribe(t, es, "hooks", nil)
	for i := range 4 {
		mustCreate(t, s, newTenant(fmt.Sprintf("t%d", i)))
	}
	recs := mustFanOut(t, es, fence, sub.ID)
	if len(recs) != 4 {
		t.Fatalf("fanned out %d, want 4", len(recs))
	}
	for _, r := range []events.Record{recs[0], recs[2], recs[3]} {
		mustAttempt(t, es, fence, sub.ID, r, events.Delivered, "")
	}
	head := mustHead(t, es)
	if n, err := es.PruneOutbox(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("PruneOutbox of what is older than an hour = %d, %v; want 0", n, err)
	}
	pruned := 0
	for {
		n, err := es.PruneOutbox(ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		pruned += n
	}
	// recs[1] is pending; recs[3], the newest, holds the head.
	if pruned != 2 {
		t.Errorf("PruneOutbox deleted %d events, want 2", pruned)
	}
	left := mustOutbox(t, es, 0)
	if diff := cmp.Diff(recordIDs([]events.Record{recs[1], recs[3]}), recordIDs(left)); diff != "" {
		t.Errorf("events left (-want +got):\n%s", diff)
	}
	if got := mustHead(t, es); got != head {
		t.Errorf("OutboxHead after pruning = %d, want %d", got, head)
	}
	_, err := es.OutboxEvent(ctx, recs[0].ID)
	wantErr(t, "OutboxEvent of a pruned event", err, events.ErrNotFound)
	_, _, err = es.Delivery(ctx, sub.ID, recs[0].ID)
	wantErr(t, "Delivery of a pruned event", err, events.ErrNotFound)
	if d, _, err := es.Delivery(ctx, sub.ID, recs[1].ID); err != nil || d.State != events.Pending {
		t.Errorf("Delivery of the pending event = %+v, %v", d, err)
	}
	// The head never goes back: the next event is after it.
	c := mustCreate(t, s, newTenant("after"))
	next := mustOutbox(t, es, head)
	if len(next) != 1 || next[0].Key != c.ID || next[0].Position <= head {
		t.Errorf("after pruning, the next event is %v, want one after position %d", recordIDs(next), head)
	}
}

// testOutboxConcurrently: tenants created and changed from 8 goroutines,
// while two SequenceOutbox loops run and a reader pages by position beside
// them:
// the reader reads every record once, missing none, and each tenant's
// records are in the order of its history.
func testOutboxConcurrently(t *testing.T, s tenant.Store) {
	es := eventStore(t, s)
	const writers, each = 8, 4
	shared := mustCreate(t, s, newTenant("shared"))
	done := make(chan struct{})
	var (
		bg      sync.WaitGroup
		read    []events.Record
		after   int64
		readErr error
		seqErrs [2]error
	)
	// Two sequencers, as two replicas may run SequenceOutbox at once.
	for i := range seqErrs {
		bg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := es.SequenceOutbox(ctx, 3); err != nil {
					seqErrs[i] = err
					return
				}
			}
		})
	}
	bg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			page, err := es.ReadOutbox(ctx, after, 4, nil)
			if err != nil {
				readErr = err
				return
			}
			read = append(read, page...)
			if len(page) > 0 {
				after = page[len(page)-1].Position
			}
		}
	})
	var (
		writing sync.WaitGroup
		mu      sync.Mutex
		ids     = []string{shared.ID}
	)
	for w := range writers {
		writing.Go(func() {
			for i := range each {
				c, err := s.Create(ctx, newTenant(fmt.Sprintf("w%d-%d", w, i)), "test")
				if err != nil {
					t.Errorf("Create: %v", err)
					return
				}
				mu.Lock()
				ids = append(ids, c.ID)
				mu.Unlock()
				u, err := s.UpdateDesired(ctx, c.ID, tenant.DesiredChange{Version: c.Version, ComputeConfig: c.ComputeConfig, Labels: map[string]string{"writer": fmt.Sprint(w)}})
				if err != nil {
					t.Errorf("UpdateDesired: %v", err)
					return
				}
				for _, status := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
					if _, err := s.UpdateObserved(ctx, u.ID, tenant.Observation{Generation: u.Generation, Status: status, Settles: status.Settled()}); err != nil {
						t.Errorf("UpdateObserved(%s): %v", status, err)
						return
					}
				}
				// Every writer changes the shared tenant too, at once.
				if err := changeShared(s, shared.ID, w, i); err != nil {
					t.Errorf("change the shared tenant: %v", err)
					return
				}
			}
		})
	}
	writing.Wait()
	close(done)
	bg.Wait()
	if err := errors.Join(seqErrs[0], seqErrs[1], readErr); err != nil {
		t.Fatalf("SequenceOutbox or ReadOutbox: %v", err)
	}
	all := mustOutbox(t, es, 0)
	read = append(read, mustOutbox(t, es, after)...)
	if diff := cmp.Diff(recordIDs(all), recordIDs(read)); diff != "" {
		t.Errorf("the concurrent reader's records (-all +read):\n%s", diff)
	}
	if want := 1 + writers*each*(3+1); len(all) != want {
		t.Errorf("%d records, want %d", len(all), want)
	}
	seen := map[string]bool{}
	for i, r := range all {
		if seen[r.ID] || (i > 0 && r.Position <= all[i-1].Position) {
			t.Errorf("record %d: id %s seen before, or position %d not after the one before", i, r.ID, r.Position)
		}
		seen[r.ID] = true
	}
	for _, id := range ids {
		mine := ofKey(all, id)
		checkTenantRecords(t, s, id, mine)
		for i := 1; i < len(mine); i++ {
			prev, cur := mine[i-1].Tenant, mine[i].Tenant
			if cur.Version < prev.Version || cur.Generation < prev.Generation || (mine[i].Type == events.TenantChanged && cur.Version == prev.Version) {
				t.Errorf("tenant %s: record %d (%s) has the tenant at version %d, generation %d, after %d, %d",
					id, i, mine[i].Type, cur.Version, cur.Generation, prev.Version, prev.Generation)
			}
		}
	}
}

// changeShared changes tenant id's labels, reading it again after each
// conflict with a concurrent change.
func changeShared(s tenant.Store, id string, w, i int) error {
	for {
		cur, err := s.Get(ctx, id, tenant.GetOptions{})
		if err != nil {
			return err
		}
		_, err = s.UpdateDesired(ctx, id, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
			Labels: map[string]string{"last": fmt.Sprintf("w%d-%d", w, i)}})
		if !errors.Is(err, tenant.ErrConflict) {
			return err
		}
	}
}
