package postgres

import (
	"encoding/json"
	"testing"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant on a plan, with a maintenance window, still has HOT status
// transitions: tenants_plan_idx reads plan_name, which an observation
// writes unchanged (migration 00006).
func TestPlanTenantTransitionsAreHOT(t *testing.T) {
	s, _ := mustOpen(t, Options{MaxConns: 1})
	if _, err := s.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "mock"}, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishVersion(ctx, "standard", json.RawMessage(`{}`), "", "test"); err != nil {
		t.Fatal(err)
	}
	cur, err := s.Create(ctx, &tenant.Tenant{Name: "hot", Provider: "mock", ComputeConfig: []byte(`{"image":"a"}`),
		Plan: &tenant.PlanRef{Name: "standard", Version: 1}, MaintenanceWindow: &tenant.Window{Start: "01:00", End: "02:00"}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, obs := range []tenant.Observation{
		{Generation: 1, Status: tenant.StatusProvisioning},
		{Generation: 1, Status: tenant.StatusReady, Settles: true},
	} {
		if cur, err = s.UpdateObserved(ctx, cur.ID, obs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	var updates, hot int64
	err = s.pool.QueryRow(ctx, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'tenants'").Scan(&updates, &hot)
	if err != nil {
		t.Fatal(err)
	}
	if updates != 2 || hot != 2 {
		t.Errorf("%d updates of which %d HOT, want 2 of which 2", updates, hot)
	}
}

// MoveTenant takes three round trips: BEGIN with the tenant's lock, the
// rollout's and the member's locks, the writes with COMMIT.
func TestMoveTenantRoundTrips(t *testing.T) {
	trips := &roundTrips{}
	s, _ := mustOpen(t, Options{Tracer: trips, MaxConns: 1})
	if _, err := s.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "mock"}, "test"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.PublishVersion(ctx, "standard", json.RawMessage(`{}`), "", "test"); err != nil {
			t.Fatal(err)
		}
	}
	var members []fleet.Member
	for _, name := range []string{"warm", "counted"} {
		tn, err := s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: []byte(`{}`), Plan: &tenant.PlanRef{Name: "standard", Version: 1}}, "test")
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, fleet.Member{TenantID: tn.ID, TenantName: name, From: 1})
	}
	r, err := s.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", To: 2}}, members)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range members {
		before := trips.n.Load()
		if _, err := s.MoveTenant(ctx, r.ID, fleet.Move{TenantID: m.TenantID, Expect: fleet.MemberPending, To: 2, State: fleet.MemberChanging}); err != nil {
			t.Fatal(err)
		}
		if got := trips.n.Load() - before; i == 1 && got != 3 {
			t.Errorf("MoveTenant: %d round trips, want 3", got)
		}
	}
}
