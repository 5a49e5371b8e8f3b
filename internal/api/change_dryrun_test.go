package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// keptState is what a dry run must leave as it was: the tenant as GET shows
// it, its history and the event feed.
type keptState struct {
	tenant  wire.Tenant
	history int
	feed    int
}

func snapshot(t *testing.T, ts *testServer, name string) keptState {
	t.Helper()
	res := ts.do(t, "GET", "/v1/tenants/"+name, "", "")
	if res.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, res.status, res.body)
	}
	var events wire.EventList
	mustDecode(t, ts.do(t, "GET", "/v1/tenants/"+name+"/events", "", ""), &events)
	return keptState{tenant: res.tenant(t), history: len(events.Events), feed: len(feed(t, ts, "").Events)}
}

// unchanged fails t unless the tenant, its history and the feed are as
// before.
func (before keptState) unchanged(t *testing.T, ts *testServer, after string) {
	t.Helper()
	now := snapshot(t, ts, before.tenant.Name)
	if now.tenant.Version != before.tenant.Version || now.tenant.Generation != before.tenant.Generation ||
		string(now.tenant.ComputeConfig) != string(before.tenant.ComputeConfig) || !mapsEqual(now.tenant.Labels, before.tenant.Labels) {
		t.Errorf("after %s the tenant is at version %d, generation %d, with compute_config %s and labels %v; want it as it was: %d, %d, %s, %v", after,
			now.tenant.Version, now.tenant.Generation, now.tenant.ComputeConfig, now.tenant.Labels,
			before.tenant.Version, before.tenant.Generation, before.tenant.ComputeConfig, before.tenant.Labels)
	}
	if now.history != before.history || now.feed != before.feed {
		t.Errorf("after %s the history has %d events and the feed %d; want %d and %d", after, now.history, now.feed, before.history, before.feed)
	}
}

// TestChangeDryRun: PUT and PATCH with dry_run=true check all that the
// change would (the body against the provider, If-Match, the tenant's
// state), answer the tenant as the change would make it, rendered as a
// create's dry run with its effective config and layers, and the ETag of
// the tenant as stored; nothing is stored, no event recorded.
func TestChangeDryRun(t *testing.T) {
	ts := newEventsServer(t)
	ts.create(t, "acme", `{"image":"example.com/app:1","secrets":{"DB":"hunter2"}}`)
	before := snapshot(t, ts, "acme")

	for _, tc := range []struct {
		method, contentType, body string
	}{
		{"PUT", "application/json", `{"compute_config":{"image":"example.com/app:2","secrets":{"DB":"[redacted]"}},"labels":{"tier":"gold"}}`},
		{"PATCH", "application/merge-patch+json", `{"compute_config":{"image":"example.com/app:2"},"labels":{"tier":"gold"}}`},
	} {
		t.Run(tc.method, func(t *testing.T) {
			res := ts.do(t, tc.method, "/v1/tenants/acme?dry_run=true", tc.contentType, tc.body, "If-Match", etagOf(before.tenant))
			if res.status != http.StatusOK {
				t.Fatalf("dry run: %d %s", res.status, res.body)
			}
			got := res.tenant(t)
			if got.Generation != before.tenant.Generation+1 || got.Version != before.tenant.Version+1 || got.Labels["tier"] != "gold" ||
				!strings.Contains(string(got.ComputeConfig), "example.com/app:2") {
				t.Errorf("dry run answered %s; want the tenant changed, at the next generation", res.body)
			}
			if res.header.Get("ETag") != etagOf(before.tenant) {
				t.Errorf("dry run ETag %s; want the stored tenant's, %s", res.header.Get("ETag"), etagOf(before.tenant))
			}
			if !strings.Contains(string(got.EffectiveConfig), "FROM_DEFAULTS") || got.ConfigLayers == nil ||
				!strings.Contains(string(got.ConfigLayers.Defaults), "FROM_DEFAULTS") || string(got.ConfigLayers.Plan) != "null" ||
				!strings.Contains(string(got.ConfigLayers.Tenant), "example.com/app:2") {
				t.Errorf("dry run: effective_config %s, config_layers %+v; want them as a create's dry run shows them", got.EffectiveConfig, got.ConfigLayers)
			}
			if strings.Contains(string(res.body), "hunter2") {
				t.Errorf("dry run shows the secret: %s", res.body)
			}
			before.unchanged(t, ts, "a dry run")
		})
	}

	t.Run("a change that alters nothing", func(t *testing.T) {
		res := ts.do(t, "PATCH", "/v1/tenants/acme?dry_run=true", "application/merge-patch+json", `{}`)
		if got := res.tenant(t); res.status != http.StatusOK || got.Generation != before.tenant.Generation || got.Version != before.tenant.Version ||
			got.EffectiveConfig == nil {
			t.Errorf("dry run of no change: %d %s; want the tenant as it is, with its effective config", res.status, res.body)
		}
	})

	for _, tc := range []struct {
		name, method, contentType, body string
		headers                         []string
		status                          int
		code                            string
		pointers                        []string
	}{
		{"PUT of an invalid config", "PUT", "application/json", `{"compute_config":{"image":5}}`, nil,
			http.StatusUnprocessableEntity, wire.CodeInvalidComputeConfig, []string{"/compute_config/image"}},
		{"PATCH of an invalid config", "PATCH", "application/merge-patch+json", `{"compute_config":{"image":5}}`, nil,
			http.StatusUnprocessableEntity, wire.CodeInvalidComputeConfig, []string{"/compute_config/image"}},
		{"PUT with a stale If-Match", "PUT", "application/json", `{"compute_config":{"image":"b"}}`, []string{"If-Match", `"7"`},
			http.StatusPreconditionFailed, wire.CodePreconditionFailed, nil},
		{"PATCH with a stale If-Match", "PATCH", "application/merge-patch+json", `{"labels":{"a":"b"}}`, []string{"If-Match", `"7"`},
			http.StatusPreconditionFailed, wire.CodePreconditionFailed, nil},
		{"PATCH of the name", "PATCH", "application/merge-patch+json", `{"name":"other"}`, nil,
			http.StatusBadRequest, wire.CodeInvalidBody, []string{"/name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/v1/tenants/acme?dry_run=true", "/v1/tenants/acme"} {
				expectProblem(t, ts.do(t, tc.method, path, tc.contentType, tc.body, tc.headers...), tc.status, tc.code, tc.pointers...)
			}
			before.unchanged(t, ts, "a refused dry run")
		})
	}

	t.Run("dry_run not a boolean", func(t *testing.T) {
		res := ts.do(t, "PUT", "/v1/tenants/acme?dry_run=maybe", "application/json", `{"compute_config":{"image":"b"}}`)
		if p := res.problem(t); res.status != http.StatusBadRequest || p.Code != wire.CodeInvalidParameter || len(p.Errors) != 1 || p.Errors[0].Parameter != "dry_run" {
			t.Errorf("dry_run=maybe: %d %s", res.status, res.body)
		}
	})
}

// TestChangeDryRunOfADeletingTenant: a tenant being deleted cannot be
// changed, dry run or not: the same 409.
func TestChangeDryRunOfADeletingTenant(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "acme", `{"image":"a"}`)
	if res := ts.do(t, "DELETE", "/v1/tenants/acme", "", ""); res.status != http.StatusAccepted {
		t.Fatalf("DELETE: %d %s", res.status, res.body)
	}
	for _, path := range []string{"/v1/tenants/acme?dry_run=true", "/v1/tenants/acme"} {
		expectProblem(t, ts.do(t, "PUT", path, "application/json", `{"compute_config":{"image":"b"}}`), http.StatusConflict, wire.CodeTenantDeleting)
		expectProblem(t, ts.do(t, "PATCH", path, "application/merge-patch+json", `{"labels":{"a":"b"}}`), http.StatusConflict, wire.CodeTenantDeleting)
	}
	expectProblem(t, ts.do(t, "PUT", "/v1/tenants/nobody?dry_run=true", "application/json", `{"compute_config":{"image":"b"}}`),
		http.StatusNotFound, wire.CodeTenantNotFound)
}

// TestChangeDryRunOnPlan: a dry run of a tenant that follows a plan shows
// the plan's layer, and one onto a plan that does not exist is the 422 a
// change gets.
func TestChangeDryRunOnPlan(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "standard", `{"image":"example.com/app:1","env":{"TIER":"standard"}}`)
	if res := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"acme","compute_config":{},"plan":{"name":"standard"}}`); res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	res := ts.do(t, "PATCH", "/v1/tenants/acme?dry_run=true", "application/merge-patch+json", `{"compute_config":{"env":{"OWN":"x"}}}`)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	if got.ConfigLayers == nil || !strings.Contains(string(got.ConfigLayers.Plan), "TIER") || !strings.Contains(string(got.ConfigLayers.Tenant), "OWN") ||
		!strings.Contains(string(got.EffectiveConfig), "TIER") || !strings.Contains(string(got.EffectiveConfig), "OWN") {
		t.Errorf("dry run: effective_config %s, config_layers %+v; want the plan's layer and the tenant's", got.EffectiveConfig, got.ConfigLayers)
	}
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme?dry_run=true", "application/merge-patch+json", `{"plan":{"name":"gone"}}`),
		http.StatusUnprocessableEntity, wire.CodeInvalidPlan, "/plan/name")
}

// TestChangeDryRunWithPlacements: each placement the change keeps or adds
// shows its effective config; one it removes is shown removed, without.
func TestChangeDryRunWithPlacements(t *testing.T) {
	ts := newServer(t)
	if res := ts.do(t, "POST", "/v1/tenants", "application/json", twoPlacements); res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	body := `{"placements":[{"name":"worker","compute_config":{"image":"example.com/worker:2"}},{"name":"batch","compute_config":{"image":"example.com/batch:1"}}]}`
	res := ts.do(t, "PUT", "/v1/tenants/acme?dry_run=true", "application/json", body)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	shown := map[string]wire.Placement{}
	for _, p := range got.Placements {
		shown[p.Name] = p
	}
	if web := shown["web"]; !web.Removed || web.EffectiveConfig != nil {
		t.Errorf("placement web: %+v; want it removed, without an effective config", web)
	}
	for _, name := range []string{"worker", "batch"} {
		if p := shown[name]; p.Removed || !strings.Contains(string(p.EffectiveConfig), "FROM_DEFAULTS") || !strings.Contains(string(p.EffectiveConfig), name+":") {
			t.Errorf("placement %s: %+v; want it with its effective config", name, p)
		}
	}
	if got.EffectiveConfig != nil || got.ConfigLayers != nil {
		t.Errorf("the tenant-level fields show the removed placement web: effective_config %s, config_layers %+v; want neither", got.EffectiveConfig, got.ConfigLayers)
	}
	var after wire.Tenant
	mustDecode(t, ts.do(t, "GET", "/v1/tenants/acme", "", ""), &after)
	if after.Version != 1 || len(after.Placements) != 2 || after.Placements[0].Removed {
		t.Errorf("after a dry run the tenant is at version %d with placements %+v; want it as created", after.Version, after.Placements)
	}
}

func etagOf(t wire.Tenant) string { return `"` + strconv.FormatInt(t.Version, 10) + `"` }
