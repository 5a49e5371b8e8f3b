package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// movePlans are plan standard with versions 1 and 2 and plan premium with
// version 1, for tenants to follow before moveFixture starts a rollout.
func movePlans(t *testing.T, s tenant.Store) fleet.Store {
	t.Helper()
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPlan(t, f, "premium")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	mustPublish(t, f, "standard", `{"image":"b"}`)
	mustPublish(t, f, "premium", `{"image":"p"}`)
	return f
}

// moveFixture is a rollout of plan standard (movePlans) to version 2 of
// the given tenants.
func moveFixture(t *testing.T, s tenant.Store, tenants ...*tenant.Tenant) (fleet.Store, *fleet.Rollout) {
	t.Helper()
	f := fleetStore(t, s)
	var members []fleet.Member
	for _, tn := range tenants {
		members = append(members, fleet.Member{TenantID: tn.ID, TenantName: tn.Name, From: 1})
	}
	return f, mustRollout(t, f, "standard", 2, members)
}

func forward(id string) fleet.Move {
	return fleet.Move{TenantID: id, Expect: fleet.MemberPending, To: 2, State: fleet.MemberChanging, Actor: "controller", Message: "rollout: standard v1 → v2"}
}

func mustMember(t *testing.T, f fleet.Store, rolloutID, tenantID string) fleet.Member {
	t.Helper()
	for _, m := range mustMembers(t, f, rolloutID) {
		if m.TenantID == tenantID {
			return m
		}
	}
	t.Fatalf("tenant %s is no member of rollout %s", tenantID, rolloutID)
	return fleet.Member{}
}

func testMoveTenant(t *testing.T, s tenant.Store) {
	movePlans(t, s)
	cur := mustCreate(t, s, planTenant("acme", "standard", 1))
	cur = mustObserve(t, s, mustObserve(t, s, cur, tenant.StatusProvisioning), tenant.StatusReady)
	there := mustCreate(t, s, planTenant("there", "standard", 2)) // at the target already
	f, r := moveFixture(t, s, cur, there)

	m, err := f.MoveTenant(ctx, r.ID, forward(cur.ID))
	if err != nil {
		t.Fatal(err)
	}
	moved := mustGet(t, s, cur.ID)
	if moved.Plan == nil || *moved.Plan != (tenant.PlanRef{Name: "standard", Version: 2}) ||
		moved.Generation != cur.Generation+1 || moved.Version != cur.Version+1 {
		t.Errorf("after MoveTenant: plan %v, generation %d, version %d; want standard v2, %d, %d",
			moved.Plan, moved.Generation, moved.Version, cur.Generation+1, cur.Version+1)
	}
	if !sameJSON(moved.ComputeConfig, cur.ComputeConfig) || !cmp.Equal(moved.Labels, cur.Labels) || moved.Status != tenant.StatusReady {
		t.Errorf("MoveTenant changed more than the plan: %+v", moved)
	}
	if m.State != fleet.MemberChanging || m.Generation != moved.Generation || m.ChangedAt == nil || m.FinishedAt != nil || m.TenantName != "acme" {
		t.Errorf("MoveTenant returned member %+v", m)
	}
	if stored := mustMember(t, f, r.ID, cur.ID); !cmp.Equal(stored, m) {
		t.Errorf("stored member differs from the one returned (-returned +stored):\n%s", cmp.Diff(m, stored))
	}
	events := mustEvents(t, s, cur.ID)
	last := events[len(events)-1]
	if last.Type != tenant.EventUpdated || last.Actor != "controller" || last.Message != "rollout: standard v1 → v2" || last.Generation != moved.Generation {
		t.Errorf("the tenant's last event = %+v, want updated by controller at generation %d", last, moved.Generation)
	}
	revs := mustRolloutEvents(t, f, r.ID)
	if e := revs[len(revs)-1]; len(revs) != 2 || e.Type != fleet.EventChanged || e.TenantID != cur.ID || e.TenantName != "acme" || e.Actor != "controller" || e.Seq != 2 {
		t.Errorf("rollout events = %+v, want started, then tenant_changed of acme", revs)
	}

	// Moved already: a conflict, and nothing changes.
	_, err = f.MoveTenant(ctx, r.ID, forward(cur.ID))
	wantErr(t, "MoveTenant repeated", err, fleet.ErrConflict)
	sameTenant(t, "Get after a refused MoveTenant", mustGet(t, s, cur.ID), moved)
	if n := len(mustEvents(t, s, cur.ID)); n != len(events) {
		t.Errorf("a refused MoveTenant recorded %d tenant events", n-len(events))
	}
	if n := len(mustRolloutEvents(t, f, r.ID)); n != len(revs) {
		t.Errorf("a refused MoveTenant recorded %d rollout events", n-len(revs))
	}

	// A tenant at the target already is not written, but the member changes.
	m, err = f.MoveTenant(ctx, r.ID, forward(there.ID))
	if err != nil {
		t.Fatal(err)
	}
	if m.State != fleet.MemberChanging || m.Generation != there.Generation {
		t.Errorf("member at the target already = %+v, want changing at generation %d", m, there.Generation)
	}
	sameTenant(t, "Get of a tenant at the target already", mustGet(t, s, there.ID), there)

	// Rolling back: only an aborting rollout moves tenants back, and only
	// a running one moves them forward.
	back := fleet.Move{TenantID: cur.ID, Expect: fleet.MemberChanging, To: 1, State: fleet.MemberRolledBack, Actor: "bob", Message: "abort"}
	if _, err := f.MoveTenant(ctx, r.ID, back); !errors.Is(err, fleet.ErrState) {
		t.Errorf("a rollback in a running rollout: %v, want ErrState", err)
	}
	stored, err := f.GetRollout(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored.State, stored.Rollback = fleet.StateAborting, true
	if _, err := f.UpdateRollout(ctx, stored); err != nil {
		t.Fatal(err)
	}
	m, err = f.MoveTenant(ctx, r.ID, back)
	if err != nil {
		t.Fatal(err)
	}
	again := fleet.Move{TenantID: there.ID, Expect: fleet.MemberChanging, To: 2, State: fleet.MemberChanging}
	if _, err := f.MoveTenant(ctx, r.ID, again); !errors.Is(err, fleet.ErrState) {
		t.Errorf("a forward move in an aborting rollout: %v, want ErrState", err)
	}
	rolled := mustGet(t, s, cur.ID)
	if rolled.Plan.Version != 1 || rolled.Generation != moved.Generation+1 || m.State != fleet.MemberRolledBack || m.FinishedAt == nil || m.Generation != rolled.Generation {
		t.Errorf("after rolling back: plan %v, generation %d, member %+v", rolled.Plan, rolled.Generation, m)
	}
	if revs := mustRolloutEvents(t, f, r.ID); revs[len(revs)-1].Type != fleet.EventRolledBack || revs[len(revs)-1].Actor != "bob" {
		t.Errorf("last rollout event = %+v, want tenant_rolled_back by bob", revs[len(revs)-1])
	}

	_, err = f.MoveTenant(ctx, r.ID, forward(tenant.NewID()))
	wantErr(t, "MoveTenant of a tenant that is no member", err, fleet.ErrNotFound)
	_, err = f.MoveTenant(ctx, tenant.NewID(), forward(cur.ID))
	wantErr(t, "MoveTenant in an unknown rollout", err, fleet.ErrNotFound)
	sameTenant(t, "Get after MoveTenants that found nothing", mustGet(t, s, cur.ID), rolled)
}

// testMoveTenantSkips: a tenant that is pinned, follows another plan or
// none, or is being deleted is left as it is, and its member skipped.
func testMoveTenantSkips(t *testing.T, s tenant.Store) {
	movePlans(t, s)
	pinned := planTenant("pinned", "standard", 1)
	pinned.Plan.Pinned = true
	other := planTenant("other", "premium", 1)
	tenants := []*tenant.Tenant{mustCreate(t, s, pinned), mustCreate(t, s, other), mustCreate(t, s, newTenant("none")), mustCreate(t, s, planTenant("deleting", "standard", 1))}
	deleting, err := s.RequestDeletion(ctx, tenants[3].ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	tenants[3] = deleting
	f, r := moveFixture(t, s, tenants...)
	for _, tn := range tenants {
		events := mustEvents(t, s, tn.ID)
		m, err := f.MoveTenant(ctx, r.ID, forward(tn.ID))
		if err != nil {
			t.Fatalf("MoveTenant(%s): %v", tn.Name, err)
		}
		if m.State != fleet.MemberSkipped || m.Message == "" || m.FinishedAt == nil || m.Generation != 0 {
			t.Errorf("member %s = %+v, want skipped saying why", tn.Name, m)
		}
		if stored := mustMember(t, f, r.ID, tn.ID); !cmp.Equal(stored, m) {
			t.Errorf("stored member %s differs (-returned +stored):\n%s", tn.Name, cmp.Diff(m, stored))
		}
		sameTenant(t, "Get of skipped "+tn.Name, mustGet(t, s, tn.ID), tn)
		if n := len(mustEvents(t, s, tn.ID)); n != len(events) {
			t.Errorf("skipping %s recorded %d tenant events", tn.Name, n-len(events))
		}
		revs := mustRolloutEvents(t, f, r.ID)
		if e := revs[len(revs)-1]; e.Type != fleet.EventSkipped || e.TenantID != tn.ID || e.Message != m.Message {
			t.Errorf("rollout event of skipped %s = %+v", tn.Name, e)
		}
	}
}

// testMoveTenantAnnounces: a move is announced to watchers and change feeds
// as UpdateDesired is; a skipped one, which changes no tenant, is not.
func testMoveTenantAnnounces(t *testing.T, s tenant.Store) {
	w, ok := s.(tenant.Watcher)
	if !ok {
		t.Fatalf("%T does not implement tenant.Watcher", s)
	}
	feed, ok := s.(tenant.ChangeFeed)
	if !ok {
		t.Fatalf("%T does not implement tenant.ChangeFeed", s)
	}
	wctx, cancel := contextWithCancel()
	defer cancel()
	watchCh, err := w.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	changesCh, err := feed.Changes(wctx)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	watch := &announcements{t: t, name: "Watch", ch: watchCh, mine: mine}
	changes := &announcements{t: t, name: "Changes", ch: changesCh, mine: mine}
	movePlans(t, s)
	pinned := planTenant("pinned", "standard", 1)
	pinned.Plan.Pinned = true
	moved, skipped, other := mustCreate(t, s, planTenant("moved", "standard", 1)), mustCreate(t, s, pinned), mustCreate(t, s, newTenant("other"))
	f, r := moveFixture(t, s, moved, skipped)
	for _, id := range []string{moved.ID, skipped.ID, other.ID} {
		mine[id] = true
	}
	for _, id := range []string{moved.ID, skipped.ID, other.ID} {
		watch.expect("Create", id)
		changes.expect("Create", id)
	}
	if _, err := f.MoveTenant(ctx, r.ID, forward(moved.ID)); err != nil {
		t.Fatal(err)
	}
	watch.expect("MoveTenant", moved.ID)
	changes.expect("MoveTenant", moved.ID)
	if _, err := f.MoveTenant(ctx, r.ID, forward(skipped.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDesired(ctx, other.ID, tenant.DesiredChange{Version: other.Version, ComputeConfig: []byte(`{"image":"b"}`)}); err != nil {
		t.Fatal(err)
	}
	watch.expect("a skipping MoveTenant, then UpdateDesired", other.ID)
	changes.expect("a skipping MoveTenant, then UpdateDesired", other.ID)
}

// testMoveTenantConcurrently: controllers racing to move one member change
// its tenant once; the others are told of the conflict.
func testMoveTenantConcurrently(t *testing.T, s tenant.Store) {
	movePlans(t, s)
	cur := mustCreate(t, s, planTenant("contested", "standard", 1))
	f, r := moveFixture(t, s, cur)
	const movers = 8
	members := make([]fleet.Member, movers)
	errs := make([]error, movers)
	var wg sync.WaitGroup
	for i := range movers {
		wg.Go(func() {
			mv := forward(cur.ID)
			mv.Actor = fmt.Sprint("controller-", i)
			members[i], errs[i] = f.MoveTenant(ctx, r.ID, mv)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("movers %d and %d both moved the tenant", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fleet.ErrConflict):
			t.Errorf("mover %d: %v, want nil or ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no mover moved the tenant")
	}
	got := mustGet(t, s, cur.ID)
	if got.Generation != cur.Generation+1 || got.Plan.Version != 2 || members[winner].Generation != got.Generation {
		t.Errorf("after %d concurrent moves: generation %d (from %d), plan %v, member %+v", movers, got.Generation, cur.Generation, got.Plan, members[winner])
	}
	var updates []string
	for _, e := range mustEvents(t, s, cur.ID) {
		if e.Type == tenant.EventUpdated {
			updates = append(updates, e.Actor)
		}
	}
	if len(updates) != 1 || updates[0] != fmt.Sprint("controller-", winner) {
		t.Errorf("updated events by %v, want one by controller-%d", updates, winner)
	}
	changed := 0
	for _, e := range mustRolloutEvents(t, f, r.ID) {
		if e.Type == fleet.EventChanged {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d tenant_changed events, want 1", changed)
	}
}
