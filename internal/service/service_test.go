package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// fixture is the use cases over a SQLite store and the mock provider,
// with no HTTP in between.
type fixture struct {
	svc   *service.Service
	store *sqlite.Store
}

func newFixture(t *testing.T, withFleet bool) *fixture {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := service.Options{Tenants: store, Compute: computetest.Manager(t, p, compute.ManagerOptions{})}
	if withFleet {
		opts.Fleet = store
	}
	svc, err := service.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, store: store}
}

func (f *fixture) create(t *testing.T, in service.NewTenant) *tenant.Tenant {
	t.Helper()
	c, err := f.svc.CreateTenant(context.Background(), in, "alice", false, nil)
	if err != nil {
		t.Fatalf("create %s: %v", in.Name, err)
	}
	return c.Tenant
}

func (f *fixture) plan(t *testing.T, name string, configs ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.svc.CreatePlan(ctx, &fleet.Plan{Name: name}, "alice", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range configs {
		if _, err := f.svc.PublishVersion(ctx, service.NewVersion{Plan: name, Config: json.RawMessage(c)}, "alice", nil); err != nil {
			t.Fatal(err)
		}
	}
}

// mustRefuse checks that err is a refusal of kind and code whose first
// field is at.
func mustRefuse(t *testing.T, err error, kind service.Kind, code, at string) *service.Error {
	t.Helper()
	var refused *service.Error
	if !errors.As(err, &refused) {
		t.Fatalf("error %v (%T) is no refusal; want %s", err, err, code)
	}
	if refused.Kind != kind || refused.Code != code {
		t.Fatalf("refusal %d %s (%s); want %d %s", refused.Kind, refused.Code, refused.Detail, kind, code)
	}
	if at != "" && (len(refused.Fields) == 0 || refused.Fields[0].Pointer+refused.Fields[0].Parameter != at) {
		t.Fatalf("refusal %s names fields %+v; want %s first", code, refused.Fields, at)
	}
	return refused
}

func TestCreateTenantRules(t *testing.T) {
	f := newFixture(t, true)
	f.plan(t, "standard", `{"image":"plan:1"}`)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		in   service.NewTenant
		kind service.Kind
		code string
		at   string
	}{
		{"no config", service.NewTenant{Name: "a"}, service.KindMalformed, wire.CodeInvalidBody, "/compute_config"},
		{"a config that is no object", service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`[]`)}, service.KindMalformed, wire.CodeInvalidBody, "/compute_config"},
		{"a bad name", service.NewTenant{Name: "Not A Name", ComputeConfig: json.RawMessage(`{"image":"a"}`)}, service.KindMalformed, wire.CodeInvalidName, "/name"},
		{"a plan with no name", service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Version: 1}}, service.KindInvalid, wire.CodeInvalidPlan, "/plan/name"},
		{"no such plan", service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "gold"}}, service.KindInvalid, wire.CodeInvalidPlan, "/plan/name"},
		{"no such version", service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard", Version: 9}}, service.KindInvalid, wire.CodeInvalidPlan, "/plan/version"},
		{"another provider than the plan's", service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`{"compute_provider":"docker"}`), Plan: &tenant.PlanRef{Name: "standard"}},
			service.KindInvalid, wire.CodeInvalidComputeConfig, "/compute_config/compute_provider"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.CreateTenant(ctx, tc.in, "alice", false, nil)
			mustRefuse(t, err, tc.kind, tc.code, tc.at)
		})
	}
	page, err := f.store.List(ctx, tenant.ListOptions{})
	if err != nil || len(page.Tenants) != 0 {
		t.Fatalf("refused creates stored %d tenants (%v)", len(page.Tenants), err)
	}
}

// TestCreateTenantFollowsThePlansCurrentVersion: a new tenant that names no
// version gets the plan's current one (the first published, until a
// rollout moves it), not its latest, which no rollout has shipped yet.
func TestCreateTenantFollowsThePlansCurrentVersion(t *testing.T) {
	f := newFixture(t, true)
	f.plan(t, "standard", `{"image":"plan:1"}`, `{"image":"plan:2"}`)
	got := f.create(t, service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "standard"}})
	if diff := cmp.Diff(&tenant.PlanRef{Name: "standard", Version: 1}, got.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestCreateTenantDryRunStoresNothing(t *testing.T) {
	f := newFixture(t, false)
	ctx := context.Background()
	in := service.NewTenant{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a:1"}`)}
	c, err := f.svc.CreateTenant(ctx, in, "alice", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tenant.Name != "acme" || c.Tenant.Status != tenant.StatusRequested || c.Resolution == nil {
		t.Errorf("dry run answered %+v; want the tenant as it would be stored, with its effective config", c.Tenant)
	}
	if _, err := f.store.Get(ctx, "acme", tenant.GetOptions{}); !errors.Is(err, tenant.ErrNotFound) {
		t.Fatalf("after a dry run, get: %v; want not found", err)
	}
	f.create(t, in)
	if _, err := f.svc.CreateTenant(ctx, in, "alice", true, nil); !errors.Is(err, tenant.ErrNameTaken) {
		t.Errorf("dry run of a taken name: %v; want tenant.ErrNameTaken", err)
	}
}

func TestPlansNeedAFleetStore(t *testing.T) {
	f := newFixture(t, false)
	_, err := f.svc.CreateTenant(context.Background(), service.NewTenant{Name: "a", ComputeConfig: json.RawMessage(`{}`), Plan: &tenant.PlanRef{Name: "p"}}, "alice", false, nil)
	mustRefuse(t, err, service.KindUnsupported, wire.CodeFleetUnavailable, "")
	_, err = f.svc.PlanRollout(context.Background(), service.RolloutRequest{Spec: fleet.Spec{Plan: "p"}}, true)
	mustRefuse(t, err, service.KindUnsupported, wire.CodeFleetUnavailable, "")
}
