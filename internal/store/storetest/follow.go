package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// wantPlanNotFound checks that err is tenant.ErrPlanNotFound with a
// violation at pointer.
func wantPlanNotFound(t *testing.T, what string, err error, pointer string) {
	t.Helper()
	wantErr(t, what, err, tenant.ErrPlanNotFound)
	vs := violation.Of(err)
	if len(vs) != 1 || vs[0].Pointer != pointer || vs[0].Message == "" {
		t.Errorf("%s: violations %v, want one at %s", what, vs, pointer)
	}
}

// testFollowChecksPlan: a tenant is created on a plan, or moved onto one,
// only if the plan exists, is for its provider and has the version: a
// plan deleted after the caller looked it up (the API reads it before the
// write) is never followed, nor one created again in its place for
// another provider.
func testFollowChecksPlan(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	mustPlan(t, f, "empty") // no version
	if _, err := f.CreatePlan(ctx, &fleet.Plan{Name: "elsewhere", Provider: "docker"}, "alice"); err != nil {
		t.Fatal(err)
	}
	mustPublish(t, f, "elsewhere", `{"image":"a"}`)

	pinned := planTenant("refused", "nothing", 1)
	pinned.Plan.Pinned = true
	for _, tt := range []struct {
		name    string
		in      *tenant.Tenant
		pointer string
	}{
		{"no such plan", planTenant("refused", "nothing", 1), "/plan/name"},
		{"no such plan, pinned", pinned, "/plan/name"},
		{"no such version", planTenant("refused", "standard", 2), "/plan/version"},
		{"a plan without versions", planTenant("refused", "empty", 1), "/plan/version"},
		{"a plan of another provider", planTenant("refused", "elsewhere", 1), "/plan/name"},
	} {
		_, err := s.Create(ctx, tt.in, "test")
		wantPlanNotFound(t, "Create on "+tt.name, err, tt.pointer)
	}
	if _, err := s.Get(ctx, "refused", tenant.GetOptions{IncludeDeleted: true}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("Get of a tenant whose creates were refused = %v, want ErrNotFound", err)
	}

	// Deleted after the caller looked it up; created again for another
	// provider, with a version of the same number.
	mustPlan(t, f, "gone")
	mustPublish(t, f, "gone", `{"image":"a"}`)
	if err := f.DeletePlan(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Create(ctx, planTenant("late", "gone", 1), "test")
	wantPlanNotFound(t, "Create on a deleted plan", err, "/plan/name")
	if _, err := f.CreatePlan(ctx, &fleet.Plan{Name: "gone", Provider: "docker"}, "alice"); err != nil {
		t.Fatal(err)
	}
	mustPublish(t, f, "gone", `{"image":"b"}`)
	_, err = s.Create(ctx, planTenant("late", "gone", 1), "test")
	wantPlanNotFound(t, "Create on a plan created again for another provider", err, "/plan/name")

	// UpdateDesired: a change of plan, version or pin is checked; the
	// tenant stays as it was when refused.
	plain := mustCreate(t, s, newTenant("plain"))
	follower := mustCreate(t, s, planTenant("follower", "standard", 1))
	move := func(cur *tenant.Tenant, ref *tenant.PlanRef) (*tenant.Tenant, error) {
		return s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
			Labels: cur.Labels, Annotations: cur.Annotations, Plan: ref, Actor: "alice"})
	}
	for _, tt := range []struct {
		name    string
		cur     *tenant.Tenant
		ref     tenant.PlanRef
		pointer string
	}{
		{"onto no such plan", plain, tenant.PlanRef{Name: "nothing", Version: 1}, "/plan/name"},
		{"onto a deleted plan's name", plain, tenant.PlanRef{Name: "gone", Version: 1}, "/plan/name"},
		{"onto no such version", plain, tenant.PlanRef{Name: "standard", Version: 2}, "/plan/version"},
		{"to no such version", follower, tenant.PlanRef{Name: "standard", Version: 2}, "/plan/version"},
		{"to no such version, pinned", follower, tenant.PlanRef{Name: "standard", Version: 2, Pinned: true}, "/plan/version"},
		{"to a plan of another provider", follower, tenant.PlanRef{Name: "elsewhere", Version: 1}, "/plan/name"},
	} {
		_, err := move(tt.cur, &tt.ref)
		wantPlanNotFound(t, "UpdateDesired "+tt.name, err, tt.pointer)
		sameTenant(t, "Get after a refused UpdateDesired "+tt.name, mustGet(t, s, tt.cur.ID), tt.cur)
	}
	// Allowed: onto a plan that exists, a pin, leaving the plan.
	onto, err := move(plain, &tenant.PlanRef{Name: "standard", Version: 1})
	if err != nil {
		t.Fatalf("UpdateDesired onto standard v1: %v", err)
	}
	pin, err := move(follower, &tenant.PlanRef{Name: "standard", Version: 1, Pinned: true})
	if err != nil || !pin.Plan.Pinned {
		t.Fatalf("UpdateDesired pinning = %+v, %v", pin, err)
	}
	if left, err := move(onto, nil); err != nil || left.Plan != nil {
		t.Fatalf("UpdateDesired leaving the plan = %+v, %v", left, err)
	}
}

// testFollowIdempotentChecksPlan: CreateIdempotent checks the plan as
// Create does and, refused, keeps no response: the reservation stays
// pending. A reservation no longer pending is reported first.
func testFollowIdempotentChecksPlan(t *testing.T, s tenant.Store) {
	is := mustIdempotencyStore(t, s)
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)

	res := mustReserve(t, is, "alice", "key-1", "h1", time.Hour)
	_, err := is.CreateIdempotent(ctx, planTenant("refused", "standard", 2), "alice", res, respondCreated)
	wantPlanNotFound(t, "CreateIdempotent on no such version", err, "/plan/version")
	_, err = is.CreateIdempotent(ctx, planTenant("refused", "nothing", 1), "alice", res, respondCreated)
	wantPlanNotFound(t, "CreateIdempotent on no such plan", err, "/plan/name")
	if got, err := is.GetIdempotent(ctx, "alice", "key-1"); err != nil || !got.Pending() {
		t.Errorf("the reservation after refused creates = %+v, %v; want it pending", got, err)
	}
	if _, err := s.Get(ctx, "refused", tenant.GetOptions{}); !errors.Is(err, tenant.ErrNotFound) {
		t.Errorf("Get of a tenant whose creates were refused = %v, want ErrNotFound", err)
	}
	created, err := is.CreateIdempotent(ctx, planTenant("kept", "standard", 1), "alice", res, respondCreated)
	if err != nil || created.Plan == nil || *created.Plan != (tenant.PlanRef{Name: "standard", Version: 1}) {
		t.Fatalf("CreateIdempotent on standard v1 = %+v, %v", created, err)
	}
	if got, err := is.GetIdempotent(ctx, "alice", "key-1"); err != nil || got.Pending() || got.Status != 201 {
		t.Errorf("the reservation after the create = %+v, %v; want the response kept", got, err)
	}
	// Completed: lost, whatever the plan.
	_, err = is.CreateIdempotent(ctx, planTenant("again", "nothing", 1), "alice", res, respondCreated)
	wantErr(t, "CreateIdempotent of a completed reservation on no such plan", err, tenant.ErrReservationLost)
}

// testDeletePlanRacesFollowers: a plan's deletion racing a tenant's
// create on it, or a tenant's move onto it, ends one way or the other —
// the tenant follows the plan and the deletion is refused, or the plan is
// deleted and the tenant's write refused — never with a tenant following
// a plan that no longer exists.
func testDeletePlanRacesFollowers(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	const rounds = 30
	for i := range rounds {
		plan := fmt.Sprintf("p%d", i)
		mustPlan(t, f, plan)
		mustPublish(t, f, plan, `{"image":"a"}`)
		var (
			follow, del error
			wg          sync.WaitGroup
			moved       = i%2 == 1 // odd rounds move a tenant onto the plan
			plain       *tenant.Tenant
		)
		if moved {
			plain = mustCreate(t, s, newTenant(fmt.Sprintf("t%d", i)))
		}
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			if moved {
				_, follow = s.UpdateDesired(ctx, plain.ID, tenant.DesiredChange{Version: plain.Version, ComputeConfig: plain.ComputeConfig,
					Plan: &tenant.PlanRef{Name: plan, Version: 1}, Actor: "alice"})
			} else {
				_, follow = s.Create(ctx, planTenant(fmt.Sprintf("t%d", i), plan, 1), "alice")
			}
		})
		wg.Go(func() {
			<-start
			del = f.DeletePlan(ctx, plan)
		})
		close(start)
		wg.Wait()
		switch {
		case follow == nil && errors.Is(del, fleet.ErrInUse):
		case errors.Is(follow, tenant.ErrPlanNotFound) && del == nil:
		default:
			t.Errorf("round %d (move %t): the tenant's write = %v, DeletePlan = %v; want one refused", i, moved, follow, del)
		}
		_, planErr := f.GetPlan(ctx, plan)
		followers := listAll(t, s, tenant.ListOptions{Plan: plan})
		if errors.Is(planErr, fleet.ErrNotFound) && len(followers) > 0 {
			t.Errorf("round %d: plan %s is gone but %v follow it", i, plan, names(followers))
		}
	}
}

// testCompletionWaitsForNewcomers: a rollout does not complete while a
// tenant it would take (fleet.Select's candidates) is not its member — one
// that began to follow the plan after the driver last looked — so that the
// driver, told of the conflict, adds it to the last wave rather than leave
// it on the old version. Pinned tenants, tenants being deleted, tenants
// at the target, of other plans, and (with Spec.From) on another version
// than From do not hold it.
func testCompletionWaitsForNewcomers(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	for _, plan := range []string{"standard", "premium"} {
		mustPlan(t, f, plan)
		for v := range 3 {
			mustPublish(t, f, plan, fmt.Sprintf(`{"image":"%s:%d"}`, plan, v+1))
		}
	}
	member := mustCreate(t, s, planTenant("member", "standard", 1))
	pinned := planTenant("pinned", "standard", 1)
	pinned.Plan.Pinned = true
	mustCreate(t, s, pinned)
	mustCreate(t, s, planTenant("target", "standard", 2))
	mustCreate(t, s, planTenant("beyond", "standard", 3)) // neither From nor To
	mustCreate(t, s, planTenant("premium", "premium", 1))
	mustCreate(t, s, newTenant("none"))
	if _, err := s.RequestDeletion(ctx, mustCreate(t, s, planTenant("deleting", "standard", 1)).ID, 0, "test"); err != nil {
		t.Fatal(err)
	}
	mustDelete(t, s, mustCreate(t, s, planTenant("deleted", "standard", 1)))

	r, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", From: 1, To: 2}, CreatedBy: "alice"},
		[]fleet.Member{{TenantID: member.ID, TenantName: member.Name, From: 1}})
	if err != nil {
		t.Fatal(err)
	}
	complete := func(r *fleet.Rollout) (*fleet.Rollout, error) {
		cur, err := f.GetRollout(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		cur.State, cur.FinishedAt = fleet.StateCompleted, &now
		return f.UpdateRollout(ctx, cur, fleet.Event{Type: fleet.EventCompleted, Actor: "driver"})
	}
	refused := func(what string, r *fleet.Rollout, newcomers ...string) {
		t.Helper()
		before, err := f.GetRollout(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		current := mustGetPlan(t, f, r.Spec.Plan).Current
		_, err = complete(r)
		wantErr(t, "completion "+what, err, fleet.ErrConflict)
		for _, name := range newcomers {
			if err != nil && !strings.Contains(err.Error(), name) {
				t.Errorf("completion %s: %v, want it to name %s", what, err, name)
			}
		}
		after, _ := f.GetRollout(ctx, r.ID)
		if after.State != before.State || after.Version != before.Version {
			t.Errorf("a refused completion %s left the rollout %s at version %d (was %s at %d)", what, after.State, after.Version, before.State, before.Version)
		}
		if p := mustGetPlan(t, f, r.Spec.Plan); p.Current != current {
			t.Errorf("a refused completion %s moved the plan's current version to %d", what, p.Current)
		}
		if evs := mustRolloutEvents(t, f, r.ID); evs[len(evs)-1].Type == fleet.EventCompleted {
			t.Errorf("a refused completion %s recorded its event", what)
		}
	}

	// Two tenants begin to follow the plan after the rollout started: one
	// created on it, one unpinned.
	late := mustCreate(t, s, planTenant("late", "standard", 1))
	unpin := planTenant("unpinned", "standard", 1)
	unpin.Plan.Pinned = true
	unpinned := mustCreate(t, s, unpin)
	refused("with a newcomer", r, "late")
	if _, err := s.UpdateDesired(ctx, unpinned.ID, tenant.DesiredChange{Version: unpinned.Version, ComputeConfig: unpinned.ComputeConfig,
		Labels: unpinned.Labels, Annotations: unpinned.Annotations, Plan: &tenant.PlanRef{Name: "standard", Version: 1}, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	// A member, in whatever state, or a pinned tenant, no longer holds it.
	if err := f.AddMembers(ctx, r.ID, []fleet.Member{{TenantID: late.ID, TenantName: late.Name, Wave: 0, From: 1}}); err != nil {
		t.Fatal(err)
	}
	refused("with a tenant unpinned after the start", r, "unpinned")
	if err := f.UpdateMember(ctx, r.ID, fleet.Member{TenantID: late.ID, State: fleet.MemberSkipped, Message: "moved"}, fleet.MemberPending); err != nil {
		t.Fatal(err)
	}
	cur := mustGet(t, s, unpinned.ID)
	if _, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
		Labels: cur.Labels, Annotations: cur.Annotations, Plan: &tenant.PlanRef{Name: "standard", Version: 1, Pinned: true}, Actor: "alice"}); err != nil {
		t.Fatal(err)
	}
	done, err := complete(r)
	if err != nil || done.State != fleet.StateCompleted {
		t.Fatalf("completion with every candidate a member or pinned = %+v, %v", done, err)
	}
	if p := mustGetPlan(t, f, "standard"); p.Current != 2 {
		t.Errorf("after the completion: current version %d, want 2", p.Current)
	}

	// Without From, a tenant on any version but the target is a candidate.
	r2, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "premium", To: 2}, CreatedBy: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	beyond := mustCreate(t, s, planTenant("premium-3", "premium", 3))
	refused("of a rollout without From, with tenants on other versions", r2, "premium", "premium-3")
	var members []fleet.Member
	for _, name := range []string{"premium", "premium-3"} {
		tn := mustGet(t, s, name)
		members = append(members, fleet.Member{TenantID: tn.ID, TenantName: tn.Name, From: tn.Plan.Version})
	}
	if err := f.AddMembers(ctx, r2.ID, members); err != nil {
		t.Fatal(err)
	}
	if _, err := complete(r2); err != nil {
		t.Fatalf("completion once the tenants are members: %v", err)
	}
	if ms := mustMembers(t, f, r2.ID); !slices.ContainsFunc(ms, func(m fleet.Member) bool { return m.TenantID == beyond.ID }) {
		t.Errorf("members %+v lack %s", ms, beyond.Name)
	}
}
