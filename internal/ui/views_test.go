package ui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
)

// The tenants list has a plan column: the plan and version a tenant
// follows, linked to the plan, and whether it is pinned.
func TestListShowsThePlan(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants", `{"name":"pinned","compute_config":{},"plan":{"name":"web","version":1,"pinned":true}}`, nil)
	s.createTenant(t, `{"name":"alone","compute_config":{"image":"a"}}`)
	p := s.browser(t).get("/ui/")
	if !strings.Contains(p.body, `<th scope="col">Plan</th>`) {
		t.Error("the list has no plan column")
	}
	for name, want := range map[string]string{
		"t0":     `<td data-label="Plan"><a href="/ui/plans/web">web@1</a></td>`,
		"pinned": `<td data-label="Plan"><a href="/ui/plans/web">web@1</a> <span class="badge warn">pinned</span></td>`,
		"alone":  `<td data-label="Plan"><span class="muted">—</span></td>`,
	} {
		if row := rowOf(t, p.body, name); !strings.Contains(row, want) {
			t.Errorf("the row of %s lacks %s:\n%s", name, want, row)
		}
	}
}

// rowOf is the list's row of the tenant called name.
func rowOf(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr id="t-[^"]+">\s*<td data-label="Name"><a class="name" href="/ui/tenants/` + name + `">.*?</tr>`).FindString(body)
	if m == "" {
		t.Fatalf("no row of %s in:\n%s", name, body)
	}
	return m
}

// The new-tenant form has a plan field, made of the plans there are; what
// it sends makes the tenant follow the plan, and the API's verdict on it
// is shown at its input. Without plans there is no field.
func TestNewTenantFormHasAPlanField(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	if p := b.get("/ui/tenants/new"); strings.Contains(p.body, `name="/plan/name"`) {
		t.Error("a plan field without plans")
	}
	s.fleet(t) // plan web, versions 1 and 2
	p := b.get("/ui/tenants/new")
	for _, want := range []string{`<select id="f.2f.plan.2f.name" name="/plan/name"`, `<option value="web">web</option>`, `name="/plan/version"`, `name="/plan/pinned"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	// The plan comes right after the name, before the config it changes.
	if name, plan, config := strings.Index(p.body, `name="/name"`), strings.Index(p.body, `name="/plan/name"`), strings.Index(p.body, `name="/compute_config/image"`); !(name < plan && plan < config) {
		t.Errorf("the plan field is not between the name and the config: %d, %d, %d", name, plan, config)
	}
	form := url.Values{"csrf": {b.csrf("/ui/tenants/new")}, "_action": {"save"}, "provider": {"mock"}, "/name": {"acme"}, "/plan/name": {"web"}, "/plan/version": {"1"}}
	if p := b.post("/ui/tenants/new", form); p.status != http.StatusSeeOther || p.location != "/ui/tenants/acme" {
		t.Fatalf("create with a plan: %d %s\n%s", p.status, p.location, p.body)
	}
	var got client.Tenant
	s.mustCall(t, http.StatusOK, "GET", "/v1/tenants/acme", "", &got)
	if got.Plan == nil || got.Plan.Name != "web" || got.Plan.Version != 1 || got.Plan.Pinned {
		t.Errorf("the tenant follows %+v, want web@1", got.Plan)
	}
	form.Set("/name", "globex")
	form.Set("/plan/version", "9")
	if p := b.post("/ui/tenants/new", form); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="f.2f.plan.2f.version-err"`) {
		t.Errorf("a version the plan does not have: %d\n%s", p.status, p.body)
	}
}

// Endpoint links say where they go: their text is the address they open,
// in the list and on the tenant's page; an endpoint that is not a web
// address is shown as text.
func TestEndpointLinksShowTheirAddress(t *testing.T) {
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, siteOptions{provider: p})
	s.runController(t)
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":8080}],"x-mock":{"listen":true}}}`)
	s.waitTenant(t, "acme", func(c client.Tenant) (bool, error) {
		return c.Status == client.StatusReady && len(c.Endpoints) > 0, nil
	})
	link := regexp.MustCompile(`<a href="(http://[^"]+)"[^>]*>(?:<code>)?([^<]*)(?:</code>)?</a>`)
	b := s.browser(t)
	for _, page := range []string{"/ui/", "/ui/tenants/acme"} {
		body := b.get(page).body
		links := link.FindAllStringSubmatch(body, -1)
		if len(links) == 0 {
			t.Errorf("%s has no endpoint link:\n%s", page, body)
		}
		for _, l := range links {
			if l[1] != l[2] {
				t.Errorf("%s: a link to %s reads %q", page, l[1], l[2])
			}
		}
	}
}

// A provider that orders its schema's properties gets its fields in that
// order, within each kind (required, single values, lists, maps, groups).
func TestFormKeepsTheDeclaredOrder(t *testing.T) {
	base, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object","required":["image"],"properties":{
		"zone":{"type":"string"},
		"image":{"type":"string"},
		"memory":{"type":"integer"},
		"command":{"type":"array","items":{"type":"string"}},
		"env":{"type":"object","additionalProperties":{"type":"string"}},
		"ports":{"type":"array","items":{"type":"object","properties":{"port":{"type":"integer"},"name":{"type":"string"}}}},
		"args":{"type":"array","items":{"type":"string"}},
		"build":{"type":"object","properties":{"tag":{"type":"string"},"context":{"type":"string"}}},
		"alpha":{"type":"boolean"}}}`)
	s := newSite(t, siteOptions{provider: &reschemed{Provider: base, schema: schema}})
	body := s.browser(t).get("/ui/tenants/new").body
	var got []string
	for _, m := range regexp.MustCompile(`(?:name|value)="(?:add:)?/compute_config/([a-z/]+)(?:#key)?"`).FindAllStringSubmatch(body, -1) {
		if len(got) == 0 || got[len(got)-1] != m[1] {
			got = append(got, m[1])
		}
	}
	want := []string{"image", "zone", "memory", "alpha", "command", "args", "env", "ports", "build/tag", "build/context"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("fields in the order %v, want %v", got, want)
	}
}

// History names landlord's own writers by what they are: the controller
// of a replica, the rollout driver; an API caller by their name.
func TestHistoryNamesItsWriters(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`)
	s.driveRollouts(t)
	s.waitTenant(t, "t0", func(c client.Tenant) (bool, error) { return c.Status == client.StatusReady, nil })
	ro := s.startRollout(t, `{"plan":"web"}`)
	s.waitRollout(t, ro.ID, "completed")
	b := s.browser(t)
	actors := regexp.MustCompile(`<span class="actor" title="([^"]*)">([^<]*)</span>`)
	seen := map[string]bool{}
	for _, page := range []string{"/ui/tenants/t0", "/ui/rollouts/" + ro.ID} {
		for _, m := range actors.FindAllStringSubmatch(b.get(page).body, -1) {
			raw, shown := m[1], m[2]
			switch {
			case raw == "anonymous" && shown == "anonymous":
				seen["caller"] = true
			case strings.HasPrefix(shown, "controller (replica ") && page != "/ui/rollouts/"+ro.ID:
				seen["controller"] = true
			case strings.HasPrefix(shown, "rollout driver (replica "):
				seen["driver "+page] = true
			default:
				t.Errorf("%s: the actor %q reads %q", page, raw, shown)
			}
		}
	}
	for _, want := range []string{"caller", "controller", "driver /ui/tenants/t0", "driver /ui/rollouts/" + ro.ID} {
		if !seen[want] {
			t.Errorf("no %s among the actors shown (%v)", want, seen)
		}
	}
}
