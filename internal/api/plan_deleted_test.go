package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// planDeletedMeanwhile is a store that, when armed, deletes plan standard
// just before each tenant write: a DeletePlan that lands after the API
// read the plan and before its write.
type planDeletedMeanwhile struct {
	*sqlite.Store
	armed atomic.Bool
}

func (s *planDeletedMeanwhile) meanwhile(ctx context.Context) {
	if s.armed.Load() {
		_ = s.DeletePlan(ctx, "standard")
	}
}

func (s *planDeletedMeanwhile) Create(ctx context.Context, t *tenant.Tenant, actor string) (*tenant.Tenant, error) {
	s.meanwhile(ctx)
	return s.Store.Create(ctx, t, actor)
}

func (s *planDeletedMeanwhile) CreateIdempotent(ctx context.Context, t *tenant.Tenant, actor string, res tenant.IdempotentResponse,
	respond func(*tenant.Tenant) (tenant.IdempotentResponse, error)) (*tenant.Tenant, error) {
	s.meanwhile(ctx)
	return s.Store.CreateIdempotent(ctx, t, actor, res, respond)
}

func (s *planDeletedMeanwhile) UpdateDesired(ctx context.Context, id string, change tenant.DesiredChange) (*tenant.Tenant, error) {
	s.meanwhile(ctx)
	return s.Store.UpdateDesired(ctx, id, change)
}

// A create or a change onto a plan deleted while the request was handled
// is the 422 invalid_plan at /plan/name that a plan deleted before gets:
// the store checks the plan in the write's transaction
// (tenant.ErrPlanNotFound), and no tenant follows a plan that is gone.
func TestTenantOnPlanDeletedMeanwhile(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	racing := &planDeletedMeanwhile{Store: store}
	ts := serveOn(t, racing, func(logger *slog.Logger) (provider.Provider, error) {
		return mock.New(mock.Options{Logger: logger})
	})
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	ts.create(t, "beta", `{"image":"example.com/app:1"}`)

	racing.armed.Store(true)
	body := `{"name":"acme","compute_config":{},"plan":{"name":"standard"}}`
	p := expectProblem(t, ts.do(t, "POST", "/v1/tenants", "application/json", body), http.StatusUnprocessableEntity, wire.CodeInvalidPlan, "/plan/name")
	if p.Detail == "" || len(p.Errors) != 1 || p.Errors[0].Message != "there is no plan standard" {
		t.Errorf("problem %+v: want a detail and one error saying there is no plan standard", p)
	}
	if res := ts.do(t, "GET", "/v1/tenants/acme", "", ""); res.status != http.StatusNotFound {
		t.Errorf("GET of a tenant whose create was refused: %d %s", res.status, res.body)
	}

	racing.armed.Store(false)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	racing.armed.Store(true)
	expectProblem(t, ts.do(t, "POST", "/v1/tenants", "application/json", body, "Idempotency-Key", "k-1"),
		http.StatusUnprocessableEntity, wire.CodeInvalidPlan, "/plan/name")

	racing.armed.Store(false)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	racing.armed.Store(true)
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/beta", "application/merge-patch+json", `{"plan":{"name":"standard"}}`),
		http.StatusUnprocessableEntity, wire.CodeInvalidPlan, "/plan/name")
	res := ts.do(t, "GET", "/v1/tenants/beta", "", "")
	var beta wire.Tenant
	if err := json.Unmarshal(res.body, &beta); err != nil || beta.Plan != nil || beta.Generation != 1 {
		t.Errorf("beta after a refused move onto the plan: %s (%v)", res.body, err)
	}
}
