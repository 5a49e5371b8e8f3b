package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// fleetStore is s as a fleet.Store: every store keeps plans and rollouts
// beside its tenants.
func fleetStore(t testing.TB, s tenant.Store) fleet.Store {
	t.Helper()
	f, ok := s.(fleet.Store)
	if !ok {
		t.Fatalf("%T does not implement fleet.Store", s)
	}
	return f
}

func mustPlan(t testing.TB, f fleet.Store, name string) *fleet.Plan {
	t.Helper()
	p, err := f.CreatePlan(ctx, &fleet.Plan{Name: name, Provider: "mock", Description: "the " + name + " plan"}, "alice")
	if err != nil {
		t.Fatalf("CreatePlan(%s): %v", name, err)
	}
	return p
}

func mustPublish(t testing.TB, f fleet.Store, plan string, config string) *fleet.Version {
	t.Helper()
	v, err := f.PublishVersion(ctx, plan, json.RawMessage(config), "publish "+config, "alice")
	if err != nil {
		t.Fatalf("PublishVersion(%s): %v", plan, err)
	}
	return v
}

func mustGetPlan(t *testing.T, f fleet.Store, name string) *fleet.Plan {
	t.Helper()
	p, err := f.GetPlan(ctx, name)
	if err != nil {
		t.Fatalf("GetPlan(%s): %v", name, err)
	}
	return p
}

// planTenant is a valid tenant following plan at version.
func planTenant(name, plan string, version int64) *tenant.Tenant {
	in := newTenant(name)
	in.Plan = &tenant.PlanRef{Name: plan, Version: version}
	return in
}

// testPlanFields: a tenant's plan and maintenance window survive Create,
// Get, List and UpdateDesired, and List filters by plan.
func testPlanFields(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	for i := range 4 {
		mustPublish(t, f, "standard", fmt.Sprintf(`{"image":"app:%d"}`, i+1))
	}
	mustPlan(t, f, "premium")
	mustPublish(t, f, "premium", `{"image":"p"}`)
	in := newTenant("planned")
	in.Plan = &tenant.PlanRef{Name: "standard", Version: 3, Pinned: true}
	in.MaintenanceWindow = &tenant.Window{Days: []string{"sat", "sun"}, Start: "22:00", End: "02:00", TimeZone: "Europe/Berlin"}
	created := mustCreate(t, s, in)
	if created.Plan == nil || *created.Plan != *in.Plan || created.MaintenanceWindow == nil || created.MaintenanceWindow.String() != in.MaintenanceWindow.String() {
		t.Errorf("Create returned plan %v, window %v", created.Plan, created.MaintenanceWindow)
	}
	sameTenant(t, "Get of a tenant with a plan and a window", mustGet(t, s, created.ID), created)
	other := mustCreate(t, s, planTenant("other", "premium", 1))
	plain := mustCreate(t, s, newTenant("plain"))
	sameTenant(t, "Get of a tenant without a plan", mustGet(t, s, plain.ID), plain)
	if got := mustGet(t, s, plain.ID); got.Plan != nil || got.MaintenanceWindow != nil {
		t.Errorf("a tenant without a plan or window reads back with %v, %v", got.Plan, got.MaintenanceWindow)
	}

	// Unpin, move to version 4 and drop the window: a change.
	next, err := s.UpdateDesired(ctx, created.ID, tenant.DesiredChange{Version: created.Version, ComputeConfig: created.ComputeConfig,
		Labels: created.Labels, Annotations: created.Annotations, Plan: &tenant.PlanRef{Name: "standard", Version: 4}, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if next.Generation != created.Generation+1 || next.Plan == nil || next.Plan.Version != 4 || next.Plan.Pinned || next.MaintenanceWindow != nil {
		t.Errorf("after UpdateDesired: generation %d, plan %v, window %v", next.Generation, next.Plan, next.MaintenanceWindow)
	}
	sameTenant(t, "Get after UpdateDesired of the plan", mustGet(t, s, created.ID), next)
	// A window alone is a change too; the same plan and window are not.
	window := &tenant.Window{Start: "01:00", End: "03:00"}
	change := tenant.DesiredChange{Version: next.Version, ComputeConfig: next.ComputeConfig, Labels: next.Labels, Annotations: next.Annotations,
		Plan: next.Plan, MaintenanceWindow: window}
	windowed, err := s.UpdateDesired(ctx, created.ID, change)
	if err != nil || windowed.Generation != next.Generation+1 {
		t.Fatalf("UpdateDesired of the window alone = %+v, %v; want a new generation", windowed, err)
	}
	change.Version = windowed.Version
	same, err := s.UpdateDesired(ctx, created.ID, change)
	if err != nil || same.Version != windowed.Version {
		t.Errorf("UpdateDesired with the same plan and window = version %d, %v; want no change", same.Version, err)
	}
	sameTenant(t, "Get after UpdateDesired of the window", mustGet(t, s, created.ID), windowed)
	// Leaving the plan.
	left, err := s.UpdateDesired(ctx, other.ID, tenant.DesiredChange{Version: other.Version, ComputeConfig: other.ComputeConfig, Labels: other.Labels, Annotations: other.Annotations})
	if err != nil || left.Plan != nil {
		t.Fatalf("UpdateDesired leaving the plan = %+v, %v", left, err)
	}
	sameTenant(t, "Get after leaving the plan", mustGet(t, s, other.ID), left)

	// List: by plan, of live tenants unless deleted ones are asked for.
	var want []string
	for i := range 5 {
		want = append(want, mustCreate(t, s, planTenant(fmt.Sprintf("premium-%d", i), "premium", 1)).Name)
	}
	mustDelete(t, s, mustCreate(t, s, planTenant("premium-deleted", "premium", 1)))
	for _, size := range []int{0, 2} {
		got := listAll(t, s, tenant.ListOptions{Plan: "premium", PageSize: size})
		if diff := cmp.Diff(want, names(got)); diff != "" {
			t.Errorf("List(Plan premium, page size %d) (-want +got):\n%s", size, diff)
		}
		for _, tn := range got {
			if tn.Plan == nil || tn.Plan.Name != "premium" {
				t.Errorf("List(Plan premium) returned %s with plan %v", tn.Name, tn.Plan)
			}
		}
	}
	if got := names(listAll(t, s, tenant.ListOptions{Plan: "premium", IncludeDeleted: true})); len(got) != 6 {
		t.Errorf("List(Plan premium, IncludeDeleted) = %v, want 6 tenants", got)
	}
	if got := names(listAll(t, s, tenant.ListOptions{Plan: "standard"})); !slices.Equal(got, []string{"planned"}) {
		t.Errorf("List(Plan standard) = %v, want [planned]", got)
	}
	if got := names(listAll(t, s, tenant.ListOptions{Plan: "nothing"})); len(got) != 0 {
		t.Errorf("List(Plan nothing) = %v, want none", got)
	}
	all := listAll(t, s, tenant.ListOptions{})
	if len(all) != 8 {
		t.Errorf("List() = %v, want 8 tenants", names(all))
	}
	for _, tn := range all {
		if tn.Name == "planned" {
			sameTenant(t, "List of a tenant with a plan and a window", tn, windowed)
		}
	}
}

func testPlans(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	before := time.Now().Add(-time.Second)
	p, err := f.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "mock", Description: "the usual", Latest: 7, Current: 7, CreatedBy: "mallory"}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "standard" || p.Provider != "mock" || p.Description != "the usual" || p.Latest != 0 || p.Current != 0 || p.CreatedBy != "alice" {
		t.Errorf("CreatePlan returned %+v; want only name, provider and description read, no version, created by alice", p)
	}
	if p.CreatedAt.Before(before) || !p.UpdatedAt.Equal(p.CreatedAt) || p.CreatedAt.Location() != time.UTC {
		t.Errorf("timestamps: created %v, updated %v", p.CreatedAt, p.UpdatedAt)
	}
	if diff := cmp.Diff(p, mustGetPlan(t, f, "standard")); diff != "" {
		t.Errorf("GetPlan (-created +got):\n%s", diff)
	}
	_, err = f.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: "docker"}, "bob")
	wantErr(t, "CreatePlan of a name in use", err, fleet.ErrExists)
	for _, bad := range []*fleet.Plan{{Name: "Bad Name", Provider: "mock"}, {Name: "ok", Provider: ""}} {
		_, err = f.CreatePlan(ctx, bad, "alice")
		wantErr(t, fmt.Sprintf("CreatePlan(%+v)", bad), err, fleet.ErrInvalid)
	}
	_, err = f.GetPlan(ctx, "nothing")
	wantErr(t, "GetPlan of an unknown plan", err, fleet.ErrNotFound)
	mustPlan(t, f, "premium")
	mustPlan(t, f, "basic")
	plans, err := f.ListPlans(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plans {
		got = append(got, p.Name)
	}
	if want := []string{"basic", "premium", "standard"}; !slices.Equal(got, want) {
		t.Errorf("ListPlans = %v, want %v", got, want)
	}

	// Deletion: refused while a live tenant follows the plan or a rollout of
	// it is active; it takes the versions and finished rollouts along.
	err = f.DeletePlan(ctx, "nothing")
	wantErr(t, "DeletePlan of an unknown plan", err, fleet.ErrNotFound)
	mustPublish(t, f, "standard", `{"image":"a"}`)
	follower := mustCreate(t, s, planTenant("follower", "standard", 1))
	err = f.DeletePlan(ctx, "standard")
	wantErr(t, "DeletePlan of a plan a tenant follows", err, fleet.ErrInUse)
	deleting, err := s.RequestDeletion(ctx, follower.ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	err = f.DeletePlan(ctx, "standard")
	wantErr(t, "DeletePlan of a plan a deleting tenant follows", err, fleet.ErrInUse)
	mustObserve(t, s, deleting, tenant.StatusDeleted)
	mustPublish(t, f, "standard", `{"image":"b"}`)
	r := mustRollout(t, f, "standard", 2, nil)
	err = f.DeletePlan(ctx, "standard")
	wantErr(t, "DeletePlan of a plan with an active rollout", err, fleet.ErrInUse)
	r.State = fleet.StateAborted
	if _, err := f.UpdateRollout(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := f.DeletePlan(ctx, "standard"); err != nil {
		t.Fatalf("DeletePlan of a plan that only deleted tenants follow: %v", err)
	}
	_, err = f.GetPlan(ctx, "standard")
	wantErr(t, "GetPlan of a deleted plan", err, fleet.ErrNotFound)
	_, err = f.GetRollout(ctx, r.ID)
	wantErr(t, "GetRollout of a deleted plan's finished rollout", err, fleet.ErrNotFound)
	// The name is free again, with no versions.
	mustPlan(t, f, "standard")
	_, err = f.GetVersion(ctx, "standard", 1)
	wantErr(t, "GetVersion of a recreated plan", err, fleet.ErrNotFound)
	if vs, err := f.ListVersions(ctx, "standard"); err != nil || len(vs) != 0 {
		t.Errorf("ListVersions of a recreated plan = %v, %v; want none", vs, err)
	}
}

func testPlanVersions(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	if vs, err := f.ListVersions(ctx, "standard"); err != nil || len(vs) != 0 {
		t.Errorf("ListVersions of a new plan = %v, %v; want none", vs, err)
	}
	configs := []string{`{"image": "app:1", "n": 1}`, `{"image":"app:2","env":{"A":"ü"}}`, `{}`}
	for i, config := range configs {
		v := mustPublish(t, f, "standard", config)
		if v.Plan != "standard" || v.Version != int64(i+1) || !sameJSON(v.Config, []byte(config)) || v.Message != "publish "+config || v.CreatedBy != "alice" || v.CreatedAt.IsZero() {
			t.Errorf("PublishVersion #%d = %+v", i+1, v)
		}
		p := mustGetPlan(t, f, "standard")
		if p.Latest != int64(i+1) || p.Current != 1 {
			t.Errorf("after publishing version %d: latest %d, current %d; want %d, 1 (a new version reaches no one but by a rollout)", i+1, p.Latest, p.Current, i+1)
		}
		got, err := f.GetVersion(ctx, "standard", v.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(got.Config, []byte(config)) {
			t.Errorf("GetVersion(%d).Config = %s, want %s", v.Version, got.Config, config)
		}
		if diff := cmp.Diff(v, got, cmpopts.IgnoreFields(fleet.Version{}, "Config")); diff != "" {
			t.Errorf("GetVersion(%d) (-published +got):\n%s", v.Version, diff)
		}
	}
	vs, err := f.ListVersions(ctx, "standard")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Version != int64(i+1) || !sameJSON(v.Config, []byte(configs[i])) {
			t.Errorf("ListVersions[%d] = version %d, %s", i, v.Version, v.Config)
		}
	}
	if len(vs) != len(configs) {
		t.Errorf("ListVersions returned %d versions, want %d", len(vs), len(configs))
	}
	_, err = f.GetVersion(ctx, "standard", 4)
	wantErr(t, "GetVersion of a version not published", err, fleet.ErrNotFound)
	_, err = f.PublishVersion(ctx, "nothing", json.RawMessage(`{}`), "", "alice")
	wantErr(t, "PublishVersion of an unknown plan", err, fleet.ErrNotFound)
	_, err = f.ListVersions(ctx, "nothing")
	wantErr(t, "ListVersions of an unknown plan", err, fleet.ErrNotFound)
	for _, bad := range []string{`[1]`, `{"a":`, `"x"`} {
		_, err = f.PublishVersion(ctx, "standard", json.RawMessage(bad), "", "alice")
		wantErr(t, "PublishVersion of "+bad, err, fleet.ErrInvalid)
	}
	if p := mustGetPlan(t, f, "standard"); p.Latest != 3 {
		t.Errorf("refused publishes moved latest to %d", p.Latest)
	}
}

func testPublishConcurrently(t *testing.T, s tenant.Store) {
	f := fleetStore(t, s)
	mustPlan(t, f, "standard")
	const publishers = 8
	got := make([]int64, publishers)
	errs := make([]error, publishers)
	var wg sync.WaitGroup
	for i := range publishers {
		wg.Go(func() {
			v, err := f.PublishVersion(ctx, "standard", json.RawMessage(fmt.Sprintf(`{"publisher":%d}`, i)), "", fmt.Sprint("publisher-", i))
			if errs[i] = err; err == nil {
				got[i] = v.Version
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("publisher %d: %v", i, err)
		}
	}
	slices.Sort(got)
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Errorf("concurrent publishes got versions %v, want %v", got, want)
	}
	if p := mustGetPlan(t, f, "standard"); p.Latest != publishers || p.Current != 1 {
		t.Errorf("after %d publishes: latest %d, current %d; want %d, 1", publishers, p.Latest, p.Current, publishers)
	}
	vs, err := f.ListVersions(ctx, "standard")
	if err != nil || len(vs) != publishers {
		t.Fatalf("ListVersions = %d versions, %v", len(vs), err)
	}
	for _, v := range vs {
		var c struct{ Publisher int }
		if err := json.Unmarshal(v.Config, &c); err != nil || v.CreatedBy != fmt.Sprint("publisher-", c.Publisher) {
			t.Errorf("version %d has the config of publisher %d but was created by %s", v.Version, c.Publisher, v.CreatedBy)
		}
	}
}
