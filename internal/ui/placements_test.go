package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// A tenant with placements: the list shows what it runs on, and its page
// shows each placement with its provider, status, message, endpoints and
// drift, and asks the provider for each placement's workload.
func TestPlacementsAreShown(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createTenant(t, `{"name":"acme","placements":[
		{"name":"web","compute_config":{"image":"web:1"}},
		{"name":"worker","compute_config":{"image":"worker:1"}}]}`)
	s.createTenant(t, `{"name":"plain","compute_config":{"image":"a"}}`)
	ctx := context.Background()
	for _, obs := range []tenant.Observation{
		{Placement: "web", Status: tenant.StatusProvisioning},
		{Placement: "web", Status: tenant.StatusReady, Settles: true,
			Endpoints: []provider.Endpoint{{Container: "main", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:49153"}},
			Drift: &tenant.DriftReport{DetectedAt: time.Now(), Generation: 1, Policy: provider.DriftObserve, Differences: []provider.Drift{
				{Path: "deployment/replicas", Kind: provider.DriftScale, Expected: "1", Found: "5"},
			}}},
		{Placement: "worker", Status: tenant.StatusProvisioning},
		{Placement: "worker", Status: tenant.StatusFailed, Settles: true, Message: "provision: no node has capacity"},
	} {
		obs.Generation, obs.Actor = 1, "test"
		if _, err := s.store.UpdateObserved(ctx, id, obs); err != nil {
			t.Fatalf("observe %s %s: %v", obs.Placement, obs.Status, err)
		}
	}
	b := s.browser(t)

	list := b.get("/ui/")
	if row := rowOf(t, list.body, "acme"); !strings.Contains(row, `<td data-label="Provider">mock</td>`) {
		t.Errorf("the row of acme does not show its provider once:\n%s", row)
	}
	if row := rowOf(t, list.body, "plain"); !strings.Contains(row, `<td data-label="Provider">mock</td>`) {
		t.Errorf("the row of plain:\n%s", row)
	}

	p := b.get("/ui/tenants/acme")
	web, worker := sectionOf(t, p.body, "p-web"), sectionOf(t, p.body, "p-worker")
	for _, want := range []string{`<h4 id="p-web-h">web</h4>`, "<dd>mock</dd>", `<span class="badge ok">ready</span>`, `<a href="http://127.0.0.1:49153" rel="noopener">`,
		"main port 8080/tcp", "Last drift", "observed, not repaired", "<code>deployment/replicas</code>", "<code>5</code>"} {
		if !strings.Contains(web, want) {
			t.Errorf("the placement web lacks %s:\n%s", want, web)
		}
	}
	for _, want := range []string{`<h4 id="p-worker-h">worker</h4>`, "<dd>mock</dd>", `>failed</span>`, `<p class="status-message">provision: no node has capacity</p>`, "None yet."} {
		if !strings.Contains(worker, want) {
			t.Errorf("the placement worker lacks %s:\n%s", want, worker)
		}
	}
	if strings.Contains(worker, "Last drift") {
		t.Errorf("worker, which never drifted, shows a drift:\n%s", worker)
	}
	for _, want := range []string{"<h2 id=\"workload-h\">Workloads</h2>", "No workload runs for this placement yet.", "compute_config of web", "compute_config of worker"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the tenant's page lacks %s", want)
		}
	}
	if strings.Contains(p.body, "did not answer") {
		t.Errorf("the page asked for the workload of the tenant, not of each placement:\n%s", p.body)
	}

	plainPage := b.get("/ui/tenants/plain").body
	if strings.Contains(plainPage, `class="placement"`) || !strings.Contains(plainPage, "<h2 id=\"workload-h\">Workload</h2>") || !strings.Contains(plainPage, "No workload runs for this tenant yet.") {
		t.Errorf("a plain tenant's page shows placements:\n%s", plainPage)
	}
}

// sectionOf is the section of body whose id is id.
func sectionOf(t *testing.T, body, id string) string {
	t.Helper()
	start := strings.Index(body, `<section class="placement" id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no section %s in:\n%s", id, body)
	}
	end := strings.Index(body[start:], "</section>")
	if end < 0 {
		t.Fatalf("section %s does not end", id)
	}
	return body[start : start+end]
}

// A tenant with placements is edited as the text of its placements; saved,
// they replace the tenant's.
func TestPlacementsAreEditedAsText(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createTenant(t, `{"name":"acme","placements":[
		{"name":"web","compute_config":{"image":"web:1"}},
		{"name":"worker","compute_config":{"image":"worker:1"}}]}`)
	b := s.browser(t)
	p := b.get("/ui/tenants/acme/edit")
	for _, want := range []string{"This tenant has placements", "placements", "web:1", "worker:1"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the edit page lacks %q:\n%s", want, p.body)
		}
	}
	text := "placements:\n  - name: web\n    compute_config:\n      image: web:2\n"
	saved := b.post("/ui/tenants/acme/edit", url.Values{"csrf": {b.csrf("/ui/tenants/acme")}, "_action": {"save"}, "_version": {"1"}, "mode": {"raw"}, "_raw": {text}})
	if saved.status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", saved.status, saved.body)
	}
	got, err := s.store.Get(context.Background(), id, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if web, worker := got.Placement("web"), got.Placement("worker"); web == nil || string(web.ComputeConfig) != `{"image":"web:2"}` || worker == nil || !worker.Removed {
		t.Errorf("after the save: placements %+v", got.Placements)
	}
}
