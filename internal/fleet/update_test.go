package fleet

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestApplyUpdate(t *testing.T) {
	created := t0.Add(-time.Hour)
	cur := &Rollout{ID: tenant.NewID(), Spec: Spec{Plan: "standard", To: 2}, Waves: []AssignedWave{{Wave: Wave{Name: RestWave}, Size: 3}},
		State: StateRunning, Version: 4, CreatedBy: "alice", CreatedAt: created, UpdatedAt: created}
	bake := t0.Add(123 * time.Nanosecond)
	done := time.Date(2026, 11, 25, 14, 0, 0, 999, time.FixedZone("X", 3600))
	// r says where the rollout stands; what it says of the rest (spec,
	// waves, creator) is not written.
	r := &Rollout{ID: cur.ID, Spec: Spec{Plan: "other", To: 9}, State: StateCompleted, Wave: 1, BakeFrom: &bake, Rollback: true,
		Message: "done", Version: 4, CreatedBy: "mallory", FinishedAt: &done}
	now := t0.Add(time.Minute + 5)
	next, err := ApplyUpdate(cur, r, now)
	if err != nil {
		t.Fatal(err)
	}
	stampBake, stampDone := tenant.Timestamp(bake), tenant.Timestamp(done)
	want := &Rollout{ID: cur.ID, Spec: cur.Spec, Waves: cur.Waves, State: StateCompleted, Wave: 1, BakeFrom: &stampBake, Rollback: true,
		Message: "done", Version: 5, CreatedBy: "alice", CreatedAt: created, UpdatedAt: tenant.Timestamp(now), FinishedAt: &stampDone}
	if diff := cmp.Diff(want, next); diff != "" {
		t.Errorf("ApplyUpdate (-want +got):\n%s", diff)
	}
	if cur.Version != 4 || cur.State != StateRunning || r.BakeFrom != &bake {
		t.Errorf("ApplyUpdate changed its arguments: cur %+v, r %+v", cur, r)
	}

	stale := *r
	stale.Version = 3
	if _, err := ApplyUpdate(cur, &stale, now); !errors.Is(err, ErrConflict) {
		t.Errorf("ApplyUpdate at a stale version: %v, want ErrConflict", err)
	}
	unknown := *r
	unknown.State = "finished"
	if _, err := ApplyUpdate(cur, &unknown, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("ApplyUpdate to an unknown state: %v, want ErrInvalid", err)
	}
	if err := CheckUpdate(&unknown); !errors.Is(err, ErrInvalid) {
		t.Errorf("CheckUpdate of an unknown state: %v, want ErrInvalid", err)
	}
	if err := CheckUpdate(r); err != nil {
		t.Errorf("CheckUpdate of a completed rollout: %v", err)
	}
}

func TestApplyMemberUpdate(t *testing.T) {
	changed := t0.Add(-time.Minute)
	cur := Member{TenantID: tenant.NewID(), TenantName: "a", Wave: 1, State: MemberChanging, From: 1, Generation: 3, ChangedAt: &changed}
	finished := t0.Add(7)
	// m says the member's new state; the rest of it is not written.
	m := Member{TenantID: cur.TenantID, TenantName: "b", Wave: 9, State: MemberFailed, From: 8, Generation: 8, FinishedAt: &finished, Message: "not ready in time"}
	got, err := ApplyMemberUpdate(cur, m, MemberChanging)
	if err != nil {
		t.Fatal(err)
	}
	stamp := tenant.Timestamp(finished)
	want := cur
	want.State, want.FinishedAt, want.Message = MemberFailed, &stamp, "not ready in time"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ApplyMemberUpdate (-want +got):\n%s", diff)
	}
	if _, err := ApplyMemberUpdate(cur, m, MemberPending); !errors.Is(err, ErrConflict) {
		t.Errorf("ApplyMemberUpdate from a state the member is not in: %v, want ErrConflict", err)
	}
}

func TestEventsAt(t *testing.T) {
	now := time.Date(2026, 11, 25, 13, 0, 0, 999, time.FixedZone("X", 3600))
	given := t0.Add(-time.Minute + 1)
	events := []Event{{Type: EventPaused}, {Type: EventResumed, Time: given}}
	got := EventsAt(events, now)
	want := []Event{{Type: EventPaused, Time: tenant.Timestamp(now)}, {Type: EventResumed, Time: tenant.Timestamp(given)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EventsAt (-want +got):\n%s", diff)
	}
	if !events[0].Time.IsZero() {
		t.Errorf("EventsAt changed its argument: %+v", events)
	}
}
