package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

func keep(cur *tenant.Tenant) (service.Desired, error) {
	return service.Desired{ComputeConfig: cur.ComputeConfig, Labels: map[string]string{"tier": "gold"}}, nil
}

func TestChangeTenantRefusesAStaleVersion(t *testing.T) {
	f := newFixture(t, false)
	acme := f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)})
	_, err := f.svc.ChangeTenant(context.Background(), service.Change{Tenant: "acme", Expect: service.Versions{acme.Version + 1}, Actor: "bob", Next: keep})
	var stale *service.StaleError
	if !errors.As(err, &stale) || stale.Current != acme.Version {
		t.Fatalf("change with a version the tenant does not have: %v; want a StaleError saying version %d", err, acme.Version)
	}
	got, err := f.svc.ChangeTenant(context.Background(), service.Change{Tenant: "acme", Expect: service.Versions{acme.Version}, Actor: "bob", Next: keep})
	if err != nil || got.Tenant.Labels["tier"] != "gold" || got.Tenant.Generation != 2 || got.Version != got.Tenant.Version {
		t.Fatalf("change with the tenant's version: %+v, %v; want it changed, generation 2", got, err)
	}
}

// TestChangeTenantRetriesAConcurrentChange: without versions expected, a
// change that another writer beat is made again on the new state, so that
// neither is lost; with versions, it is refused.
func TestChangeTenantRetriesAConcurrentChange(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)})
	calls := 0
	race := func(cur *tenant.Tenant) (service.Desired, error) {
		calls++
		if calls == 1 { // another writer changes the tenant after this read
			if _, err := f.store.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: cur.ComputeConfig,
				Annotations: map[string]string{"by": "other"}, Actor: "other"}); err != nil {
				t.Fatal(err)
			}
		}
		return service.Desired{ComputeConfig: cur.ComputeConfig, Annotations: cur.Annotations, Labels: map[string]string{"tier": "gold"}}, nil
	}
	changed, err := f.svc.ChangeTenant(ctx, service.Change{Tenant: "acme", Actor: "bob", Next: race})
	if err != nil {
		t.Fatal(err)
	}
	got := changed.Tenant
	if calls != 2 || got.Labels["tier"] != "gold" || got.Annotations["by"] != "other" {
		t.Fatalf("after %d calls: %+v; want the change made again on the other writer's state", calls, got)
	}
	calls = 0
	_, err = f.svc.ChangeTenant(ctx, service.Change{Tenant: "acme", Expect: service.Versions{got.Version}, Actor: "bob", Next: race})
	var stale *service.StaleError
	if !errors.As(err, &stale) || calls != 1 {
		t.Fatalf("with a version expected, after %d calls: %v; want a StaleError and no second try", calls, err)
	}
}

// TestChangeTenantDryRun: a dry run answers the tenant as the change would
// make it, with its effective config, checks the expected versions as a
// change does, and stores nothing.
func TestChangeTenantDryRun(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	acme := f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)})
	image := func(cur *tenant.Tenant) (service.Desired, error) {
		return service.Desired{ComputeConfig: json.RawMessage(`{"image":"a:2"}`)}, nil
	}
	got, err := f.svc.ChangeTenant(ctx, service.Change{Tenant: "acme", Expect: service.Versions{acme.Version}, Actor: "bob", Next: image, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tenant.Generation != acme.Generation+1 || got.Version != acme.Version || got.Resolution == nil ||
		len(got.Resolutions) != 1 || got.Resolutions[0] != got.Resolution || !strings.Contains(string(got.Tenant.ComputeConfig), "a:2") {
		t.Errorf("dry run: %+v; want the tenant at the next generation with image a:2, its resolution, and version %d", got, acme.Version)
	}
	stored, err := f.store.Get(ctx, acme.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Version != acme.Version || stored.Generation != acme.Generation || strings.Contains(string(stored.ComputeConfig), "a:2") {
		t.Errorf("after a dry run the tenant is %+v; want it as created", stored)
	}
	_, err = f.svc.ChangeTenant(ctx, service.Change{Tenant: "acme", Expect: service.Versions{acme.Version + 1}, Actor: "bob", Next: image, DryRun: true})
	var stale *service.StaleError
	if !errors.As(err, &stale) || stale.Current != acme.Version {
		t.Fatalf("dry run with a version the tenant does not have: %v; want a StaleError saying version %d", err, acme.Version)
	}
}

func TestChangeTenantRefusesADeletingTenant(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	acme := f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)})
	if _, err := f.svc.DeleteTenant(ctx, service.Deletion{Tenant: acme.ID, Actor: "bob"}); err != nil {
		t.Fatal(err)
	}
	for _, dryRun := range []bool{false, true} {
		_, err := f.svc.ChangeTenant(ctx, service.Change{Tenant: "acme", Actor: "bob", Next: keep, DryRun: dryRun})
		mustRefuse(t, err, service.KindConflict, wire.CodeTenantDeleting, "")
	}
}

func TestForgetRefusesATenantWhoseProviderIsEnabled(t *testing.T) {
	f := newFixture(t, false)
	acme := f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)})
	_, err := f.svc.DeleteTenant(context.Background(), service.Deletion{Tenant: acme.ID, Actor: "bob", Forget: true})
	mustRefuse(t, err, service.KindConflict, wire.CodeProviderEnabled, "forget")
	if got, err := f.store.Get(context.Background(), acme.ID, tenant.GetOptions{}); err != nil || got.DeletionRequestedAt != nil {
		t.Fatalf("the tenant after a refused forget: %+v, %v; want it as it was", got, err)
	}
}

func TestChoosePlan(t *testing.T) {
	cur := &tenant.PlanRef{Name: "standard", Version: 3, Pinned: true}
	for _, tc := range []struct {
		name        string
		cur, choice *tenant.PlanRef
		want        *tenant.PlanRef
		refused     string // the field at fault
	}{
		{"nothing chosen keeps the plan", cur, nil, cur, ""},
		{"the same plan keeps its version", cur, &tenant.PlanRef{Name: "standard"}, &tenant.PlanRef{Name: "standard", Version: 3}, ""},
		{"a name left out is the tenant's", cur, &tenant.PlanRef{Version: 2}, &tenant.PlanRef{Name: "standard", Version: 2}, ""},
		{"another plan starts at its current version", cur, &tenant.PlanRef{Name: "gold"}, &tenant.PlanRef{Name: "gold"}, ""},
		{"a new tenant must name its plan", nil, &tenant.PlanRef{Version: 1}, nil, "/plan/name"},
		{"a negative version", cur, &tenant.PlanRef{Name: "gold", Version: -1}, nil, "/plan/version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := service.ChoosePlan(tc.cur, tc.choice)
			if tc.refused != "" {
				mustRefuse(t, err, service.KindInvalid, wire.CodeInvalidPlan, tc.refused)
				return
			}
			if err != nil || *got != *tc.want {
				t.Fatalf("ChoosePlan = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestPatchPlan(t *testing.T) {
	cur := &tenant.PlanRef{Name: "standard", Version: 3, Pinned: true}
	for _, tc := range []struct {
		name    string
		cur     *tenant.PlanRef
		patch   service.PlanPatch
		want    *tenant.PlanRef
		refused string
	}{
		{"an empty patch keeps the plan", cur, service.PlanPatch{}, cur, ""},
		{"the same name keeps the version", cur, service.PlanPatch{SetName: true, Name: "standard"}, cur, ""},
		{"a new name starts at the current version", cur, service.PlanPatch{SetName: true, Name: "gold"}, &tenant.PlanRef{Name: "gold", Pinned: true}, ""},
		{"a new name with a version", cur, service.PlanPatch{SetName: true, Name: "gold", SetVersion: true, Version: 2}, &tenant.PlanRef{Name: "gold", Version: 2, Pinned: true}, ""},
		{"unpin", cur, service.PlanPatch{SetPinned: true}, &tenant.PlanRef{Name: "standard", Version: 3}, ""},
		{"an empty name", cur, service.PlanPatch{SetName: true}, nil, "/plan/name"},
		{"no plan to change", nil, service.PlanPatch{SetVersion: true, Version: 2}, nil, "/plan/name"},
		{"a negative version", cur, service.PlanPatch{SetVersion: true, Version: -2}, nil, "/plan/version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := service.PatchPlan(tc.cur, tc.patch)
			if tc.refused != "" {
				mustRefuse(t, err, service.KindInvalid, wire.CodeInvalidPlan, tc.refused)
				return
			}
			if err != nil || *got != *tc.want {
				t.Fatalf("PatchPlan = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
