package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// expectProblem checks a problem's status, code and that it names each
// pointer (or parameter) of want.
func expectProblem(t *testing.T, res response, status int, code string, want ...string) wire.Problem {
	t.Helper()
	p := res.problem(t)
	got := pointers(p)
	ok := res.status == status && p.Code == code
	for _, w := range want {
		ok = ok && slices.Contains(got, w)
	}
	if !ok {
		t.Fatalf("%d %s %v, want %d %s naming %v: %s", res.status, p.Code, got, status, code, want, res.body)
	}
	return p
}

func TestPlans(t *testing.T) {
	ts := newServer(t, roleTokens...)
	res := ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"standard","description":"the usual"}`)
	if res.status != http.StatusCreated || res.header.Get("Location") != "/v1/plans/standard" {
		t.Fatalf("create: %d %s %s", res.status, res.header.Get("Location"), res.body)
	}
	var p wire.Plan
	mustDecode(t, res, &p)
	if p.Provider != "mock" || p.LatestVersion != 0 || p.CurrentVersion != 0 || p.CreatedBy != "ops" {
		t.Errorf("created %+v, want provider mock (the default), no version, by ops", p)
	}
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"standard"}`), 409, wire.CodePlanExists, "/name")
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"Not A Name"}`), 422, wire.CodeInvalidBody, "/name")
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"other","provider":"nomad"}`), 422, wire.CodeProviderNotFound, "/provider")
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"other","bogus":1}`), 400, wire.CodeInvalidBody, "/bogus")
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":7}`), 400, wire.CodeInvalidBody, "/name")

	// Versions are numbered from 1; the first is the plan's current one.
	v1 := ts.publish(t, "standard", `{"image":"example.com/app:1"}`)
	v2 := ts.publish(t, "standard", `{"image":"example.com/app:2","env":{"TIER":"standard"}}`)
	if v1.Version != 1 || v2.Version != 2 || v2.Plan != "standard" {
		t.Errorf("versions %d and %d, want 1 and 2", v1.Version, v2.Version)
	}
	mustDecode(t, ts.do(t, "GET", "/v1/plans/standard", "", ""), &p)
	if p.LatestVersion != 2 || p.CurrentVersion != 1 {
		t.Errorf("plan after two versions: latest %d current %d, want 2 and 1", p.LatestVersion, p.CurrentVersion)
	}
	var versions wire.PlanVersionList
	mustDecode(t, ts.do(t, "GET", "/v1/plans/standard/versions", "", ""), &versions)
	if len(versions.Versions) != 2 || versions.Versions[0].Version != 1 || !strings.Contains(string(versions.Versions[1].Config), "app:2") {
		t.Errorf("versions: %+v", versions)
	}
	var got wire.PlanVersion
	mustDecode(t, ts.do(t, "GET", "/v1/plans/standard/versions/2", "", ""), &got)
	if got.Version != 2 {
		t.Errorf("version 2: %+v", got)
	}
	expectProblem(t, ts.do(t, "GET", "/v1/plans/standard/versions/9", "", ""), 404, wire.CodePlanVersionNotFound)
	expectProblem(t, ts.do(t, "GET", "/v1/plans/standard/versions/x", "", ""), 404, wire.CodePlanVersionNotFound)
	expectProblem(t, ts.do(t, "GET", "/v1/plans/nope", "", ""), 404, wire.CodePlanNotFound)
	expectProblem(t, ts.do(t, "POST", "/v1/plans/nope/versions", "application/json", `{"config":{}}`), 404, wire.CodePlanNotFound)
	var list wire.PlanList
	mustDecode(t, ts.do(t, "GET", "/v1/plans", "", ""), &list)
	if len(list.Plans) != 1 || list.Plans[0].Name != "standard" {
		t.Errorf("plans: %+v", list)
	}

	// A version's config is checked against the provider's schema, each
	// problem at its pointer under /config; secrets and a provider choice
	// are refused.
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
		want       []string
	}{
		{"schema", `{"config":{"image":5,"bogus":1}}`, 422, wire.CodeInvalidComputeConfig, []string{"/config/image", "/config/bogus"}},
		{"a secret", `{"config":{"secrets":{"DB":"hunter2"}}}`, 422, wire.CodeInvalidComputeConfig, []string{"/config/secrets/DB"}},
		{"a provider choice", `{"config":{"compute_provider":"mock"}}`, 422, wire.CodeInvalidComputeConfig, []string{"/config/compute_provider"}},
		{"not an object", `{"config":[1]}`, 400, wire.CodeInvalidBody, []string{"/config"}},
		{"no config", `{"message":"x"}`, 400, wire.CodeInvalidBody, []string{"/config"}},
		{"a long message", `{"config":{},"message":"` + strings.Repeat("x", 2000) + `"}`, 422, wire.CodeInvalidComputeConfig, []string{"/message"}},
		{"unknown field", `{"config":{},"bogus":true}`, 400, wire.CodeInvalidBody, []string{"/bogus"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := expectProblem(t, ts.do(t, "POST", "/v1/plans/standard/versions", "application/json", tt.body), tt.status, tt.code, tt.want...)
			if strings.Contains(p.Detail+strings.Join(pointers(p), ""), "hunter2") {
				t.Errorf("the problem shows the secret: %+v", p)
			}
		})
	}
	mustDecode(t, ts.do(t, "GET", "/v1/plans/standard", "", ""), &p)
	if p.LatestVersion != 2 {
		t.Errorf("a refused version was stored: latest %d", p.LatestVersion)
	}

	// Readers read; only admins write.
	reader := *ts
	reader.token = readerToken
	if r := reader.do(t, "GET", "/v1/plans/standard/versions", "", ""); r.status != 200 {
		t.Errorf("a reader lists versions: %d", r.status)
	}
	for _, req := range [][3]string{{"POST", "/v1/plans", `{"name":"x"}`}, {"POST", "/v1/plans/standard/versions", `{"config":{}}`}, {"DELETE", "/v1/plans/standard", ""}} {
		expectProblem(t, reader.do(t, req[0], req[1], "application/json", req[2]), 403, wire.CodeForbidden)
	}

	// A plan that a tenant follows cannot be deleted; the problem says so.
	ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"acme","compute_config":{},"plan":{"name":"standard"}}`)
	p409 := expectProblem(t, ts.do(t, "DELETE", "/v1/plans/standard", "", ""), 409, wire.CodePlanInUse)
	if !strings.Contains(p409.Detail, "acme") || !strings.Contains(p409.Detail, `"plan": null`) {
		t.Errorf("the in-use problem does not say who follows the plan and what to do: %s", p409.Detail)
	}
	if r := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"plan":null,"compute_config":{"image":"own:1"}}`); r.status != 200 {
		t.Fatalf("leave the plan: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "DELETE", "/v1/plans/standard", "", ""); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	expectProblem(t, ts.do(t, "GET", "/v1/plans/standard", "", ""), 404, wire.CodePlanNotFound)
}

// storeWords are words of a store's own errors, which must not reach a
// client.
var storeWords = []string{"sqlite", "postgres", "invalid:", "NUL characters"}

// TestPlanTextWithNULOnEachStore: U+0000 in a version's config or message,
// or a plan's description (a 422 without a pointer in the store's own
// words, a 500 or stored, before, by store) is a 422 naming the field on
// both stores, and nothing is stored.
func TestPlanTextWithNULOnEachStore(t *testing.T) {
	onEachStore(t, func(t *testing.T, ts *testServer) {
		if res := ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"standard"}`); res.status != http.StatusCreated {
			t.Fatalf("create plan: %d %s", res.status, res.body)
		}
		for _, tt := range []struct {
			name, path, body, pointer string
		}{
			{"a config value", "/v1/plans/standard/versions", `{"config":{"env":{"A":"x\u0000y"}}}`, "/config/env/A"},
			{"a config value in an array", "/v1/plans/standard/versions", `{"config":{"args":["a","\u0000"]}}`, "/config/args/1"},
			{"a config key", "/v1/plans/standard/versions", `{"config":{"env":{"A\u0000":"x"}}}`, "/config/env"},
			{"a config key with / and ~", "/v1/plans/standard/versions", `{"config":{"env":{"a/b~":"\u0000"}}}`, "/config/env/a~1b~0"},
			{"a message", "/v1/plans/standard/versions", `{"config":{},"message":"m\u0000"}`, "/message"},
			{"a description", "/v1/plans", `{"name":"other","description":"d\u0000"}`, "/description"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				res := ts.do(t, "POST", tt.path, "application/json", tt.body)
				p := res.problem(t)
				if res.status != http.StatusUnprocessableEntity || !slices.Equal(pointers(p), []string{tt.pointer}) {
					t.Fatalf("%d %s %v, want 422 at %s: %s", res.status, p.Code, pointers(p), tt.pointer, res.body)
				}
				for _, w := range storeWords {
					if strings.Contains(string(res.body), w) {
						t.Errorf("the problem has the store's words (%q): %s", w, res.body)
					}
				}
			})
		}
		// A backslash then u0000 is not U+0000: stored, or, if a store
		// refuses it, refused naming /config without the store's words.
		res := ts.do(t, "POST", "/v1/plans/standard/versions", "application/json", `{"config":{"env":{"A":"\\u0000"}}}`)
		if res.status != http.StatusCreated {
			p := res.problem(t)
			if res.status != http.StatusUnprocessableEntity || !slices.Equal(pointers(p), []string{"/config"}) {
				t.Errorf("an escaped backslash then u0000: %d %v, want 201, or 422 at /config: %s", res.status, pointers(p), res.body)
			}
			for _, w := range storeWords {
				if strings.Contains(string(res.body), w) {
					t.Errorf("the problem has the store's words (%q): %s", w, res.body)
				}
			}
		}
		var p wire.Plan
		mustDecode(t, ts.do(t, "GET", "/v1/plans/standard", "", ""), &p)
		want := int64(0)
		if res.status == http.StatusCreated {
			want = 1
		}
		if p.LatestVersion != want {
			t.Errorf("latest version %d, want %d: a refused version was stored", p.LatestVersion, want)
		}
		if res := ts.do(t, "GET", "/v1/plans/other", "", ""); res.status != http.StatusNotFound {
			t.Errorf("a refused plan was stored: %d %s", res.status, res.body)
		}
	})
}

func TestTenantOnPlan(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "standard", `{"image":"example.com/app:1","env":{"TIER":"standard","SHARED":"plan"}}`)
	ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"empty"}`)

	// The dry run shows the layers: defaults, plan, the tenant's own.
	body := `{"name":"acme","compute_config":{"env":{"SHARED":"tenant","OWN":"x"},"secrets":{"DB":"hunter2"}},"plan":{"name":"standard"}}`
	res := ts.do(t, "POST", "/v1/tenants?dry_run=true", "application/json", body)
	if res.status != 200 {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	dry := res.tenant(t)
	if dry.ConfigLayers == nil {
		t.Fatalf("no config_layers: %s", res.body)
	}
	var effective struct {
		Image string            `json:"image"`
		Env   map[string]string `json:"env"`
	}
	if err := json.Unmarshal(dry.EffectiveConfig, &effective); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"FROM_DEFAULTS": "yes", "TIER": "standard", "SHARED": "tenant", "OWN": "x"}
	if effective.Image != "example.com/app:1" || !mapsEqual(effective.Env, want) {
		t.Errorf("effective config %s, want the plan's image and env %v", dry.EffectiveConfig, want)
	}
	for layer, raw := range map[string]json.RawMessage{"defaults": dry.ConfigLayers.Defaults, "plan": dry.ConfigLayers.Plan, "tenant": dry.ConfigLayers.Tenant} {
		if strings.Contains(string(raw), "hunter2") {
			t.Errorf("layer %s shows the secret: %s", layer, raw)
		}
	}
	if !strings.Contains(string(dry.ConfigLayers.Defaults), "FROM_DEFAULTS") || !strings.Contains(string(dry.ConfigLayers.Plan), "TIER") ||
		!strings.Contains(string(dry.ConfigLayers.Tenant), "OWN") || !strings.Contains(string(dry.ConfigLayers.Tenant), "[redacted]") {
		t.Errorf("layers: %+v", dry.ConfigLayers)
	}
	res = ts.do(t, "POST", "/v1/tenants", "application/json", body)
	if res.status != 201 {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	acme := res.tenant(t)
	if acme.Plan == nil || *acme.Plan != (wire.TenantPlan{Name: "standard", Version: 1}) || acme.ComputeProvider != "mock" {
		t.Errorf("created on plan %+v, provider %s", acme.Plan, acme.ComputeProvider)
	}

	for _, tt := range []struct {
		name, body string
		status     int
		code       string
		pointer    string
	}{
		{"no such plan", `{"name":"b","compute_config":{},"plan":{"name":"gold"}}`, 422, wire.CodeInvalidPlan, "/plan/name"},
		{"no such version", `{"name":"b","compute_config":{},"plan":{"name":"standard","version":9}}`, 422, wire.CodeInvalidPlan, "/plan/version"},
		{"a plan without versions", `{"name":"b","compute_config":{},"plan":{"name":"empty"}}`, 422, wire.CodeInvalidPlan, "/plan/version"},
		{"no plan name", `{"name":"b","compute_config":{},"plan":{"version":1}}`, 422, wire.CodeInvalidPlan, "/plan/name"},
		{"another provider", `{"name":"b","compute_config":{"compute_provider":"docker"},"plan":{"name":"standard"}}`, 422, wire.CodeInvalidComputeConfig, "/compute_config/compute_provider"},
		{"an unknown plan member", `{"name":"b","compute_config":{},"plan":{"name":"standard","tier":1}}`, 400, wire.CodeInvalidBody, "/plan/tier"},
		{"a window's bad time", `{"name":"b","compute_config":{"image":"a"},"maintenance_window":{"start":"25:00","end":"02:00"}}`, 400, wire.CodeInvalidBody, "/maintenance_window/start"},
		{"a window's unknown member", `{"name":"b","compute_config":{"image":"a"},"maintenance_window":{"start":"01:00","end":"02:00","tz":"UTC"}}`, 400, wire.CodeInvalidBody, "/maintenance_window/tz"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := expectProblem(t, ts.do(t, "POST", "/v1/tenants", "application/json", tt.body), tt.status, tt.code, tt.pointer)
			if tt.name == "no such plan" && !strings.Contains(p.Errors[0].Message, "standard") {
				t.Errorf("the problem does not name the plans that exist: %+v", p.Errors)
			}
		})
	}

	patch := func(body string) wire.Tenant {
		t.Helper()
		res := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", body)
		if res.status != 200 {
			t.Fatalf("PATCH %s: %d %s", body, res.status, res.body)
		}
		return res.tenant(t)
	}
	ts.publish(t, "standard", `{"image":"example.com/app:2"}`)
	if got := patch(`{"plan":{"pinned":true}}`); *got.Plan != (wire.TenantPlan{Name: "standard", Version: 1, Pinned: true}) {
		t.Errorf("pin: %+v", got.Plan)
	}
	if got := patch(`{"plan":{"version":2,"pinned":true}}`); *got.Plan != (wire.TenantPlan{Name: "standard", Version: 2, Pinned: true}) {
		t.Errorf("pin to 2: %+v", got.Plan)
	}
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"plan":{"version":7}}`), 422, wire.CodeInvalidPlan, "/plan/version")
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"plan":{"bogus":7}}`), 400, wire.CodeInvalidBody, "/plan/bogus")
	if got := patch(`{"plan":{"pinned":false}}`); *got.Plan != (wire.TenantPlan{Name: "standard", Version: 2}) {
		t.Errorf("unpin: %+v", got.Plan)
	}
	// A replace that leaves plan out keeps it; labels too.
	res = ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"env":{"OWN":"y"},"secrets":{"DB":"[redacted]"}}}`)
	if res.status != 200 || res.tenant(t).Plan == nil || res.tenant(t).Plan.Version != 2 {
		t.Fatalf("PUT without plan: %d %s", res.status, res.body)
	}
	// Leaving the plan needs a config that is valid alone.
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"plan":null}`), 422, wire.CodeInvalidComputeConfig, "/compute_config/image")
	if got := patch(`{"maintenance_window":{"days":["sat"],"start":"02:00","end":"04:00","time_zone":"Europe/Berlin"}}`); got.MaintenanceWindow == nil || got.MaintenanceWindow.End != "04:00" {
		t.Errorf("set a window: %+v", got.MaintenanceWindow)
	}
	if got := patch(`{"maintenance_window":{"end":"05:00"}}`); got.MaintenanceWindow == nil || got.MaintenanceWindow.End != "05:00" || got.MaintenanceWindow.Start != "02:00" {
		t.Errorf("merge into the window: %+v", got.MaintenanceWindow)
	}
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"maintenance_window":{"days":["someday"]}}`), 400, wire.CodeInvalidBody, "/maintenance_window/days/0")
	// Local is each landlord process's own zone: refused, on a change and
	// on a create.
	expectProblem(t, ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"maintenance_window":{"time_zone":"Local"}}`), 400, wire.CodeInvalidBody, "/maintenance_window/time_zone")
	expectProblem(t, ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"local","compute_config":{"image":"a"},"maintenance_window":{"start":"02:00","end":"04:00","time_zone":"Local"}}`),
		400, wire.CodeInvalidBody, "/maintenance_window/time_zone")
	if got := patch(`{"maintenance_window":null}`); got.MaintenanceWindow != nil {
		t.Errorf("remove the window: %+v", got.MaintenanceWindow)
	}

	// ?plan= lists the plan's tenants.
	ts.create(t, "loner", `{"image":"a"}`)
	var list wire.TenantList
	mustDecode(t, ts.do(t, "GET", "/v1/tenants?plan=standard", "", ""), &list)
	if len(list.Tenants) != 1 || list.Tenants[0].Name != "acme" {
		t.Errorf("tenants of plan standard: %+v", list.Tenants)
	}
	if got := patch(`{"plan":null,"compute_config":{"image":"own:1"}}`); got.Plan != nil {
		t.Errorf("leave: %+v", got.Plan)
	}
	if got := patch(`{"plan":{"name":"standard"}}`); *got.Plan != (wire.TenantPlan{Name: "standard", Version: 1}) {
		t.Errorf("follow again: %+v, want the plan's current version, 1", got.Plan)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
