package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

func TestSignInAndRoles(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	b := s.browser(t)
	if p := b.get("/ui/"); p.status != http.StatusSeeOther || p.location != "/ui/signin?next=%2Fui%2F" {
		t.Fatalf("signed out: %d %s", p.status, p.location)
	}
	if p := b.signIn("wrong"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "not one of landlord") {
		t.Errorf("a wrong token: %d", p.status)
	}
	if p := b.signIn(readerToken); p.status != http.StatusSeeOther || p.location != "/ui/" {
		t.Fatalf("sign in: %d %s", p.status, p.location)
	}
	list := b.get("/ui/")
	if list.status != 200 || !strings.Contains(list.body, "support") || !strings.Contains(list.body, `href="/ui/tenants/acme"`) {
		t.Fatalf("the list as a reader: %d\n%s", list.status, list.body)
	}
	detail := b.get("/ui/tenants/acme")
	for _, control := range []string{"New tenant", "/edit", "/pause", "/delete"} {
		if strings.Contains(list.body+detail.body, control) {
			t.Errorf("a reader sees the write control %q", control)
		}
	}
	// A reader who sends a write anyway is refused by the API.
	p := b.post("/ui/tenants/acme/pause", url.Values{"csrf": {b.csrf("/ui/")}})
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "may only read") {
		t.Errorf("a reader's pause: %d", p.status)
	}
	if got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); got.Annotations != nil {
		t.Errorf("a reader's pause changed the tenant: %v", got.Annotations)
	}
	if p := b.post("/ui/signout", url.Values{"csrf": {b.csrf("/ui/")}}); p.status != http.StatusSeeOther {
		t.Errorf("sign out: %d", p.status)
	}
	if p := b.get("/ui/"); p.status != http.StatusSeeOther {
		t.Errorf("after signing out: %d", p.status)
	}

	admin := s.browser(t)
	admin.signIn(adminToken)
	detail = admin.get("/ui/tenants/acme")
	for _, control := range []string{"/ui/tenants/acme/edit", "/ui/tenants/acme/pause", "/ui/tenants/acme/delete"} {
		if !strings.Contains(detail.body, control) {
			t.Errorf("an admin lacks the control %q", control)
		}
	}
	if p := admin.post("/ui/tenants/acme/pause", url.Values{"csrf": {admin.csrf("/ui/")}}); p.status != http.StatusSeeOther {
		t.Fatalf("pause: %d %s", p.status, p.body)
	}
	got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{})
	if got.Annotations["landlord.io/paused"] != "true" {
		t.Errorf("pause did not annotate the tenant: %v", got.Annotations)
	}
	events, _ := s.store.ListEvents(context.Background(), got.ID, tenant.EventListOptions{})
	if last := events.Events[len(events.Events)-1]; last.Actor != "ops" {
		t.Errorf("the change's actor is %q, not the signed-in token's name", last.Actor)
	}
}

func TestWithoutTokensTheConsoleIsOpen(t *testing.T) {
	s := newSite(t, siteOptions{})
	p := s.browser(t).get("/ui/")
	if p.status != 200 || !strings.Contains(p.body, "anonymous") || !strings.Contains(p.body, "New tenant") {
		t.Errorf("%d\n%s", p.status, p.body)
	}
}

func TestFormsNeedTheirCSRFToken(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	b := s.browser(t)
	b.signIn(adminToken)
	if p := b.post("/ui/tenants/acme/pause", url.Values{}); p.status != http.StatusForbidden {
		t.Errorf("without the token: %d", p.status)
	}
	if p := b.post("/ui/tenants/acme/pause", url.Values{"csrf": {"forged"}}); p.status != http.StatusForbidden {
		t.Errorf("with another token: %d", p.status)
	}
	req, _ := http.NewRequest("POST", s.URL+"/ui/tenants/acme/pause", strings.NewReader(url.Values{"csrf": {b.csrf("/ui/")}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("from another site: %d", res.StatusCode)
	}
	if got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); got.Version != 1 {
		t.Errorf("a refused form changed the tenant to version %d", got.Version)
	}
}

// inline finds script or style written into a page, which the
// Content-Security-Policy would refuse.
var inline = regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=|javascript:`)

// Every page is served with a Content-Security-Policy that allows no
// inline script or style, and none is in the pages.
func TestPagesHaveNothingInline(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":80}],"secrets":{"K":"v"}},"labels":{"tier":"gold"}}`)
	s.fleet(t, `{}`)
	ro := s.startRollout(t, twoWaves)
	s.subscribe(t, "hooks", "https://hooks.example.com/a", `,"labels":{"tier":"gold"}`)
	b := s.browser(t)
	for _, path := range []string{"/ui/", "/ui/tenants/acme", "/ui/tenants/acme/edit", "/ui/tenants/acme/edit?mode=raw", "/ui/tenants/new", "/ui/providers", "/ui/signin", "/ui/nothing",
		"/ui/rollouts", "/ui/rollouts/" + ro.ID, "/ui/plans", "/ui/plans/web", "/ui/tenants/t0",
		"/ui/subscriptions", "/ui/subscriptions/new", "/ui/subscriptions/hooks"} {
		p := b.get(path)
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if m := inline.FindString(p.body); m != "" {
			t.Errorf("%s has %q inline", path, m)
		}
		if p.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s may be framed", path)
		}
	}
}

// Secrets are shown as set, never their values, and a form saved without
// retyping one keeps it.
func TestSecretsAreNeverShown(t *testing.T) {
	s := newSite(t, siteOptions{})
	const secret = "hunter2-is-the-password"
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a","secrets":{"DB_PASSWORD":"`+secret+`"}}}`)
	b := s.browser(t)
	for _, path := range []string{"/ui/tenants/acme", "/ui/tenants/acme/edit", "/ui/tenants/acme/edit?mode=raw"} {
		if p := b.get(path); p.status != 200 || strings.Contains(p.body, secret) {
			t.Errorf("%s: %d, shows the secret: %v", path, p.status, strings.Contains(p.body, secret))
		}
	}
	if p := b.get("/ui/tenants/acme"); !strings.Contains(p.body, "/compute_config/secrets/DB_PASSWORD") {
		t.Error("the tenant page does not say the secret is set")
	}
	p := b.post("/ui/tenants/acme/edit", url.Values{"csrf": {b.csrf("/ui/tenants/acme")}, "_action": {"save"}, "_version": {"1"},
		"/compute_config/image": {"b"}, "/compute_config/secrets#key": {"DB_PASSWORD"}, "/compute_config/secrets#value": {""},
		"/compute_config/secrets#kept": {"DB_PASSWORD"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", p.status, p.body)
	}
	got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{})
	if !strings.Contains(string(got.ComputeConfig), secret) || !strings.Contains(string(got.ComputeConfig), `"image":"b"`) {
		t.Errorf("after the edit the config is %s", got.ComputeConfig)
	}
}

// The form sends what was typed to the API, which alone judges it: its
// problems are shown at the inputs their pointers name.
func TestFormCreatesThroughTheAPI(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	form := url.Values{"csrf": {b.csrf("/ui/tenants/new")}, "_action": {"save"}, "provider": {"mock"},
		"/name": {"acme"}, "/compute_config/image": {"nginx:1.27"}, "/compute_config/args": {"--port\r\n8080\r\n"},
		"/compute_config/ports/0/container_port": {"8080"}, "/compute_config/ports/0/protocol": {"tcp"},
		"/compute_config/env#key": {"A", ""}, "/compute_config/env#value": {"1", ""},
		"/labels#key": {"tier"}, "/labels#value": {"gold"}}
	if p := b.post("/ui/tenants/new", form); p.status != http.StatusSeeOther || p.location != "/ui/tenants/acme" {
		t.Fatalf("create: %d %s\n%s", p.status, p.location, p.body)
	}
	got, err := s.store.Get(context.Background(), "acme", tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"image":"nginx:1.27","args":["--port","8080"],"env":{"A":"1"},"ports":[{"container_port":8080,"protocol":"tcp"}]}`
	if string(got.ComputeConfig) != want || got.Labels["tier"] != "gold" {
		t.Errorf("stored %s %v, want %s", got.ComputeConfig, got.Labels, want)
	}

	form.Set("/name", "beta")
	form.Set("/compute_config/ports/0/container_port", "70000")
	form.Set("/compute_config/ports/1/protocol", "tcp") // an item added and left without its port
	p := b.post("/ui/tenants/new", form)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad port: %d", p.status)
	}
	for _, want := range []string{
		`id="f.2f.compute_config.2f.ports.2f.0.2f.container_port-err"><li>must be at most 65535`,
		`id="f.2f.compute_config.2f.ports.2f.1.2f.container_port-err"><li>is required`,
		`aria-invalid="true"`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the answer lacks %s", want)
		}
	}
	if _, err := s.store.Get(context.Background(), "beta", tenant.GetOptions{}); err == nil {
		t.Error("a refused form stored a tenant")
	}
}

// The preview is the API's dry run: nothing is stored.
func TestPreviewIsADryRun(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	p := b.post("/ui/tenants/new", url.Values{"csrf": {b.csrf("/ui/tenants/new")}, "_action": {"preview"}, "provider": {"mock"},
		"/name": {"acme"}, "/compute_config/image": {"nginx"}})
	if p.status != 200 || !strings.Contains(p.body, "Effective config") || !strings.Contains(p.body, "&#34;image&#34;: &#34;nginx&#34;") {
		t.Errorf("preview: %d\n%s", p.status, p.body)
	}
	if _, err := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); err == nil {
		t.Error("a preview stored the tenant")
	}
}

// The editor takes YAML or JSON and sends JSON as it is; the API's
// problems are listed with their pointers.
func TestRawEditor(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	csrf := b.csrf("/ui/tenants/new")
	yaml := "name: acme\ncompute_config:\n  image: nginx\n  ports:\n    - container_port: 80\nlabels:\n  tier: gold\n"
	if p := b.post("/ui/tenants/new", url.Values{"csrf": {csrf}, "_action": {"save"}, "mode": {"raw"}, "_raw": {yaml}}); p.status != http.StatusSeeOther {
		t.Fatalf("YAML: %d\n%s", p.status, p.body)
	}
	got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{})
	if string(got.ComputeConfig) != `{"image":"nginx","ports":[{"container_port":80}]}` {
		t.Errorf("stored %s", got.ComputeConfig)
	}
	p := b.post("/ui/tenants/new", url.Values{"csrf": {csrf}, "_action": {"save"}, "mode": {"raw"},
		"_raw": {`{"name":"beta","bogus":1,"compute_config":{"image":"a","image":"b"}}`}})
	if p.status < 400 || p.status >= 500 || !strings.Contains(p.body, "<code>/bogus</code>") && !strings.Contains(p.body, "<code>/compute_config/image</code>") {
		t.Errorf("JSON the API refuses: %d\n%s", p.status, p.body)
	}
	if p := b.post("/ui/tenants/new", url.Values{"csrf": {csrf}, "_action": {"save"}, "mode": {"raw"}, "_raw": {"name: [unclosed"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "neither JSON nor YAML") {
		t.Errorf("text that is neither: %d", p.status)
	}
}

// A schema change in a provider reaches the form with no change to the
// console: a new enum field gets a select of its values, and the API's
// verdict on it is shown at it.
func TestSchemaChangeReachesTheForm(t *testing.T) {
	base, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	_ = json.Unmarshal(base.ConfigSchema(), &schema)
	schema["properties"].(map[string]any)["x-tier"] = map[string]any{"enum": []string{"small", "large"}, "description": "The size of the tenant's plan."}
	s := newSite(t, siteOptions{provider: &reschemed{Provider: base, schema: mustMarshal(t, schema)}})
	b := s.browser(t)
	p := b.get("/ui/tenants/new")
	for _, want := range []string{`<select id="f.2f.compute_config.2f.x-tier" name="/compute_config/x-tier"`, `<option value="small">small</option>`, "The size of the tenant&#39;s plan."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}
	p = b.post("/ui/tenants/new", url.Values{"csrf": {b.csrf("/ui/tenants/new")}, "_action": {"save"}, "provider": {"mock"},
		"/name": {"acme"}, "/compute_config/image": {"nginx"}, "/compute_config/x-tier": {"huge"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="f.2f.compute_config.2f.x-tier-err"`) {
		t.Errorf("a value outside the enum: %d\n%s", p.status, p.body)
	}
}

type reschemed struct {
	*mock.Provider
	schema json.RawMessage
}

func (r *reschemed) ConfigSchema() json.RawMessage { return r.schema }

func mustMarshal(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A live stream sends a tenant's row each time the controller changes it.
func TestLiveUpdates(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createTenant(t, `{"name":"acme","compute_config":{"image":"a","x-mock":{"latency":"300ms"}}}`)
	b := s.browser(t)
	b.get("/ui/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/ui/live?view=list&tenant="+id, nil)
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, ct)
	}
	s.runController(t)
	var seen []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var u struct {
			ID, Status string
			Fragments  map[string]string
		}
		if err := json.Unmarshal([]byte(data), &u); err != nil || u.ID != id {
			t.Fatalf("event %s: %v", data, err)
		}
		seen = append(seen, u.Status)
		if row := u.Fragments["t-"+id]; !strings.HasPrefix(row, `<tr id="t-`+id+`">`) || !strings.Contains(row, ">"+u.Status+"<") {
			t.Fatalf("the row of a %s tenant: %s", u.Status, row)
		}
		if u.Status == "ready" {
			break
		}
	}
	if len(seen) < 2 || seen[len(seen)-1] != "ready" {
		t.Errorf("statuses streamed: %v (%v)", seen, sc.Err())
	}
}

// Deleting needs the tenant's name typed.
func TestDeleteNeedsTheNameTyped(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	b := s.browser(t)
	csrf := b.csrf("/ui/tenants/acme")
	if p := b.post("/ui/tenants/acme/delete", url.Values{"csrf": {csrf}, "confirm": {"acm"}}); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="confirm-err"`) {
		t.Errorf("a wrong name: %d", p.status)
	}
	if got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); got.DeletionRequestedAt != nil {
		t.Fatal("a wrong name deleted the tenant")
	}
	if p := b.post("/ui/tenants/acme/delete", url.Values{"csrf": {csrf}, "confirm": {"acme"}}); p.status != http.StatusSeeOther {
		t.Errorf("the right name: %d", p.status)
	}
	if got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); got.DeletionRequestedAt == nil {
		t.Error("the tenant was not deleted")
	}
}

// The list says what the API found wrong with its filters.
func TestListFilterProblems(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	for _, q := range []string{"page_token=garbage", "status=bogus", "label=%3Dx"} {
		p := b.get("/ui/?" + q)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `class="alert bad"`) {
			t.Errorf("%s: %d, no alert", q, p.status)
		}
	}
}

// A secret typed into a form the API refuses is not shown again, yet is
// kept for the next try; on an edit, an empty secret keeps the stored one.
func TestTypedSecretsSurviveARefusal(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	const secret = "typed-in-a-refused-form"
	form := url.Values{"csrf": {b.csrf("/ui/tenants/new")}, "_action": {"save"}, "provider": {"mock"},
		"/name": {"acme"}, "/compute_config/image": {"nginx"}, "/compute_config/ports/0/container_port": {"0"},
		"/compute_config/secrets#key": {"TOKEN"}, "/compute_config/secrets#value": {secret}}
	p := b.post("/ui/tenants/new", form)
	if p.status != http.StatusUnprocessableEntity || strings.Contains(p.body, secret) {
		t.Fatalf("refused: %d, shows the secret: %v", p.status, strings.Contains(p.body, secret))
	}
	sealed := regexp.MustCompile(`name="_secrets" value="([^"]+)"`).FindStringSubmatch(p.body)
	if sealed == nil || !strings.Contains(p.body, "typed; leave empty to keep what you typed") {
		t.Fatal("the typed secret is not carried")
	}
	form.Set("_secrets", sealed[1])
	form.Set("/compute_config/secrets#value", "")
	form.Set("/compute_config/ports/0/container_port", "80")
	if p := b.post("/ui/tenants/new", form); p.status != http.StatusSeeOther {
		t.Fatalf("fixed: %d\n%s", p.status, p.body)
	}
	got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{})
	if !strings.Contains(string(got.ComputeConfig), `"TOKEN":"`+secret+`"`) {
		t.Errorf("stored %s", got.ComputeConfig)
	}
}

// An edit carries the version it was opened at, and a button the form
// does not have is refused rather than taken for a save.
func TestEditNeedsItsVersionAndAKnownButton(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	b := s.browser(t)
	csrf := b.csrf("/ui/tenants/acme")
	base := url.Values{"csrf": {csrf}, "/compute_config/image": {"b"}}
	for name, form := range map[string]url.Values{
		"no version":     with(base, "_action", "save"),
		"preview":        with(with(base, "_version", "1"), "_action", "preview"),
		"unknown button": with(with(base, "_version", "1"), "_action", "launch"),
	} {
		if p := b.post("/ui/tenants/acme/edit", form); p.status != http.StatusBadRequest {
			t.Errorf("%s: %d", name, p.status)
		}
	}
	if p := b.post("/ui/tenants/acme/edit", with(with(base, "_version", "7"), "_action", "save")); p.status != http.StatusPreconditionFailed || !strings.Contains(p.body, "Someone changed this tenant") {
		t.Errorf("a stale version: %d", p.status)
	}
	if got, _ := s.store.Get(context.Background(), "acme", tenant.GetOptions{}); got.Version != 1 {
		t.Errorf("refused edits changed the tenant to version %d", got.Version)
	}
}

func with(v url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	out.Set(key, value)
	return out
}

// The editor keeps text it cannot read, whichever button is pressed.
func TestRawEditorKeepsUnreadableText(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	csrf := b.csrf("/ui/tenants/new")
	for _, action := range []string{"raw", "provider", "add:/compute_config/ports", "save"} {
		p := b.post("/ui/tenants/new", url.Values{"csrf": {csrf}, "_action": {action}, "mode": {"raw"}, "provider": {"mock"}, "_raw": {"name: [unclosed"}})
		if !strings.Contains(p.body, "name: [unclosed</textarea>") {
			t.Errorf("%s: the editor lost its text (%d)", action, p.status)
		}
	}
	if p := b.post("/ui/tenants/new", url.Values{"csrf": {csrf}, "_action": {"save"}, "mode": {"raw"}, "_raw": {"[1]"}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "must be a JSON object") {
		t.Errorf("a body that is not an object: %d", p.status)
	}
}

// A stream whose session ended says so, rather than redirect.
func TestLiveStreamOfAnEndedSession(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	p := s.browser(t).get("/ui/live?view=list")
	if p.status != 200 || p.header.Get("Content-Type") != "text/event-stream" || !strings.Contains(p.body, "event: signedout") {
		t.Errorf("%d %s %q", p.status, p.header.Get("Content-Type"), p.body)
	}
}

// A tenant's page shows the newest 100 events of its history, newest
// first, and says there are older ones.
func TestHistoryNewestFirst(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	for i := range 120 {
		if err := s.store.AppendEvent(context.Background(), tenant.Event{TenantID: id, Type: tenant.EventNote, Message: fmt.Sprintf("note %03d", i), Actor: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	p := s.browser(t).get("/ui/tenants/acme")
	if n := strings.Count(p.body, `<li class="event `); n != 100 {
		t.Errorf("%d events shown", n)
	}
	if i, j := strings.Index(p.body, "note 119"), strings.Index(p.body, "note 118"); i < 0 || j < i || strings.Contains(p.body, "note 019") {
		t.Error("the history is not the newest 100, newest first")
	}
	if !strings.Contains(p.body, "Older events") {
		t.Error("the page does not say there are older events")
	}
}

// TestLastDriftIsShown: a tenant's page shows its last drift, what was done
// about it and each path with the expected and found values.
func TestLastDriftIsShown(t *testing.T) {
	s := newSite(t, siteOptions{})
	id := s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	if p := s.browser(t).get("/ui/tenants/acme"); strings.Contains(p.body, "Last drift") {
		t.Fatal("a tenant without drift shows a last drift")
	}
	ctx := context.Background()
	for _, status := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		obs := tenant.Observation{Generation: 1, Status: status, Settles: status.Settled(), Actor: "test"}
		if status == tenant.StatusReady {
			obs.Drift = &tenant.DriftReport{DetectedAt: time.Now(), Generation: 1, Policy: provider.DriftObserve, Differences: []provider.Drift{
				{Path: "deployment/replicas", Kind: provider.DriftScale, Expected: "1", Found: "5"},
				{Path: "networkpolicy", Kind: provider.DriftMissing, Expected: "present"},
			}}
		}
		if _, err := s.store.UpdateObserved(ctx, id, obs); err != nil {
			t.Fatal(err)
		}
	}
	p := s.browser(t).get("/ui/tenants/acme")
	for _, want := range []string{"Last drift", "observed, not repaired", "<code>deployment/replicas</code>", "<code>5</code>", "<code>networkpolicy</code>", "missing"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the tenant's page does not show %q", want)
		}
	}
}
