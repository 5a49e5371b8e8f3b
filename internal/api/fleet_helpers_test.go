package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// plan creates a plan on the mock provider and publishes its first
// version, config; it returns the plan's name.
func (ts *testServer) plan(t *testing.T, name, config string) string {
	t.Helper()
	if res := ts.do(t, "POST", "/v1/plans", "application/json", fmt.Sprintf(`{"name":%q}`, name)); res.status != http.StatusCreated {
		t.Fatalf("create plan %s: %d %s", name, res.status, res.body)
	}
	ts.publish(t, name, config)
	return name
}

// publish publishes the next version of a plan.
func (ts *testServer) publish(t *testing.T, plan, config string) wire.PlanVersion {
	t.Helper()
	res := ts.do(t, "POST", "/v1/plans/"+plan+"/versions", "application/json", fmt.Sprintf(`{"config":%s}`, config))
	if res.status != http.StatusCreated {
		t.Fatalf("publish a version of %s: %d %s", plan, res.status, res.body)
	}
	var v wire.PlanVersion
	mustDecode(t, res, &v)
	return v
}

// closeWindow gives a tenant a maintenance window that is closed now: it
// opens in two hours, for an hour.
func (ts *testServer) closeWindow(t *testing.T, tenant string) {
	t.Helper()
	now := time.Now().UTC()
	window := fmt.Sprintf(`{"maintenance_window":{"start":%q,"end":%q}}`, now.Add(2*time.Hour).Format("15:04"), now.Add(3*time.Hour).Format("15:04"))
	if res := ts.do(t, "PATCH", "/v1/tenants/"+tenant, "application/merge-patch+json", window); res.status != http.StatusOK {
		t.Fatalf("close the window of %s: %d %s", tenant, res.status, res.body)
	}
}

// startRollout creates a rollout.
func (ts *testServer) startRollout(t *testing.T, body string) wire.Rollout {
	t.Helper()
	res := ts.do(t, "POST", "/v1/rollouts", "application/json", body)
	if res.status != http.StatusCreated {
		t.Fatalf("start a rollout %s: %d %s", body, res.status, res.body)
	}
	var ro wire.Rollout
	mustDecode(t, res, &ro)
	return ro
}

func mustDecode(t *testing.T, res response, v any) {
	t.Helper()
	if err := json.Unmarshal(res.body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, res.body)
	}
}
