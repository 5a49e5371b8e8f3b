package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestNewRollout(t *testing.T) {
	now := time.Date(2026, 11, 25, 13, 0, 0, 123_456_789, time.FixedZone("X", 3600))
	stamp := tenant.Timestamp(now)
	a, b := tenant.NewID(), tenant.NewID()
	in := &Rollout{
		Spec:  Spec{Plan: "standard", To: 2, MaxFailures: 1},
		Waves: []AssignedWave{{Wave: Wave{Name: "canary", Count: 1}, Size: 1}, {Wave: Wave{Name: RestWave}, Size: 1}},
		// What the store sets, whatever the caller says.
		State: StateCompleted, Wave: 3, BakeFrom: &now, Rollback: true, Message: "old", Version: 7, FinishedAt: &now,
		CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour),
		CreatedBy: "alice",
	}
	members := []Member{
		{TenantID: a, TenantName: "a", Wave: 0, From: 1, State: MemberDone, Generation: 9, ChangedAt: &now, FinishedAt: &now, Message: "old"},
		{TenantID: b, TenantName: "b", Wave: 1, From: 1},
	}
	r, pending, ev, err := NewRollout(in, members, now)
	if err != nil {
		t.Fatal(err)
	}
	if !tenant.IsID(r.ID) {
		t.Errorf("id = %q, want a new tenant-style id", r.ID)
	}
	want := &Rollout{ID: r.ID, Spec: in.Spec, Waves: in.Waves, State: StateRunning, Version: 1, CreatedBy: "alice", CreatedAt: stamp, UpdatedAt: stamp}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("rollout (-want +got):\n%s", diff)
	}
	wantMembers := []Member{
		{TenantID: a, TenantName: "a", Wave: 0, From: 1, State: MemberPending},
		{TenantID: b, TenantName: "b", Wave: 1, From: 1, State: MemberPending},
	}
	if diff := cmp.Diff(wantMembers, pending); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if members[0].State != MemberDone {
		t.Errorf("NewRollout changed the caller's members: %+v", members[0])
	}
	if wantEv := (Event{RolloutID: r.ID, Time: stamp, Type: EventStarted, Actor: "alice"}); ev != wantEv {
		t.Errorf("event = %+v, want %+v", ev, wantEv)
	}
	r.Waves[0].Size = 5
	if in.Waves[0].Size != 1 {
		t.Errorf("the rollout's waves are the caller's: changing one changed in")
	}

	chosen := tenant.NewID()
	if r, _, _, err := NewRollout(&Rollout{ID: chosen, Spec: in.Spec}, nil, now); err != nil || r.ID != chosen {
		t.Errorf("NewRollout with id %s = %+v, %v; want the id kept", chosen, r, err)
	}
	for _, tt := range []struct {
		name    string
		id      string
		members []Member
		says    string
	}{
		{"rollout id not a UUID", "nope", nil, `rollout id "nope" is not a UUID`},
		{"member id not a UUID", "", []Member{{TenantID: a}, {TenantID: "nope"}}, `member "nope" is not a tenant id`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := NewRollout(&Rollout{ID: tt.id, Spec: in.Spec}, tt.members, now)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want ErrInvalid saying %s", err, tt.says)
			}
		})
	}
}

func TestNewMembers(t *testing.T) {
	now := time.Now()
	id := tenant.NewID()
	got, err := NewMembers([]Member{{TenantID: id, TenantName: "a", Wave: 2, From: 3, State: MemberFailed, Generation: 4, ChangedAt: &now, FinishedAt: &now, Message: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Member{{TenantID: id, TenantName: "a", Wave: 2, From: 3, State: MemberPending}}; !cmp.Equal(want, got) {
		t.Errorf("NewMembers (-want +got):\n%s", cmp.Diff(want, got))
	}
	if _, err := NewMembers([]Member{{TenantID: "a"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewMembers of a member whose id is a name: %v, want ErrInvalid", err)
	}
}

func TestCheckTarget(t *testing.T) {
	rollout := Spec{Plan: "standard", To: 4}
	move := Spec{Plan: "standard", ToPlan: "standard-nomad", ToProvider: "nomad", To: 2}
	for _, tt := range []struct {
		name   string
		spec   Spec
		plan   bool
		target FoundPlan
		says   string // "" when allowed
	}{
		{"both exist", rollout, true, FoundPlan{Exists: true, Provider: "docker", HasVersion: true}, ""},
		{"no plan", rollout, false, FoundPlan{}, `plan "standard": not found`},
		{"no version", rollout, true, FoundPlan{Exists: true, Provider: "docker"}, `plan "standard" version 4: not found`},
		{"a move to a plan that exists", move, true, FoundPlan{Exists: true, Provider: "nomad", HasVersion: true}, ""},
		{"a move to no plan", move, true, FoundPlan{}, `plan "standard-nomad": not found`},
		{"a move to a plan of another provider", move, true, FoundPlan{Exists: true, Provider: "kubernetes", HasVersion: true},
			`plan "standard-nomad" for provider nomad: not found: it is for kubernetes`},
		{"a move to no version", move, true, FoundPlan{Exists: true, Provider: "nomad"}, `plan "standard-nomad" version 2: not found`},
		{"a move from no plan", move, false, FoundPlan{Exists: true, Provider: "nomad", HasVersion: true}, `plan "standard": not found`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTarget(tt.spec, tt.plan, tt.target)
			switch {
			case tt.says == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tt.says != "" && (!errors.Is(err, ErrNotFound) || err.Error() != tt.says):
				t.Errorf("err = %v, want ErrNotFound saying %s", err, tt.says)
			}
		})
	}
}

func TestCheckAddMembers(t *testing.T) {
	for _, s := range []State{StateRunning, StatePaused, StateHalted, StateAborting, StateAborted, StateCompleted} {
		err := CheckAddMembers(s)
		if s.Active() != (err == nil) || (err != nil && !errors.Is(err, ErrState)) {
			t.Errorf("CheckAddMembers(%s) = %v; want nil only for an active state, else ErrState", s, err)
		}
	}
}
