package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// mustRollout starts a rollout of plan to version to with members.
func mustRollout(t testing.TB, f fleet.Store, plan string, to int64, members []fleet.Member) *fleet.Rollout {
	t.Helper()
	r, err := f.CreateRollout(ctx, &fleet.Rollout{
		Spec:      fleet.Spec{Plan: plan, To: to, Waves: []fleet.Wave{{Name: "canary", Count: 1}}, Bake: time.Minute, MaxFailures: 1},
		Waves:     []fleet.AssignedWave{{Wave: fleet.Wave{Name: "canary", Count: 1}, Size: 1}, {Wave: fleet.Wave{Name: "rest"}, Size: max(0, len(members)-1)}},
		CreatedBy: "alice",
	}, members)
	if err != nil {
		t.Fatalf("CreateRollout(%s → %d): %v", plan, to, err)
	}
	return r
}

func mustMembers(t testing.TB, f fleet.Store, id string) []fleet.Member {
	t.Helper()
	ms, err := f.Members(ctx, id)
	if err != nil {
		t.Fatalf("Members(%s): %v", id, err)
	}
	return ms
}

func mustRolloutEvents(t *testing.T, f fleet.Store, id string) []fleet.Event {
	t.Helper()
	evs, err := f.ListRolloutEvents(ctx, id, 0, 0)
	if err != nil {
		t.Fatalf("ListRolloutEvents(%s): %v", id, err)
	}
	return evs
}

func ids(rs []*fleet.Rollout) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func testRollouts(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	mustPublish(t, f, "standard", `{"image":"b"}`)

	_, err := f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", To: 3}}, nil)
	wantErr(t, "CreateRollout to a version not published", err, fleet.ErrNotFound)
	_, err = f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "nothing", To: 1}}, nil)
	wantErr(t, "CreateRollout of an unknown plan", err, fleet.ErrNotFound)

	before := time.Now().Add(-time.Second)
	first := mustRollout(t, f, "standard", 2, nil)
	if !tenant.IsID(first.ID) || first.State != fleet.StateRunning || first.Wave != 0 || first.Version != 1 || first.CreatedBy != "alice" ||
		first.CreatedAt.Before(before) || !first.UpdatedAt.Equal(first.CreatedAt) || first.FinishedAt != nil || first.BakeFrom != nil {
		t.Errorf("CreateRollout returned %+v", first)
	}
	got, err := f.GetRollout(ctx, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("GetRollout (-created +got):\n%s", diff)
	}
	for _, id := range []string{tenant.NewID(), "nope"} {
		_, err = f.GetRollout(ctx, id)
		wantErr(t, "GetRollout("+id+")", err, fleet.ErrNotFound)
	}
	if evs := mustRolloutEvents(t, f, first.ID); len(evs) != 1 || evs[0].Type != fleet.EventStarted || evs[0].Seq != 1 || evs[0].RolloutID != first.ID || evs[0].Actor != "alice" {
		t.Errorf("events of a new rollout = %+v, want one started event by alice", evs)
	}

	// One active rollout per plan.
	_, err = f.CreateRollout(ctx, &fleet.Rollout{Spec: fleet.Spec{Plan: "standard", To: 1}}, nil)
	wantErr(t, "CreateRollout of a plan with an active rollout", err, fleet.ErrConflict)
	chosen := tenant.NewID()
	mustPlan(t, f, "premium")
	mustPublish(t, f, "premium", `{"image":"p"}`)
	other, err := f.CreateRollout(ctx, &fleet.Rollout{ID: chosen, Spec: fleet.Spec{Plan: "premium", To: 1}}, nil)
	if err != nil || other.ID != chosen {
		t.Fatalf("CreateRollout with id %s = %+v, %v", chosen, other, err)
	}

	// UpdateRollout: optimistic on Version; completion makes the target
	// the plan's current version.
	stale := *first
	first.State, first.Wave, first.Message = fleet.StatePaused, 1, "paused by bob"
	bake := time.Now().Add(-time.Minute)
	first.BakeFrom = &bake
	paused, err := f.UpdateRollout(ctx, first, fleet.Event{Type: fleet.EventPaused, Actor: "bob", Message: "paused by bob"})
	if err != nil {
		t.Fatal(err)
	}
	if paused.Version != 2 || paused.State != fleet.StatePaused || paused.Wave != 1 || paused.Message != "paused by bob" ||
		paused.BakeFrom == nil || !paused.BakeFrom.Equal(tenant.Timestamp(bake)) || paused.UpdatedAt.Before(paused.CreatedAt) {
		t.Errorf("UpdateRollout returned %+v", paused)
	}
	if got, err := f.GetRollout(ctx, first.ID); err != nil || !cmp.Equal(got, paused) {
		t.Errorf("GetRollout after UpdateRollout (-returned +got):\n%s (%v)", cmp.Diff(paused, got), err)
	}
	stale.State = fleet.StateAborted
	_, err = f.UpdateRollout(ctx, &stale)
	wantErr(t, "UpdateRollout with a stale version", err, fleet.ErrConflict)
	if got, _ := f.GetRollout(ctx, first.ID); got.State != fleet.StatePaused || got.Version != 2 {
		t.Errorf("a refused UpdateRollout wrote state %s, version %d", got.State, got.Version)
	}
	_, err = f.UpdateRollout(ctx, &fleet.Rollout{ID: tenant.NewID(), State: fleet.StateRunning, Version: 1})
	wantErr(t, "UpdateRollout of an unknown rollout", err, fleet.ErrNotFound)

	if p := mustGetPlan(t, f, "standard"); p.Current != 1 {
		t.Fatalf("current version %d before the rollout completed", p.Current)
	}
	done := time.Now()
	paused.State, paused.Wave, paused.FinishedAt, paused.BakeFrom = fleet.StateCompleted, 2, &done, nil
	completed, err := f.UpdateRollout(ctx, paused, fleet.Event{Type: fleet.EventCompleted, Actor: "controller"})
	if err != nil {
		t.Fatal(err)
	}
	if completed.Version != 3 || completed.FinishedAt == nil || !completed.FinishedAt.Equal(tenant.Timestamp(done)) || completed.BakeFrom != nil {
		t.Errorf("completed rollout = %+v", completed)
	}
	if p := mustGetPlan(t, f, "standard"); p.Current != 2 || p.Latest != 2 {
		t.Errorf("after the rollout to 2 completed: current %d, latest %d; want 2, 2", p.Current, p.Latest)
	}
	var types []fleet.EventType
	for _, e := range mustRolloutEvents(t, f, first.ID) {
		types = append(types, e.Type)
	}
	if want := []fleet.EventType{fleet.EventStarted, fleet.EventPaused, fleet.EventCompleted}; !slices.Equal(types, want) {
		t.Errorf("events = %v, want %v", types, want)
	}

	// A finished rollout leaves room for the next.
	second := mustRollout(t, f, "standard", 1, nil)
	tests := []struct {
		name string
		opts fleet.RolloutListOptions
		want []string
	}{
		{"all, newest first", fleet.RolloutListOptions{}, []string{second.ID, other.ID, first.ID}},
		{"active", fleet.RolloutListOptions{Active: true}, []string{second.ID, other.ID}},
		{"plan", fleet.RolloutListOptions{Plan: "standard"}, []string{second.ID, first.ID}},
		{"plan, active", fleet.RolloutListOptions{Plan: "standard", Active: true}, []string{second.ID}},
		{"limit", fleet.RolloutListOptions{Limit: 2}, []string{second.ID, other.ID}},
		{"unknown plan", fleet.RolloutListOptions{Plan: "nothing"}, nil},
	}
	for _, tt := range tests {
		rs, err := f.ListRollouts(ctx, tt.opts)
		if err != nil {
			t.Fatalf("ListRollouts(%s): %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, ids(rs)); diff != "" && (len(tt.want) > 0 || len(rs) > 0) {
			t.Errorf("ListRollouts(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
	rs, _ := f.ListRollouts(ctx, fleet.RolloutListOptions{Plan: "standard"})
	if len(rs) == 2 && !cmp.Equal(rs[1], completed) {
		t.Errorf("ListRollouts returns the rollout unlike GetRollout (-want +got):\n%s", cmp.Diff(completed, rs[1]))
	}
}

func testRolloutMembers(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	mustPublish(t, f, "standard", `{"image":"b"}`)
	tenantIDs := make([]string, 5)
	for i := range tenantIDs {
		tenantIDs[i] = tenant.NewID()
	}
	// Given out of order, and with states the store must ignore.
	members := []fleet.Member{
		{TenantID: tenantIDs[3], TenantName: "d", Wave: 0, From: 1, State: fleet.MemberDone, Generation: 9},
		{TenantID: tenantIDs[1], TenantName: "b", Wave: 1, From: 1},
		{TenantID: tenantIDs[0], TenantName: "a", Wave: 1, From: 1},
		{TenantID: tenantIDs[2], TenantName: "c", Wave: 0, From: 1},
	}
	r := mustRollout(t, f, "standard", 2, members)
	got := mustMembers(t, f, r.ID)
	want := []fleet.Member{
		{TenantID: tenantIDs[2], TenantName: "c", Wave: 0, From: 1, State: fleet.MemberPending},
		{TenantID: tenantIDs[3], TenantName: "d", Wave: 0, From: 1, State: fleet.MemberPending},
		{TenantID: tenantIDs[0], TenantName: "a", Wave: 1, From: 1, State: fleet.MemberPending},
		{TenantID: tenantIDs[1], TenantName: "b", Wave: 1, From: 1, State: fleet.MemberPending},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Members (-want +got):\n%s", diff)
	}
	_, err := f.Members(ctx, tenant.NewID())
	wantErr(t, "Members of an unknown rollout", err, fleet.ErrNotFound)

	// UpdateMember: only from the expected state.
	now := time.Now()
	failed := fleet.Member{TenantID: tenantIDs[2], State: fleet.MemberFailed, FinishedAt: &now, Message: "not ready in time"}
	err = f.UpdateMember(ctx, r.ID, failed, fleet.MemberChanging)
	wantErr(t, "UpdateMember from a state the member is not in", err, fleet.ErrConflict)
	if err := f.UpdateMember(ctx, r.ID, failed, fleet.MemberPending, fleet.Event{Type: fleet.EventFailed, TenantID: tenantIDs[2], TenantName: "c", Message: "not ready in time"}); err != nil {
		t.Fatal(err)
	}
	err = f.UpdateMember(ctx, r.ID, failed, fleet.MemberPending)
	wantErr(t, "UpdateMember repeated", err, fleet.ErrConflict)
	err = f.UpdateMember(ctx, r.ID, fleet.Member{TenantID: tenant.NewID(), State: fleet.MemberDone}, fleet.MemberPending)
	wantErr(t, "UpdateMember of a tenant that is no member", err, fleet.ErrNotFound)
	stamp := tenant.Timestamp(now)
	want[0].State, want[0].FinishedAt, want[0].Message = fleet.MemberFailed, &stamp, "not ready in time"
	if diff := cmp.Diff(want, mustMembers(t, f, r.ID)); diff != "" {
		t.Errorf("Members after UpdateMember (-want +got):\n%s", diff)
	}

	// AddMembers: new members are pending; members already there stay.
	added := []fleet.Member{
		{TenantID: tenantIDs[2], TenantName: "c", Wave: 1, From: 1}, // a member already: stays failed in wave 0
		{TenantID: tenantIDs[4], TenantName: "e", Wave: 1, From: 1, State: fleet.MemberDone},
	}
	for range 2 {
		if err := f.AddMembers(ctx, r.ID, added); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, fleet.Member{TenantID: tenantIDs[4], TenantName: "e", Wave: 1, From: 1, State: fleet.MemberPending})
	slices.SortFunc(want, func(a, b fleet.Member) int {
		if a.Wave != b.Wave {
			return a.Wave - b.Wave
		}
		return cmpString(a.TenantID, b.TenantID)
	})
	if diff := cmp.Diff(want, mustMembers(t, f, r.ID)); diff != "" {
		t.Errorf("Members after AddMembers twice (-want +got):\n%s", diff)
	}
	// The waves' sizes are their numbers of members (the first AddMembers
	// made them so; the second added nobody and wrote nothing).
	if got, err := f.GetRollout(ctx, r.ID); err != nil || len(got.Waves) != 2 || got.Waves[0].Size != 2 || got.Waves[1].Size != 3 || got.Version != r.Version+1 {
		t.Errorf("rollout after AddMembers twice: %+v (%v); want waves of 2 and 3 members, version %d", got, err, r.Version+1)
	}
	err = f.AddMembers(ctx, tenant.NewID(), added)
	wantErr(t, "AddMembers to an unknown rollout", err, fleet.ErrNotFound)

	// The store's summary says what the members say.
	if ms, ok := f.(fleet.MemberSummarizer); ok {
		got, err := ms.MemberSummary(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := fleet.Summarize(mustMembers(t, f, r.ID)); cmp.Diff(want, got, cmpopts.EquateEmpty()) != "" || len(got.Failed) != 1 || got.Failed[0] != "c" {
			t.Errorf("MemberSummary = %+v, want %+v (c failed)", got, want)
		}
		_, err = ms.MemberSummary(ctx, tenant.NewID())
		wantErr(t, "MemberSummary of an unknown rollout", err, fleet.ErrNotFound)
	}
	evs := mustRolloutEvents(t, f, r.ID)
	if len(evs) != 2 || evs[1].Type != fleet.EventFailed || evs[1].TenantID != tenantIDs[2] || evs[1].Seq != 2 {
		t.Errorf("events = %+v, want started, then tenant_failed", evs)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testRolloutEvents(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	mustPublish(t, f, "standard", `{"image":"a"}`)
	r := mustRollout(t, f, "standard", 1, nil)
	at := time.Date(2030, 1, 2, 3, 4, 5, 6789, time.UTC)
	for i := range 9 {
		r.Message = fmt.Sprint("step ", i)
		e := fleet.Event{Type: fleet.EventWaveStarted, Wave: i, Message: r.Message, Actor: "controller"}
		if i == 4 {
			e.Time = at
		}
		next, err := f.UpdateRollout(ctx, r, e)
		if err != nil {
			t.Fatal(err)
		}
		r = next
	}
	all := mustRolloutEvents(t, f, r.ID)
	if len(all) != 10 {
		t.Fatalf("%d events, want 10", len(all))
	}
	for i, e := range all {
		if e.Seq != int64(i+1) || e.RolloutID != r.ID || (i > 0 && (e.Wave != i-1 || e.Message != fmt.Sprint("step ", i-1))) {
			t.Errorf("event %d = %+v", i, e)
		}
		if e.Time.IsZero() || e.Time.Location() != time.UTC {
			t.Errorf("event %d has time %v", i, e.Time)
		}
	}
	if !all[5].Time.Equal(tenant.Timestamp(at)) {
		t.Errorf("an event's own time was stored as %v, want %v", all[5].Time, tenant.Timestamp(at))
	}
	tests := []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 3, []int64{1, 2, 3}},
		{3, 3, []int64{4, 5, 6}},
		{8, 0, []int64{9, 10}},
		{8, 5, []int64{9, 10}},
		{10, 0, nil},
	}
	for _, tt := range tests {
		evs, err := f.ListRolloutEvents(ctx, r.ID, tt.after, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range evs {
			seqs = append(seqs, e.Seq)
		}
		if !slices.Equal(seqs, tt.want) {
			t.Errorf("ListRolloutEvents(after %d, limit %d) = %v, want %v", tt.after, tt.limit, seqs, tt.want)
		}
	}
	_, err := f.ListRolloutEvents(ctx, tenant.NewID(), 0, 0)
	wantErr(t, "ListRolloutEvents of an unknown rollout", err, fleet.ErrNotFound)
}

// testActiveRolloutsAll checks that active rollouts are listed all, past
// the default limit of 100 that other lists have: the driver steps every
// one.
func testActiveRolloutsAll(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	for i := range 102 {
		name := fmt.Sprintf("many-%03d", i)
		mustPlan(t, f, name)
		mustPublish(t, f, name, `{"image":"m"}`)
		mustRollout(t, f, name, 1, nil)
	}
	if active, err := f.ListRollouts(ctx, fleet.RolloutListOptions{Active: true}); err != nil || len(active) != 102 {
		t.Errorf("ListRollouts(Active) of 102 active rollouts: %d, %v", len(active), err)
	}
	if all, err := f.ListRollouts(ctx, fleet.RolloutListOptions{}); err != nil || len(all) != 100 {
		t.Errorf("ListRollouts() of 102 rollouts: %d, %v; want the default limit of 100", len(all), err)
	}
	if some, err := f.ListRollouts(ctx, fleet.RolloutListOptions{Active: true, Limit: 3}); err != nil || len(some) != 3 {
		t.Errorf("ListRollouts(Active, Limit 3): %d, %v", len(some), err)
	}
}

// testUnsettledRollouts checks the rollouts the driver steps: the active
// ones, and finished ones with a member still changing (an abort without
// rollback leaves them converging), until that member settles.
func testUnsettledRollouts(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	start := func(plan string) (*fleet.Rollout, string) {
		mustPlan(t, f, plan)
		mustPublish(t, f, plan, `{"image":"a"}`)
		id := tenant.NewID()
		return mustRollout(t, f, plan, 1, []fleet.Member{{TenantID: id, TenantName: "t", From: 1}}), id
	}
	finish := func(r *fleet.Rollout, state fleet.State) {
		t.Helper()
		r.State = state
		if _, err := f.UpdateRollout(ctx, r); err != nil {
			t.Fatalf("UpdateRollout(%s): %v", state, err)
		}
	}
	running, _ := start("running")
	changing, member := start("changing")
	if err := f.UpdateMember(ctx, changing.ID, fleet.Member{TenantID: member, State: fleet.MemberChanging}, fleet.MemberPending); err != nil {
		t.Fatal(err)
	}
	finish(changing, fleet.StateAborted)
	pending, _ := start("pending")
	finish(pending, fleet.StateAborted)
	done, doneMember := start("done")
	if err := f.UpdateMember(ctx, done.ID, fleet.Member{TenantID: doneMember, State: fleet.MemberDone}, fleet.MemberPending); err != nil {
		t.Fatal(err)
	}
	finish(done, fleet.StateAborted)

	got, err := f.ListRollouts(ctx, fleet.RolloutListOptions{Unsettled: true})
	if want := []string{changing.ID, running.ID}; err != nil || !cmp.Equal(want, ids(got)) {
		t.Errorf("ListRollouts(Unsettled) = %v (%v), want the changing aborted one and the running one, newest first: %v", ids(got), err, want)
	}
	if err := f.UpdateMember(ctx, changing.ID, fleet.Member{TenantID: member, State: fleet.MemberDone}, fleet.MemberChanging); err != nil {
		t.Fatal(err)
	}
	got, err = f.ListRollouts(ctx, fleet.RolloutListOptions{Unsettled: true, Plan: "changing"})
	if err != nil || len(got) != 0 {
		t.Errorf("ListRollouts(Unsettled) of an aborted rollout whose member settled = %v (%v), want none", ids(got), err)
	}
}
