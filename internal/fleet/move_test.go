package fleet

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// moveSpec moves the tenants of plan standard (on mock) onto plan
// standard-nomad, version 1, on nomad.
func moveSpec(waves ...Wave) Spec {
	return Spec{Plan: "standard", ToPlan: "standard-nomad", ToProvider: "nomad", To: 1, Waves: waves}
}

// observeOther records obs of the workload of name's move that does not
// serve, as the controller does.
func (s *sim) observeOther(name string, obs tenant.Observation) {
	s.t.Helper()
	cur := s.tenants[s.memberNamed(name).TenantID]
	obs.Generation, obs.Other = cur.Generation, true
	next, _, err := tenant.ApplyObservation(cur, obs, s.now)
	if err != nil {
		s.t.Fatalf("observe the move of %s (%+v): %v", name, obs, err)
	}
	s.tenants[next.ID] = next
}

// switchMove runs name's move's target until it switches.
func (s *sim) switchMove(name string) {
	s.observeOther(name, tenant.Observation{Status: tenant.StatusProvisioning})
	s.observeOther(name, tenant.Observation{Status: tenant.StatusReady, Settles: true})
	s.observeOther(name, tenant.Observation{Status: tenant.StatusReady, Settles: true, MoveStep: tenant.MoveDestroyingSource})
}

// finishMove runs name's move to its end: the target switched to, the
// source destroyed.
func (s *sim) finishMove(name string) {
	if s.tenantNamed(name).Placement(tenant.DefaultPlacement).Move.Step != tenant.MoveDestroyingSource {
		s.switchMove(name)
	}
	s.observeOther(name, tenant.Observation{Status: tenant.StatusDeleting})
	s.observeOther(name, tenant.Observation{Status: tenant.StatusDeleted})
}

func (s *sim) tenantNamed(name string) *tenant.Tenant { return s.tenants[s.memberNamed(name).TenantID] }

// A fleet move takes the plan's tenants onto the target plan in waves: a
// member is done once its tenant's move is (switched, the source
// destroyed) and it is ready on the target; the rollout completes with
// every tenant on the target plan and provider.
func TestFleetMoveInWaves(t *testing.T) {
	s := newSim(t, moveSpec(Wave{Name: "one", Count: 2}, Wave{Name: "two", Count: 2}), fleetOf(5))
	s.step()
	if c := s.states(); c[MemberChanging] != 2 || c[MemberPending] != 3 {
		t.Fatalf("after the first step the members are %v; want 2 changing, 3 pending", c)
	}
	for _, name := range []string{"t00", "t01"} {
		tn := s.tenantNamed(name)
		p := tn.Placement(tenant.DefaultPlacement)
		if p == nil || p.Move == nil || p.Move.To != "nomad" || p.Move.Plan == nil || *p.Move.Plan != (tenant.PlanRef{Name: "standard-nomad", Version: 1}) {
			t.Fatalf("%s after the first step: %+v; want its placement moving to nomad onto standard-nomad v1", name, p)
		}
	}
	s.switchMove("t00")
	s.step()
	if m := s.memberNamed("t00"); m.State != MemberChanging {
		t.Fatalf("a member whose move switched but whose source is not destroyed yet is %s; want changing", m.State)
	}
	for s.r.State == StateRunning {
		for _, m := range s.members {
			if m.State == MemberChanging && s.tenants[m.TenantID].Moving() {
				s.finishMove(m.TenantName)
			}
		}
		s.step()
	}
	if s.r.State != StateCompleted {
		t.Fatalf("the rollout is %s (%s); want completed", s.r.State, s.r.Message)
	}
	if c := s.states(); c[MemberDone] != 5 {
		t.Fatalf("members %v; want 5 done", c)
	}
	for _, tn := range s.tenants {
		if tn.Plan == nil || tn.Plan.Name != "standard-nomad" || tn.Provider != "nomad" || tn.Moving() || tn.Status != tenant.StatusReady {
			t.Errorf("%s after the fleet move: plan %v on %s, moving %t, %s; want ready on standard-nomad on nomad", tn.Name, tn.Plan, tn.Provider, tn.Moving(), tn.Status)
		}
	}
}

// An abort with rollback cancels the moves that have not switched (their
// sources still serve) and leaves those that did on the target.
func TestFleetMoveAbortCancelsUnswitchedMoves(t *testing.T) {
	s := newSim(t, moveSpec(Wave{Name: "one", Count: 3}), fleetOf(4))
	s.step()
	s.finishMove("t00")
	s.switchMove("t01")
	s.step()
	if m := s.memberNamed("t00"); m.State != MemberDone {
		t.Fatalf("t00, moved, is %s; want done", m.State)
	}
	s.r.State, s.r.Rollback = StateAborting, true
	d := s.step()
	if s.r.State != StateAborted {
		t.Fatalf("the rollout is %s; want aborted", s.r.State)
	}
	if len(d.Events) != 1 || !strings.Contains(d.Events[0].Message, "the moves of 2 tenants cancelled") {
		t.Errorf("the abort's events: %+v; want one saying 2 moves were cancelled", d.Events)
	}
	want := map[string]MemberState{"t00": MemberDone, "t01": MemberSkipped, "t02": MemberRolledBack, "t03": MemberPending}
	for name, state := range want {
		if m := s.memberNamed(name); m.State != state {
			t.Errorf("%s is %s (%s); want %s", name, m.State, m.Message, state)
		}
	}
	if p := s.tenantNamed("t02").Placement(tenant.DefaultPlacement); p.Move == nil || p.Move.Step != tenant.MoveCancelling {
		t.Errorf("t02's move after the abort: %+v; want cancelling", p.Move)
	}
	if tn := s.tenantNamed("t01"); tn.Plan.Name != "standard-nomad" {
		t.Errorf("t01, switched, follows %v after the abort; want standard-nomad", tn.Plan)
	}
}

// A tenant the move refuses (not ready) fails as a member, counting
// against the budget; one whose move someone cancels is skipped.
func TestFleetMoveRefusedAndCancelled(t *testing.T) {
	tenants := fleetOf(3)
	tenants[1].Status, tenants[1].StatusMessage = tenant.StatusFailed, "exit code 1"
	s := newSim(t, Spec{Plan: "standard", ToPlan: "standard-nomad", ToProvider: "nomad", To: 1, MaxFailures: 1}, tenants)
	s.step()
	if m := s.memberNamed("t01"); m.State != MemberFailed || !strings.Contains(m.Message, "cannot be moved") {
		t.Errorf("t01, failed, is %s (%s); want failed: cannot be moved", m.State, m.Message)
	}
	cur := s.tenantNamed("t02")
	cancelled, _, err := tenant.ApplyDesired(cur, tenant.DesiredChange{Version: cur.Version, Move: &tenant.MoveAction{Kind: tenant.MoveCancel}}, s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.tenants[cancelled.ID] = cancelled
	s.observeOther("t02", tenant.Observation{Status: tenant.StatusDeleting})
	s.observeOther("t02", tenant.Observation{Status: tenant.StatusDeleted})
	s.step()
	if m := s.memberNamed("t02"); m.State != MemberSkipped || !strings.Contains(m.Message, "the move was cancelled") {
		t.Errorf("t02, its move cancelled by hand, is %s (%s); want skipped", m.State, m.Message)
	}
}

// A fleet move waits for a tenant still converging (a move starts from a
// running tenant), and a member whose move was refused stays failed:
// it never moved, so nothing was cancelled, and it never runs the target.
func TestFleetMoveWaitsForConvergingTenants(t *testing.T) {
	tenants := fleetOf(2)
	tenants[0].Status, tenants[0].ObservedGeneration = tenant.StatusProvisioning, 0
	tenants[1].Status, tenants[1].StatusMessage = tenant.StatusFailed, "exit code 1"
	s := newSim(t, Spec{Plan: "standard", ToPlan: "standard-nomad", ToProvider: "nomad", To: 1, MaxFailures: 1}, tenants)
	s.step()
	s.step()
	if m := s.memberNamed("t00"); m.State != MemberPending {
		t.Errorf("t00, being provisioned, is %s (%s); want pending until it runs", m.State, m.Message)
	}
	if m := s.memberNamed("t01"); m.State != MemberFailed {
		t.Errorf("t01, whose move was refused, is %s (%s) a step later; want failed still", m.State, m.Message)
	}
	ready := *s.tenantNamed("t00")
	ready.Status, ready.ObservedGeneration = tenant.StatusReady, ready.Generation
	s.tenants[ready.ID] = &ready
	s.step()
	if m := s.memberNamed("t00"); m.State != MemberChanging || !s.tenantNamed("t00").Moving() {
		t.Errorf("t00, ready now, is %s, moving %t; want changing, its move started", m.State, s.tenantNamed("t00").Moving())
	}
}
