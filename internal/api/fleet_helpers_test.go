package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
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
func (ts *testServer) publish(t *testing.T, plan, config string) api.PlanVersion {
	t.Helper()
	res := ts.do(t, "POST", "/v1/plans/"+plan+"/versions", "application/json", fmt.Sprintf(`{"config":%s}`, config))
	if res.status != http.StatusCreated {
		t.Fatalf("publish a version of %s: %d %s", plan, res.status, res.body)
	}
	var v api.PlanVersion
	mustDecode(t, res, &v)
	return v
}

// startRollout creates a rollout.
func (ts *testServer) startRollout(t *testing.T, body string) api.Rollout {
	t.Helper()
	res := ts.do(t, "POST", "/v1/rollouts", "application/json", body)
	if res.status != http.StatusCreated {
		t.Fatalf("start a rollout %s: %d %s", body, res.status, res.body)
	}
	var ro api.Rollout
	mustDecode(t, res, &ro)
	return ro
}

func mustDecode(t *testing.T, res response, v any) {
	t.Helper()
	if err := json.Unmarshal(res.body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, res.body)
	}
}
