package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/wire"
)

const twoPlacements = `{"name":"acme","labels":{"tier":"gold"},"placements":[
	{"name":"web","compute_config":{"image":"example.com/web:1","secrets":{"DB":"hunter2"}}},
	{"name":"worker","compute_config":{"image":"example.com/worker:1"}}]}`

// TestCreateWithPlacements: a tenant declared with placements is shown
// with them, each resolved and redacted on its own, the tenant-level
// fields those of the first; a plain tenant shows none.
func TestCreateWithPlacements(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "POST", "/v1/tenants", "application/json", twoPlacements)
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	if len(got.Placements) != 2 || got.Placements[0].Name != "web" || got.Placements[1].Name != "worker" {
		t.Fatalf("placements %+v", got.Placements)
	}
	web, worker := got.Placements[0], got.Placements[1]
	if web.ComputeProvider != "mock" || web.Status != "requested" || web.WorkloadID == got.ID || web.WorkloadID == worker.WorkloadID ||
		!strings.HasPrefix(web.WorkloadName, "acme-web-") || !strings.HasPrefix(worker.WorkloadName, "acme-worker-") {
		t.Errorf("placements %+v", got.Placements)
	}
	if !strings.Contains(string(web.ComputeConfig), `"DB":"[redacted]"`) || strings.Contains(string(res.body), "hunter2") {
		t.Errorf("a placement's secret is not redacted: %s", res.body)
	}
	if got.ComputeProvider != "mock" || string(got.ComputeConfig) != string(web.ComputeConfig) || got.Status != "requested" {
		t.Errorf("tenant-level fields %q %s %s: want the first placement's", got.ComputeProvider, got.ComputeConfig, got.Status)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme", "", ""); r.status != 200 || len(r.tenant(t).Placements) != 2 {
		t.Errorf("GET: %d %s", r.status, r.body)
	}
	plain := ts.create(t, "plain", `{"image":"a"}`)
	if plain.Placements != nil {
		t.Errorf("a plain tenant shows placements %+v", plain.Placements)
	}

	dry := ts.do(t, "POST", "/v1/tenants?dry_run=true", "application/json", strings.Replace(twoPlacements, `"acme"`, `"dry"`, 1))
	if dry.status != 200 {
		t.Fatalf("dry run: %d %s", dry.status, dry.body)
	}
	for _, p := range dry.tenant(t).Placements {
		if !strings.Contains(string(p.EffectiveConfig), "FROM_DEFAULTS") {
			t.Errorf("dry run: placement %s effective config %s lacks the operator's defaults", p.Name, p.EffectiveConfig)
		}
	}
}

// TestPlacementsRefused: every problem of a placement is reported at its
// pointer, and nothing is stored.
func TestPlacementsRefused(t *testing.T) {
	ts := newServer(t)
	for _, tt := range []struct {
		name, body string
		status     int
		pointers   []string
	}{
		{"both ways", `{"name":"a","compute_config":{"image":"a"},"placements":[{"name":"web","compute_config":{"image":"a"}}]}`, 400, []string{"/placements"}},
		{"empty", `{"name":"a","placements":[]}`, 400, []string{"/placements"}},
		{"bad name", `{"name":"a","placements":[{"name":"Web!","compute_config":{"image":"a"}}]}`, 400, []string{"/placements/0/name"}},
		{"config not an object", `{"name":"a","placements":[{"name":"web","compute_config":{"image":"a"}},{"name":"worker","compute_config":[1]}]}`, 400, []string{"/placements/1/compute_config"}},
		{"schema", `{"name":"a","placements":[{"name":"web","compute_config":{"image":"a"}},{"name":"worker","compute_config":{"image":7}}]}`, 422, []string{"/placements/1/compute_config/image"}},
		{"unknown provider", `{"name":"a","placements":[{"name":"web","compute_config":{"image":"a","compute_provider":"nope"}}]}`, 422, []string{"/placements/0/compute_config/compute_provider"}},
		{"twice the same name", `{"name":"a","placements":[{"name":"web","compute_config":{"image":"a"}},{"name":"web","compute_config":{"image":"b"}}]}`, 400, []string{"/placements/1/name"}},
		{"unknown member", `{"name":"a","placements":[{"name":"web","compute_config":{"image":"a"},"provider":"mock"}]}`, 400, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", "/v1/tenants", "application/json", tt.body)
			if res.status != tt.status {
				t.Fatalf("status %d, want %d: %s", res.status, tt.status, res.body)
			}
			p := res.problem(t)
			for _, want := range tt.pointers {
				if !slices.Contains(pointers(p), want) {
					t.Errorf("pointers %v lack %s: %s", pointers(p), want, res.body)
				}
			}
		})
	}
	if r := ts.do(t, "GET", "/v1/tenants", "", ""); !strings.Contains(string(r.body), `"tenants":[]`) {
		t.Errorf("a refused create stored something: %s", r.body)
	}
}

// TestChangePlacements: a replace declares the placements whole (one left
// out is removed, a new one added), a patch replaces the list, a plain
// compute_config is refused for a tenant with placements, and a
// placement's provider does not change.
func TestChangePlacements(t *testing.T) {
	ts := newServer(t)
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", twoPlacements); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	// The secret sent back redacted keeps its value.
	res := ts.do(t, "PUT", "/v1/tenants/acme", "application/json",
		`{"placements":[{"name":"web","compute_config":{"image":"example.com/web:2","secrets":{"DB":"[redacted]"}}},{"name":"cron","compute_config":{"image":"c"}}]}`, "If-Match", `"1"`)
	if res.status != 200 {
		t.Fatalf("replace: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	names := map[string]wire.Placement{}
	for _, p := range got.Placements {
		names[p.Name] = p
	}
	if got.Generation != 2 || !names["worker"].Removed || names["cron"].Status != "requested" || names["web"].Removed {
		t.Errorf("after the replace: generation %d, placements %+v", got.Generation, got.Placements)
	}
	if !strings.Contains(string(names["web"].ComputeConfig), `"DB":"[redacted]"`) {
		t.Errorf("web's secret: %s", names["web"].ComputeConfig)
	}

	for _, tt := range []struct {
		name, method, contentType, body string
		status                          int
		pointer                         string
	}{
		{"a compute_config alone", "PUT", "application/json", `{"compute_config":{"image":"a"}}`, 422, "/placements"},
		{"a patch of compute_config", "PATCH", "application/merge-patch+json", `{"compute_config":{"image":"a"}}`, 422, "/compute_config"},
		{"another provider", "PUT", "application/json", `{"placements":[{"name":"web","compute_config":{"image":"a","compute_provider":"nope"}}]}`, 422, "/placements/0/compute_config/compute_provider"},
		{"a removed placement again", "PUT", "application/json", `{"placements":[{"name":"web","compute_config":{"image":"a"}},{"name":"worker","compute_config":{"image":"a"}}]}`, 400, "/placements/1/name"},
		{"a plan with placements", "PATCH", "application/merge-patch+json", `{"plan":{"name":"standard"}}`, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, "/v1/tenants/acme", tt.contentType, tt.body)
			if tt.status == 0 {
				if res.status < 400 || res.status >= 500 {
					t.Errorf("status %d, want a 4xx: %s", res.status, res.body)
				}
				return
			}
			if res.status != tt.status || !slices.Contains(pointers(res.problem(t)), tt.pointer) {
				t.Errorf("%d %s: want %d at %s", res.status, res.body, tt.status, tt.pointer)
			}
		})
	}

	patch := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"labels":{"tier":"silver"}}`)
	if patch.status != 200 || patch.tenant(t).Labels["tier"] != "silver" || len(patch.tenant(t).Placements) != 3 {
		t.Errorf("a patch of labels of a tenant with placements: %d %s", patch.status, patch.body)
	}
}

// TestPlacementParameters: events and live status are asked for by
// placement.
func TestPlacementParameters(t *testing.T) {
	ts := newServer(t)
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", twoPlacements); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	res := ts.do(t, "GET", "/v1/tenants/acme/events?placement=web", "", "")
	var events wire.EventList
	if res.status != 200 || json.Unmarshal(res.body, &events) != nil {
		t.Fatalf("events of web: %d %s", res.status, res.body)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme/events?placement=nope", "", ""); r.status != 404 || !slices.Contains(pointers(r.problem(t)), "placement") {
		t.Errorf("events of an unknown placement: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme/status", "", ""); r.status != 400 || !slices.Contains(pointers(r.problem(t)), "placement") {
		t.Errorf("status without a placement: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme/status?placement=nope", "", ""); r.status != 404 {
		t.Errorf("status of an unknown placement: %d %s", r.status, r.body)
	}
	// Nothing provisioned it (no controller here): the provider has no
	// workload for the placement.
	if r := ts.do(t, "GET", "/v1/tenants/acme/status?placement=worker", "", ""); r.status != 404 || r.problem(t).Code != wire.CodeWorkloadNotFound {
		t.Errorf("status of worker: %d %s", r.status, r.body)
	}
}

// TestMoveRequests: a move's refusals over the API — a tenant not ready,
// an approval or a cancel of a placement the tenant lacks, or of a
// tenant of several placements that names none.
func TestMoveRequests(t *testing.T) {
	ts := newServer(t)
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", twoPlacements); r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, tt := range []struct {
		name, path, body string
		status           int
		code, pointer    string
	}{
		{"not ready", "/v1/tenants/acme/move", `{"placement":"web","compute_config":{"image":"b"}}`, 409, wire.CodeTenantMoving, ""},
		{"no such placement", "/v1/tenants/acme/move/approve", `{"placement":"nope"}`, 404, wire.CodeNotFound, "/placement"},
		{"which placement", "/v1/tenants/acme/move/cancel", ``, 404, wire.CodeNotFound, "/placement"},
		{"not moving", "/v1/tenants/acme/move/cancel", `{"placement":"web"}`, 409, wire.CodeTenantMoving, ""},
		{"bad config", "/v1/tenants/acme/move", `{"placement":"web","compute_config":[1]}`, 400, wire.CodeInvalidBody, "/compute_config"},
		{"unknown member", "/v1/tenants/acme/move", `{"placement":"web","compute_config":{"image":"b"},"to":"x"}`, 400, wire.CodeInvalidBody, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", tt.path, "application/json", tt.body)
			p := res.problem(t)
			if res.status != tt.status || p.Code != tt.code || (tt.pointer != "" && !slices.Contains(pointers(p), tt.pointer)) {
				t.Errorf("%d %s; want %d %s at %q", res.status, res.body, tt.status, tt.code, tt.pointer)
			}
		})
	}
}

// TestPlacementsFollowAPlan: a plan version may hold a fragment per
// placement (checked at its pointer like the rest of the config); a tenant
// of several placements follows it, each placement's effective config
// being its own layer of the plan; and a rollout's fleet plan shows the
// changes of each placement.
func TestPlacementsFollowAPlan(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "regional", `{"image":"example.com/app:1","env":{"REGION":"none"},"placements":{"eu":{"env":{"REGION":"eu"}}}}`)
	res := ts.do(t, "POST", "/v1/plans/regional/versions", "application/json", `{"config":{"placements":{"Bad Name":{},"eu":{"image":7},"us":"x"}}}`)
	if res.status != 422 {
		t.Fatalf("a version with bad fragments: %d %s", res.status, res.body)
	}
	for _, want := range []string{"/config/placements/Bad Name", "/config/placements/us"} {
		if !slices.Contains(pointers(res.problem(t)), want) {
			t.Errorf("a version with bad fragments: pointers %v lack %s", pointers(res.problem(t)), want)
		}
	}
	res = ts.do(t, "POST", "/v1/plans/regional/versions", "application/json", `{"config":{"placements":{"eu":{"image":7}}}}`)
	if res.status != 422 || !slices.Contains(pointers(res.problem(t)), "/config/placements/eu/image") {
		t.Errorf("a fragment that breaks the provider's schema: %d %s; want 422 at /config/placements/eu/image", res.status, res.body)
	}

	body := `{"name":"acme","plan":{"name":"regional"},"placements":[{"name":"eu","compute_config":{}},{"name":"us","compute_config":{"env":{"OWN":"1"}}}]}`
	dry := ts.do(t, "POST", "/v1/tenants?dry_run=true", "application/json", body)
	if dry.status != 200 {
		t.Fatalf("dry run: %d %s", dry.status, dry.body)
	}
	want := map[string][]string{"eu": {`"REGION":"eu"`}, "us": {`"REGION":"none"`, `"OWN":"1"`}}
	for _, p := range dry.tenant(t).Placements {
		for _, w := range want[p.Name] {
			if !strings.Contains(string(p.EffectiveConfig), w) || !strings.Contains(string(p.EffectiveConfig), "example.com/app:1") {
				t.Errorf("placement %s's effective config %s lacks %s and the plan's image", p.Name, p.EffectiveConfig, w)
			}
		}
	}
	created := ts.do(t, "POST", "/v1/tenants", "application/json", body)
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	if got := created.tenant(t); got.Plan == nil || got.Plan.Name != "regional" || got.Plan.Version != 1 || len(got.Placements) != 2 {
		t.Fatalf("the tenant follows %+v with placements %+v; want regional v1 with two", got.Plan, got.Placements)
	}
	if patch := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"labels":{"tier":"gold"}}`); patch.status != 200 || patch.tenant(t).Plan == nil {
		t.Errorf("a patch of labels: %d %s; want the tenant on its plan still", patch.status, patch.body)
	}

	ts.publish(t, "regional", `{"image":"example.com/app:2","env":{"REGION":"none"},"placements":{"eu":{"env":{"REGION":"eu"}}}}`)
	res = ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", `{"plan":"regional"}`)
	if res.status != 200 {
		t.Fatalf("fleet plan: %d %s", res.status, res.body)
	}
	var fp wire.FleetPlan
	mustDecode(t, res, &fp)
	if len(fp.Waves) != 1 || len(fp.Waves[0].Tenants) != 1 {
		t.Fatalf("the fleet plan's waves: %+v; want acme alone", fp.Waves)
	}
	d := fp.DiffOf(fp.Waves[0].Tenants[0])
	var fields []string
	for _, c := range d.Changes {
		fields = append(fields, c.Field)
	}
	for _, placement := range []string{"eu", "us"} {
		if !slices.ContainsFunc(fields, func(f string) bool {
			return strings.HasPrefix(f, "placements/"+placement+": ") && strings.HasSuffix(f, "/image")
		}) {
			t.Errorf("the fleet plan's changes %v lack placement %s's image", fields, placement)
		}
	}
	if r := ts.do(t, "POST", "/v1/tenants/acme/move", "application/json", `{"placement":"eu","plan":{"name":"regional"}}`); r.status < 400 || r.status >= 500 {
		t.Errorf("a move of a placement of a tenant of several onto a plan: %d %s; want a 4xx", r.status, r.body)
	}
}
