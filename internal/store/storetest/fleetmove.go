package storetest

import (
	"encoding/json"
	"github.com/jaxxstorm/landlord/internal/events"
	"slices"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// mustObserveOther records status for the workload of the move of cur's
// one placement that does not serve, with step (or none).
func mustObserveOther(t *testing.T, s tenant.Store, cur *tenant.Tenant, status tenant.Status, step tenant.MoveStep) *tenant.Tenant {
	t.Helper()
	out, err := s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Other: true, Status: status,
		Settles: status.Settled(), MoveStep: step, Actor: "controller"})
	if err != nil {
		t.Fatalf("UpdateObserved(the move's workload → %s %s): %v", status, step, err)
	}
	return out
}

// fleetMovePlans are plan standard on mock, with versions 1 and 2, and
// plan elsewhere on docker, with version 1: a fleet move's source and
// target.
func fleetMovePlans(t *testing.T, s tenant.Store) fleet.Store {
	t.Helper()
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	mustPublish(t, f, "standard", `{"image":"b"}`)
	if _, err := f.CreatePlan(ctx, &fleet.Plan{Name: "elsewhere", Provider: "docker"}, "alice"); err != nil {
		t.Fatal(err)
	}
	mustPublish(t, f, "elsewhere", `{"image":"e"}`)
	return f
}

// testFleetMove: a fleet move (Spec.ToPlan) is created only onto a plan
// of its ToProvider that has its version; MoveTenant starts the member's
// tenant's move onto that plan, checked in its transaction; the plan a
// move or a fleet move targets cannot be deleted; the switch makes the
// tenant follow it (lists by plan find it there); and the fleet move's
// completion leaves the source plan's current version as it was.
func testFleetMove(t *testing.T, s tenant.Store) {
	f := fleetMovePlans(t, s)
	cur := mustCreate(t, s, planTenant("acme", "standard", 1))
	cur = mustObserve(t, s, mustObserve(t, s, cur, tenant.StatusProvisioning), tenant.StatusReady)
	members := []fleet.Member{{TenantID: cur.ID, TenantName: cur.Name, From: 1}}

	spec := fleet.Spec{Plan: "standard", ToPlan: "elsewhere", ToProvider: "docker", To: 1}
	for what, bad := range map[string]fleet.Spec{
		"onto a plan of another provider": {Plan: "standard", ToPlan: "elsewhere", ToProvider: "nomad", To: 1},
		"onto no version of the plan":     {Plan: "standard", ToPlan: "elsewhere", ToProvider: "docker", To: 2},
		"onto no plan":                    {Plan: "standard", ToPlan: "nowhere", ToProvider: "docker", To: 1},
	} {
		_, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: bad, CreatedBy: "alice"}, members)
		wantErr(t, "CreateRollout "+what, err, fleet.ErrNotFound)
	}
	r, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: spec, Waves: []fleet.AssignedWave{{Wave: fleet.Wave{Name: fleet.RestWave}, Size: 1}}, CreatedBy: "alice"}, members)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.GetRollout(ctx, r.ID); err != nil || got.Spec.ToPlan != "elsewhere" || got.Spec.ToProvider != "docker" {
		t.Fatalf("the fleet move as stored: %+v, %v; want its target plan and provider", got, err)
	}
	wantErr(t, "DeletePlan of a fleet move's target plan", f.DeletePlan(ctx, "elsewhere"), fleet.ErrInUse)

	m, err := f.MoveTenant(ctx, r.ID, fleet.Move{TenantID: cur.ID, Expect: fleet.MemberPending, To: 1, State: fleet.MemberChanging, Actor: "controller", Message: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	if m.State != fleet.MemberChanging {
		t.Fatalf("the member after MoveTenant is %s (%s); want changing", m.State, m.Message)
	}
	moving := mustGet(t, s, cur.ID)
	p := moving.Placement(tenant.DefaultPlacement)
	if p == nil || p.Move == nil || p.Move.To != "docker" || p.Move.Plan == nil || *p.Move.Plan != (tenant.PlanRef{Name: "elsewhere", Version: 1}) ||
		moving.Plan.Name != "standard" {
		t.Fatalf("the tenant after MoveTenant: plan %v, placement %+v; want on standard, moving onto elsewhere v1 on docker", moving.Plan, p)
	}
	if !json.Valid(p.Move.Other.ComputeConfig) {
		t.Errorf("the target's config %q is not JSON", p.Move.Other.ComputeConfig)
	}

	// The fleet move ends; the tenant's own move still holds the plan.
	now := time.Now()
	aborted := *r
	aborted.State, aborted.FinishedAt = fleet.StateAborted, &now
	if _, err := f.UpdateRollout(ctx, &aborted); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "DeletePlan of a plan a tenant moves onto", f.DeletePlan(ctx, "elsewhere"), fleet.ErrInUse)

	moving = mustObserveOther(t, s, moving, tenant.StatusProvisioning, "")
	moving = mustObserveOther(t, s, moving, tenant.StatusReady, "")
	switched := mustObserveOther(t, s, moving, tenant.StatusReady, tenant.MoveDestroyingSource)
	checkMovedPublished(t, s, cur.ID)
	if got := mustGet(t, s, cur.ID); got.Plan == nil || got.Plan.Name != "elsewhere" || got.Provider != "docker" {
		t.Fatalf("after the switch the tenant follows %v on %s; want elsewhere on docker", got.Plan, got.Provider)
	}
	if on := names(listAll(t, s, tenant.ListOptions{Plan: "elsewhere"})); !slices.Equal(on, []string{"acme"}) {
		t.Errorf("the tenants of plan elsewhere after the switch: %v; want acme", on)
	}
	if on := listAll(t, s, tenant.ListOptions{Plan: "standard"}); len(on) != 0 {
		t.Errorf("the tenants of plan standard after the switch: %v; want none", names(on))
	}
	wantErr(t, "DeletePlan of the plan a switched move's source followed", f.DeletePlan(ctx, "standard"), fleet.ErrInUse)
	done := mustObserveOther(t, s, mustObserveOther(t, s, switched, tenant.StatusDeleting, ""), tenant.StatusDeleted, "")
	if done.Moving() || done.Status != tenant.StatusReady {
		t.Fatalf("after its source is destroyed the tenant is %s, moving %t; want ready, not moving", done.Status, done.Moving())
	}
	if err := f.DeletePlan(ctx, "standard"); err != nil {
		t.Errorf("DeletePlan of the plan no tenant follows or moves off any more: %v", err)
	}

	// A move onto a plan that does not exist is refused in its write.
	_, err = s.UpdateDesired(ctx, done.ID, tenant.DesiredChange{Version: done.Version, Move: &tenant.MoveAction{Kind: tenant.MoveStart,
		Provider: "mock", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "nowhere", Version: 1}}})
	wantErr(t, "a move onto no plan", err, tenant.ErrPlanNotFound)
}

// testFleetMoveCompletion: a fleet move completes as a rollout does,
// refused while a follower of its plan is not its member, but leaves the
// plan's current version as it was.
func testFleetMoveCompletion(t *testing.T, s tenant.Store) {
	f := fleetMovePlans(t, s)
	r, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", ToPlan: "elsewhere", ToProvider: "docker", To: 1}, CreatedBy: "alice"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	late := mustCreate(t, s, planTenant("late", "standard", 1)) // on a version other than the fleet move's To, but of another plan
	now := time.Now()
	completed := *r
	completed.State, completed.FinishedAt = fleet.StateCompleted, &now
	_, err = f.UpdateRollout(ctx, &completed)
	wantErr(t, "the completion of a fleet move a follower of whose plan is no member", err, fleet.ErrConflict)
	mustDelete(t, s, late)
	if _, err := f.UpdateRollout(ctx, &completed); err != nil {
		t.Fatal(err)
	}
	if p := mustGetPlan(t, f, "standard"); p.Current != 1 {
		t.Errorf("plan standard's current version after a fleet move off it: %d; want 1, as it was", p.Current)
	}
	if p := mustGetPlan(t, f, "elsewhere"); p.Current != 1 {
		t.Errorf("plan elsewhere's current version after a fleet move onto it: %d; want 1, as it was", p.Current)
	}
}

// checkMovedPublished checks that the switch of tenant id's move was
// published, once, as landlord.placement.moved with the tenant as
// switched: on the target's provider.
func checkMovedPublished(t *testing.T, s tenant.Store, id string) {
	t.Helper()
	es, ok := s.(events.Store)
	if !ok {
		return
	}
	var moved []events.Record
	for _, r := range mustOutbox(t, es, 0) {
		if r.Type == events.PlacementMoved && r.Key == id {
			moved = append(moved, r)
		}
	}
	if len(moved) != 1 || moved[0].Tenant == nil || moved[0].Tenant.Provider != "docker" || moved[0].History == nil || moved[0].History.Type != tenant.EventMove {
		t.Errorf("the switch published %d landlord.placement.moved events (%+v), want one with the tenant on docker", len(moved), moved)
	}
}
