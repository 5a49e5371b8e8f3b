package tenant_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A move makes its tenant updating in the write that asks for it, with
// that status's event, rather than at the controller's first look: the
// answer to the request says so, and a landlord that stops before that
// look finds the move among its work (NeedsWork, as ListWork) again.
func TestMoveStartMakesTheTenantUpdating(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cur, _, err := tenant.NewTenant(&tenant.Tenant{Name: "acme", Provider: "docker", ComputeConfig: json.RawMessage(`{"image": "app:1"}`)}, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		if cur, _, err = tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Status: s, Settles: s == tenant.StatusReady}, now); err != nil {
			t.Fatalf("observe %s: %v", s, err)
		}
	}
	if cur.Status != tenant.StatusReady || cur.NeedsWork() {
		t.Fatalf("before the move the tenant is %s, needs work %t; want ready and not", cur.Status, cur.NeedsWork())
	}
	next, events, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, Actor: "test",
		Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "nomad", ComputeConfig: json.RawMessage(`{"image": "app:1"}`)}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Status != tenant.StatusUpdating || !next.NeedsWork() {
		t.Errorf("the tenant a move starts is %s, needs work %t; want updating and does", next.Status, next.NeedsWork())
	}
	var status []tenant.Event
	for _, ev := range events {
		if ev.Type == tenant.EventStatus {
			status = append(status, ev)
		}
	}
	if len(status) != 1 || status[0].From != tenant.StatusReady || status[0].To != tenant.StatusUpdating {
		t.Errorf("the move's status events are %+v, want one from ready to updating", status)
	}
	next, _, err = tenant.ApplyDesired(next, tenant.DesiredChange{Version: next.Version, Move: &tenant.MoveAction{Kind: tenant.MoveCancel}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if next.Status != tenant.StatusUpdating {
		t.Errorf("the tenant of a cancelled move, its target not yet destroyed, is %s; want updating", next.Status)
	}
}

// readyTenant is a new tenant of one placement, ready at its generation,
// following plan (nil: none).
func readyTenant(t *testing.T, plan *tenant.PlanRef, now time.Time) *tenant.Tenant {
	t.Helper()
	cur, _, err := tenant.NewTenant(&tenant.Tenant{Name: "acme", Provider: "docker", ComputeConfig: json.RawMessage(`{"env": {"A": "1"}}`), Plan: plan}, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		if cur, _, err = tenant.ApplyObservation(cur, tenant.Observation{Generation: cur.Generation, Status: s, Settles: s == tenant.StatusReady}, now); err != nil {
			t.Fatalf("observe %s: %v", s, err)
		}
	}
	return cur
}

// A tenant on a plan moves only onto another plan (whose config is for the
// target's provider): its target follows that plan, the switch makes it
// the tenant's and keeps the source's with the move, and a cancel leaves
// the tenant on its plan.
func TestMoveOntoAPlan(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	source, target := &tenant.PlanRef{Name: "standard", Version: 3}, &tenant.PlanRef{Name: "standard-nomad", Version: 1}
	cur := readyTenant(t, source, now)
	start := func(plan *tenant.PlanRef) (*tenant.Tenant, error) {
		next, _, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version,
			Move: &tenant.MoveAction{Kind: tenant.MoveStart, Provider: "nomad", ComputeConfig: json.RawMessage(`{}`), Plan: plan}}, now)
		return next, err
	}
	if _, err := start(nil); !errors.Is(err, tenant.ErrMoving) || !strings.Contains(err.Error(), "--plan") {
		t.Errorf("a move of a tenant on a plan without a plan for its target: %v; want ErrMoving saying to name one", err)
	}
	if follows := tenant.NewFollows(cur, cur); len(follows) != 0 {
		t.Errorf("a write that changes no plan checks %v; want none", follows)
	}
	moving, err := start(target)
	if err != nil {
		t.Fatal(err)
	}
	if follows := tenant.NewFollows(cur, moving); len(follows) != 1 || follows[0] != (tenant.Follow{Plan: *target, Provider: "nomad"}) {
		t.Errorf("the move's write checks %v; want its target's plan on nomad", follows)
	}
	if follows := tenant.NewFollows(moving, moving); len(follows) != 0 {
		t.Errorf("a later write of the moving tenant checks %v; want none (the move's plan was checked as it started)", follows)
	}
	if *moving.Plan != *source {
		t.Errorf("the moving tenant follows %v; want %v until the switch", moving.Plan, source)
	}
	view, err := moving.OtherView(tenant.DefaultPlacement)
	if err != nil {
		t.Fatal(err)
	}
	if view.Plan == nil || *view.Plan != *target || view.Provider != "nomad" {
		t.Errorf("the target's view follows %v on %s; want %v on nomad", view.Plan, view.Provider, target)
	}

	cancelled, _, err := tenant.ApplyDesired(moving, tenant.DesiredChange{Version: moving.Version, Move: &tenant.MoveAction{Kind: tenant.MoveCancel}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if *cancelled.Plan != *source {
		t.Errorf("a cancelled move leaves the tenant on %v; want %v", cancelled.Plan, source)
	}

	// The target runs: the switch makes its plan the tenant's.
	other := func(cur *tenant.Tenant, obs tenant.Observation) *tenant.Tenant {
		t.Helper()
		obs.Generation, obs.Other = cur.Generation, true
		next, _, err := tenant.ApplyObservation(cur, obs, now)
		if err != nil {
			t.Fatalf("observe the move's workload %+v: %v", obs, err)
		}
		return next
	}
	moving = other(moving, tenant.Observation{Status: tenant.StatusProvisioning})
	moving = other(moving, tenant.Observation{Status: tenant.StatusReady, Settles: true})
	switched := other(moving, tenant.Observation{Status: tenant.StatusReady, Settles: true, MoveStep: tenant.MoveDestroyingSource})
	if switched.Plan == nil || *switched.Plan != *target || switched.Provider != "nomad" {
		t.Errorf("after the switch the tenant follows %v on %s; want %v on nomad", switched.Plan, switched.Provider, target)
	}
	if view, err = switched.OtherView(tenant.DefaultPlacement); err != nil || view.Plan == nil || *view.Plan != *source || view.DeletionRequestedAt == nil {
		t.Errorf("the source's view after the switch: %+v, %v; want it on %v, to destroy", view, err, source)
	}
	if follows := tenant.NewFollows(moving, switched); len(follows) != 0 {
		t.Errorf("the switch checks %v; want none (the plan was checked as the move started)", follows)
	}
	done := other(switched, tenant.Observation{Status: tenant.StatusDeleting})
	done = other(done, tenant.Observation{Status: tenant.StatusDeleted})
	if done.Moving() || done.Status != tenant.StatusReady || *done.Plan != *target {
		t.Errorf("after the source is destroyed the tenant is %s, moving %t, on %v; want ready, not moving, on %v", done.Status, done.Moving(), done.Plan, target)
	}
}
