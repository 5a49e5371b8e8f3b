package fleet

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) // a Wednesday

// fleetOf returns n tenants on plan standard v1, ready, named t00…, with
// the first labelled ring=canary.
func fleetOf(n int) []*tenant.Tenant {
	var out []*tenant.Tenant
	for i := range n {
		t := &tenant.Tenant{ID: fmt.Sprintf("0190a000-0000-7000-8000-%012d", i), Name: fmt.Sprintf("t%02d", i),
			Provider: "mock", ComputeConfig: []byte(`{}`), Version: 1,
			Plan: &tenant.PlanRef{Name: "standard", Version: 1}, Status: tenant.StatusReady, Generation: 1, ObservedGeneration: 1}
		if i == 0 {
			t.Labels = map[string]string{"ring": "canary"}
		}
		out = append(out, t)
	}
	return out
}

// sim is a rollout driven by Step against tenants held in memory, with
// ApplyMove's rules: what the driver and a store do, without either.
type sim struct {
	t       *testing.T
	r       *Rollout
	members []Member
	tenants map[string]*tenant.Tenant
	now     time.Time
	changes map[string]int // moves per tenant
}

func newSim(t *testing.T, spec Spec, tenants []*tenant.Tenant) *sim {
	waves, members := Assign(spec, Select(spec, tenants).Candidates)
	s := &sim{t: t, r: &Rollout{ID: "r1", Spec: spec, Waves: waves, State: StateRunning}, members: members,
		tenants: map[string]*tenant.Tenant{}, now: t0, changes: map[string]int{}}
	for _, tn := range tenants {
		s.tenants[tn.ID] = tn
	}
	return s
}

func (s *sim) member(id string) *Member {
	for i := range s.members {
		if s.members[i].TenantID == id {
			return &s.members[i]
		}
	}
	s.t.Fatalf("no member %s", id)
	return nil
}

// step runs one Step and applies its decision.
func (s *sim) step() Decision {
	s.t.Helper()
	d := Step(s.r, s.members, s.tenants, s.now, "controller")
	for _, st := range d.Settles {
		m := s.member(st.Member.TenantID)
		if m.State != st.Expect {
			s.t.Fatalf("settle of %s expects %s, is %s", m.TenantName, st.Expect, m.State)
		}
		*m = st.Member
	}
	for _, mv := range d.Moves {
		m := s.member(mv.TenantID)
		next, _, nm, _, err := ApplyMove(s.r, s.tenants[mv.TenantID], *m, mv, s.now)
		if err != nil {
			s.t.Fatalf("move %s: %v", m.TenantName, err)
		}
		if next != nil {
			s.tenants[next.ID] = next
			s.changes[next.ID]++
		}
		*m = nm
	}
	if d.Rollout != nil {
		s.r = d.Rollout
	}
	return d
}

// converge makes every changed tenant ready at its generation, except
// those failing.
func (s *sim) converge(failing ...string) {
	for id, t := range s.tenants {
		if t.ObservedGeneration == t.Generation {
			continue
		}
		next := *t
		next.ObservedGeneration = t.Generation
		next.Status = tenant.StatusReady
		for _, name := range failing {
			if t.Name == name {
				next.Status, next.StatusMessage = tenant.StatusFailed, "exit code 1"
			}
		}
		s.tenants[id] = &next
	}
}

func (s *sim) states() map[MemberState]int { return Count(s.members, -1) }

func TestAssignWaves(t *testing.T) {
	spec := Spec{Plan: "standard", To: 2, Waves: []Wave{
		{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1},
		{Name: "early", Percent: 30},
	}}
	waves, members := Assign(spec, fleetOf(10))
	var got []string
	for _, w := range waves {
		got = append(got, fmt.Sprintf("%s:%d", w.Name, w.Size))
	}
	if want := "canary:1 early:3 rest:6"; strings.Join(got, " ") != want {
		t.Errorf("waves = %s, want %s", strings.Join(got, " "), want)
	}
	if members[0].TenantName != "t00" || members[0].Wave != 0 || members[1].Wave != 1 || len(members) != 10 {
		t.Errorf("members = %+v", members)
	}
}

func TestSelectLeavesPinnedAndCurrent(t *testing.T) {
	tenants := fleetOf(4)
	tenants[1].Plan.Pinned = true
	tenants[2].Plan.Version = 2
	now := t0
	tenants[3].DeletionRequestedAt = &now
	s := Select(Spec{Plan: "standard", To: 2}, tenants)
	if len(s.Candidates) != 1 || len(s.Pinned) != 1 || len(s.Current) != 1 {
		t.Errorf("candidates %d, pinned %d, current %d; want 1 each", len(s.Candidates), len(s.Pinned), len(s.Current))
	}
}

func TestRolloutInWaves(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Bake: time.Minute, Waves: []Wave{
		{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1},
		{Name: "early", Percent: 30, MaxInFlight: 2},
	}}, fleetOf(10))
	d := s.step()
	if len(d.Moves) != 1 || s.tenants[d.Moves[0].TenantID].Name != "t00" {
		t.Fatalf("first step moved %+v, want the canary alone", d.Moves)
	}
	// Stale status: the canary still reads ready at generation 1 while its
	// generation is 2. It is not done, however often it is looked at.
	for range 3 {
		s.now = s.now.Add(time.Minute)
		if d := s.step(); len(d.Moves) != 0 || s.r.Wave != 0 {
			t.Fatalf("moved on while the canary was ready only at its old generation: %+v", d)
		}
	}
	if m := s.members[0]; m.State != MemberChanging {
		t.Fatalf("canary is %s, want changing", m.State)
	}
	s.converge()
	s.step() // done; bake starts
	if s.r.BakeFrom == nil || s.r.Wave != 0 {
		t.Fatalf("after the canary: wave %d, bake from %v; want wave 0 baking", s.r.Wave, s.r.BakeFrom)
	}
	s.now = s.now.Add(59 * time.Second)
	s.step()
	if s.r.Wave != 0 {
		t.Fatal("the next wave started before the bake time passed")
	}
	s.now = s.now.Add(time.Second)
	s.step() // wave early starts
	if d := s.step(); len(d.Moves) != 2 {
		t.Fatalf("wave early moved %d tenants at once, want its max in flight 2", len(d.Moves))
	}
	for s.r.State == StateRunning {
		s.converge()
		s.now = s.now.Add(time.Minute)
		s.step()
	}
	if s.r.State != StateCompleted || s.states()[MemberDone] != 10 {
		t.Fatalf("rollout %s with %v, want completed with 10 done", s.r.State, s.states())
	}
	for id, n := range s.changes {
		if n != 1 {
			t.Errorf("tenant %s changed %d times", id, n)
		}
		if v := s.tenants[id].Plan.Version; v != 2 {
			t.Errorf("tenant %s at version %d", id, v)
		}
	}
}

func TestFailureBudgetHalts(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, MaxFailures: 1}, fleetOf(20))
	for range 10 {
		s.step()
		s.converge("t03", "t11")
		s.now = s.now.Add(time.Second)
	}
	if s.r.State != StateHalted {
		t.Fatalf("rollout is %s, want halted", s.r.State)
	}
	if !strings.Contains(s.r.Message, "t03, t11") {
		t.Errorf("message %q does not name the failing tenants", s.r.Message)
	}
	// Halted: nothing more is moved.
	before := len(s.changes)
	for range 3 {
		if d := s.step(); len(d.Moves) != 0 {
			t.Fatalf("a halted rollout moved %d tenants", len(d.Moves))
		}
	}
	if len(s.changes) != before {
		t.Fatal("tenants changed while halted")
	}
}

func TestDeadlineFails(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Deadline: 5 * time.Minute}, fleetOf(1))
	s.step()
	s.now = s.now.Add(5 * time.Minute)
	s.step()
	if m := s.members[0]; m.State != MemberFailed || !strings.Contains(m.Message, "within 5m0s") {
		t.Fatalf("member %s %q, want failed by its deadline", m.State, m.Message)
	}
	if s.r.State != StateHalted {
		t.Fatalf("rollout %s, want halted at budget 0", s.r.State)
	}
}

func TestMaintenanceWindow(t *testing.T) {
	tenants := fleetOf(2)
	// Saturdays 02:00–04:00 in Berlin; t0 is a Wednesday.
	tenants[1].MaintenanceWindow = &tenant.Window{Days: []string{"sat"}, Start: "02:00", End: "04:00", TimeZone: "Europe/Berlin"}
	s := newSim(t, Spec{Plan: "standard", To: 2}, tenants)
	d := s.step()
	if len(d.Moves) != 1 || d.Moves[0].TenantID != tenants[0].ID {
		t.Fatalf("moved %+v, want only the tenant without a window", d.Moves)
	}
	opens := d.Waiting[tenants[1].ID]
	if want := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC); !opens.Equal(want) {
		t.Errorf("window opens at %v, want %v", opens, want)
	}
	s.converge()
	s.now = opens.Add(time.Minute)
	if d := s.step(); len(d.Moves) != 1 || d.Moves[0].TenantID != tenants[1].ID {
		t.Fatalf("inside its window the tenant was not moved: %+v", d.Moves)
	}
}

func TestPinnedAfterStartIsSkipped(t *testing.T) {
	tenants := fleetOf(2)
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{{Count: 1}}}, tenants)
	s.tenants[tenants[1].ID].Plan.Pinned = true
	for range 5 {
		s.step()
		s.converge()
	}
	if s.r.State != StateCompleted || s.member(tenants[1].ID).State != MemberSkipped || s.changes[tenants[1].ID] != 0 {
		t.Fatalf("rollout %s, pinned member %s changed %d times; want completed, skipped, 0",
			s.r.State, s.member(tenants[1].ID).State, s.changes[tenants[1].ID])
	}
}

func TestAbortRollsBack(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{{Count: 2}}}, fleetOf(5))
	s.step()
	s.converge()
	s.step()
	s.r.State, s.r.Rollback = StateAborting, true
	s.step()
	if s.r.State != StateAborted {
		t.Fatalf("rollout %s, want aborted", s.r.State)
	}
	if c := s.states(); c[MemberRolledBack] != 2 || c[MemberPending] != 3 {
		t.Fatalf("members %v, want 2 rolled back and 3 pending", c)
	}
	for _, tn := range s.tenants {
		if tn.Plan.Version != 1 {
			t.Errorf("%s at version %d after the rollback", tn.Name, tn.Plan.Version)
		}
	}
}

func TestMoveTwiceIsConflict(t *testing.T) {
	tenants := fleetOf(1)
	r := &Rollout{ID: "r1", Spec: Spec{Plan: "standard", To: 2}, State: StateRunning}
	m := Member{TenantID: tenants[0].ID, State: MemberPending, From: 1}
	mv := Move{TenantID: m.TenantID, Expect: MemberPending, To: 2, State: MemberChanging}
	next, evs, m2, _, err := ApplyMove(r, tenants[0], m, mv, t0)
	if err != nil || next.Generation != 2 || next.Plan.Version != 2 || len(evs) != 1 || m2.Generation != 2 {
		t.Fatalf("first move: %v, %+v, %+v", err, next, m2)
	}
	if _, _, _, _, err := ApplyMove(r, next, m2, mv, t0); err == nil {
		t.Fatal("a second move of the same member was not refused")
	}
}

// moveByHand is someone's change of a tenant's plan version outside the
// rollout, which the controller then converges.
func (s *sim) moveByHand(name string, version int64, pinned bool) {
	s.t.Helper()
	for id, t := range s.tenants {
		if t.Name == name {
			next := *t
			next.Plan = &tenant.PlanRef{Name: t.Plan.Name, Version: version, Pinned: pinned}
			next.Generation++
			next.ObservedGeneration, next.Status = next.Generation, tenant.StatusReady
			s.tenants[id] = &next
			return
		}
	}
	s.t.Fatalf("no tenant %s", name)
}

func (s *sim) memberNamed(name string) *Member {
	for i := range s.members {
		if s.members[i].TenantName == name {
			return &s.members[i]
		}
	}
	s.t.Fatalf("no member %s", name)
	return nil
}

// A failed canary that someone moves back by hand is skipped, never
// "recovered": it does not run the target.
func TestFailedMovedByHandIsSkipped(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{{Count: 1}}}, fleetOf(4))
	s.step()
	s.converge("t00")
	s.step()
	if s.r.State != StateHalted {
		t.Fatalf("rollout %s, want halted", s.r.State)
	}
	s.moveByHand("t00", 1, false)
	s.step()
	if m := s.memberNamed("t00"); m.State != MemberSkipped || !strings.Contains(m.Message, "moved to standard (v1)") {
		t.Fatalf("t00 %s (%s), want skipped as moved by someone else", m.State, m.Message)
	}
	resumed, _, err := Resume(s.r, "ops", s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.r = resumed
	for i := 0; s.r.State == StateRunning && i < 20; i++ {
		s.step()
		s.converge()
	}
	if s.r.State != StateCompleted || s.tenants[s.memberNamed("t00").TenantID].Plan.Version != 1 {
		t.Fatalf("rollout %s, t00 at v%d; want completed with t00 left at v1", s.r.State, s.tenants[s.memberNamed("t00").TenantID].Plan.Version)
	}
	if c := s.states(); c[MemberDone] != 3 || c[MemberSkipped] != 1 {
		t.Errorf("members %v, want 3 done and 1 skipped", c)
	}
}

// A tenant someone moves to another version keeps it: a rollout does not
// drag it to its target, and a rollback does not drag it back.
func TestMovedByHandKeepsItsVersion(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{{Count: 1}}}, fleetOf(3))
	s.step() // t00 to v2
	s.converge()
	s.moveByHand("t01", 3, false) // waits in the next wave
	s.step()                      // t00 done; bake
	s.step()                      // next wave: t01 skipped, t02 moved
	if m := s.memberNamed("t01"); m.State != MemberSkipped || s.tenants[m.TenantID].Plan.Version != 3 {
		t.Fatalf("t01 %s at v%d, want skipped at v3", m.State, s.tenants[m.TenantID].Plan.Version)
	}
	s.moveByHand("t00", 4, false)
	s.r.State, s.r.Rollback = StateAborting, true
	s.step()
	if s.r.State != StateAborted {
		t.Fatalf("rollout %s, want aborted", s.r.State)
	}
	for name, want := range map[string]int64{"t00": 4, "t01": 3, "t02": 1} {
		if v := s.tenants[s.memberNamed(name).TenantID].Plan.Version; v != want {
			t.Errorf("%s at v%d after the rollback, want v%d", name, v, want)
		}
	}
}

// A tenant pinned, or moved off the plan, after the rollout started is
// skipped as soon as its wave begins, not when its closed window opens.
func TestLeftTenantDoesNotWaitForItsWindow(t *testing.T) {
	tenants := fleetOf(3)
	for _, tn := range tenants[1:] {
		tn.MaintenanceWindow = &tenant.Window{Days: []string{"sat"}, Start: "02:00", End: "04:00"}
	}
	s := newSim(t, Spec{Plan: "standard", To: 2}, tenants)
	s.moveByHand("t01", 1, true)
	s.tenants[tenants[2].ID].Plan = nil
	s.step()
	s.converge()
	s.step()
	if c := s.states(); c[MemberSkipped] != 2 || c[MemberDone] != 1 || s.r.State != StateCompleted {
		t.Fatalf("members %v, rollout %s; want t01 and t02 skipped and the rollout completed on a Wednesday", c, s.r.State)
	}
}

// A failed member whose tenant is deleted stops counting against the
// budget, so that the halted rollout can be resumed.
func TestDeletedFailedTenantFreesTheBudget(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{{Count: 1}}}, fleetOf(3))
	s.step()
	s.converge("t00")
	s.step()
	if s.r.State != StateHalted {
		t.Fatalf("rollout %s, want halted", s.r.State)
	}
	delete(s.tenants, s.memberNamed("t00").TenantID)
	resumed, _, err := Resume(s.r, "ops", s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.r = resumed
	for i := 0; s.r.State == StateRunning && i < 20; i++ {
		s.step()
		s.converge()
	}
	if s.r.State != StateCompleted || s.memberNamed("t00").State != MemberSkipped {
		t.Fatalf("rollout %s with t00 %s; want completed, t00 skipped", s.r.State, s.memberNamed("t00").State)
	}
}

// A wave that changed no tenant (empty, or every member skipped) does not
// bake: there is nothing to watch.
func TestEmptyWaveDoesNotBake(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Bake: time.Hour, Waves: []Wave{
		{Name: "nobody", Selector: map[string]string{"ring": "none"}}, {Name: "one", Count: 1}}}, fleetOf(2))
	s.step() // wave nobody is empty: wave one starts at once
	if s.r.Wave != 1 {
		t.Fatalf("wave %d after the first step, want 1: an empty wave baked", s.r.Wave)
	}
	s.step()
	s.converge()
	s.step()
	if s.r.Wave != 1 || s.r.BakeFrom == nil {
		t.Fatalf("wave %d, bake from %v; want wave one baking", s.r.Wave, s.r.BakeFrom)
	}
}

// Waves without members are passed in the decision that ends the wave
// before them: each was a step and a new version of the rollout that
// changed no tenant (10,000 waves took 30 minutes, and made every If-Match
// stale).
func TestEmptyWavesPassedAtOnce(t *testing.T) {
	none := map[string]string{"ring": "none"}
	s := newSim(t, Spec{Plan: "standard", To: 2, Waves: []Wave{
		{Name: "e1", Selector: none}, {Name: "e2", Selector: none}, {Name: "one", Count: 1},
		{Name: "e3", Selector: none}, {Name: "e4", Selector: none}}}, fleetOf(2))
	writes := 0
	step := func() {
		if d := s.step(); d.Rollout != nil {
			writes++
		}
	}
	step()
	if s.r.Wave != 2 {
		t.Fatalf("wave %d after the first step, want 2 (one): the empty waves before it were not passed at once", s.r.Wave)
	}
	for s.r.State == StateRunning {
		step()
		s.converge()
		if writes > 10 {
			t.Fatalf("rollout at wave %d after %d writes", s.r.Wave, writes)
		}
	}
	// Writes: e1 and e2 passed; one done (e3 and e4 passed, rest starts);
	// rest done, completed.
	if s.r.State != StateCompleted || writes != 3 {
		t.Errorf("rollout %s after %d writes of it, want completed after 3 (e1 and e2 passed, one done, rest done)", s.r.State, writes)
	}
}

// An abort without rollback finishes the rollout at once; the tenants it
// changed go on converging, and their members settle as they turn out:
// none stays changing while its tenant is ready at the new generation.
func TestAbortedSettlesChangingMembers(t *testing.T) {
	s := newSim(t, Spec{Plan: "standard", To: 2, Deadline: time.Hour, Waves: []Wave{{Name: "all", MaxInFlight: 3}}}, fleetOf(5))
	s.step() // t00, t01, t02 changing
	s.converge("t01")
	s.tenants[s.memberNamed("t02").TenantID].ObservedGeneration = 1 // t02 still converging
	s.tenants[s.memberNamed("t02").TenantID].Status = tenant.StatusUpdating
	next, _, err := Abort(s.r, s.members, false, "alice", s.now)
	if err != nil {
		t.Fatal(err)
	}
	s.r = next
	d := s.step()
	if len(d.Moves) != 0 || d.Rollout != nil {
		t.Fatalf("a step of an aborted rollout moved tenants or changed it: %+v", d)
	}
	for name, want := range map[string]MemberState{"t00": MemberDone, "t01": MemberFailed, "t02": MemberChanging, "t03": MemberPending, "t04": MemberPending} {
		if got := s.memberNamed(name).State; got != want {
			t.Errorf("%s is %s after the step, want %s", name, got, want)
		}
	}
	s.now = s.now.Add(time.Hour)
	s.step()
	if got := s.memberNamed("t02").State; got != MemberFailed {
		t.Errorf("t02 is %s past its deadline, want failed", got)
	}
	if s.r.State != StateAborted {
		t.Errorf("rollout %s, want aborted", s.r.State)
	}
}
