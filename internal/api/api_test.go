package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

type testServer struct {
	*httptest.Server
	store tenant.Store
	logs  *providertest.LogBuffer
	token string
}

const (
	adminToken  = "admin-secret-token"
	readerToken = "reader-secret-token"
)

func newServer(t testing.TB, tokens ...api.Token) *testServer {
	t.Helper()
	return newServerTuned(t, nil, tokens...)
}

// newServerTuned is newServer with its options changed by tune.
func newServerTuned(t testing.TB, tune func(*api.Options), tokens ...api.Token) *testServer {
	t.Helper()
	return serveTuned(t, openStore(t), func(logger *slog.Logger) (provider.Provider, error) {
		return mock.New(mock.Options{Block: json.RawMessage(`{"env":{"FROM_DEFAULTS":"yes"}}`), Logger: logger})
	}, tune, tokens...)
}

// newServerWith is newServer with the provider newProvider makes.
func newServerWith(t testing.TB, newProvider func(*slog.Logger) (provider.Provider, error), tokens ...api.Token) *testServer {
	t.Helper()
	return serveOn(t, openStore(t), newProvider, tokens...)
}

// openStore opens a SQLite store in the test's directory.
func openStore(t testing.TB) tenant.Store {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// serveOn serves the API on store, with the provider newProvider makes,
// its log in the server's logs.
func serveOn(t testing.TB, store tenant.Store, newProvider func(*slog.Logger) (provider.Provider, error), tokens ...api.Token) *testServer {
	t.Helper()
	return serveTuned(t, store, newProvider, nil, tokens...)
}

// serveTuned is serveOn with the server's options changed by tune.
func serveTuned(t testing.TB, store tenant.Store, newProvider func(*slog.Logger) (provider.Provider, error), tune func(*api.Options), tokens ...api.Token) *testServer {
	t.Helper()
	logs := &providertest.LogBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	p, err := newProvider(logger)
	if err != nil {
		t.Fatal(err)
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{Logger: logger})
	mx := metrics.New()
	fl, _ := store.(fleet.Store) // plans and rollouts, where the store keeps them
	opts := api.Options{Store: store, Fleet: fl, Compute: m, Tokens: tokens, Logger: logger, Observer: mx, Metrics: mx.Handler()}
	if tune != nil {
		tune(&opts)
	}
	s, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	out := &testServer{Server: ts, store: store, logs: logs}
	if len(tokens) > 0 {
		out.token = adminToken
	}
	return out
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) problem(t *testing.T) wire.Problem {
	t.Helper()
	var p wire.Problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("not a problem: %s", r.body)
	}
	if r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("problem with Content-Type %q", r.header.Get("Content-Type"))
	}
	return p
}

func (r response) tenant(t *testing.T) wire.Tenant {
	t.Helper()
	var out wire.Tenant
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("not a tenant: %s", r.body)
	}
	return out
}

func (ts *testServer) do(t *testing.T, method, path, contentType, body string, headers ...string) response {
	t.Helper()
	res, err := ts.Client().Do(ts.request(t, context.Background(), method, path, contentType, body, headers...))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// request is a request to ts with ts's token, the body of contentType and
// the headers given as name, value pairs.
func (ts *testServer) request(t *testing.T, ctx context.Context, method, path, contentType, body string, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func (ts *testServer) create(t *testing.T, name, config string) wire.Tenant {
	t.Helper()
	res := ts.do(t, "POST", "/v1/tenants", "application/json", fmt.Sprintf(`{"name":%q,"compute_config":%s}`, name, config))
	if res.status != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, res.status, res.body)
	}
	return res.tenant(t)
}

func pointers(p wire.Problem) []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Pointer+e.Parameter)
	}
	return out
}

func TestCreate(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"acme","compute_config":{"image":"example.com/app:1","secrets":{"DB":"hunter2"}},"labels":{"tier":"gold"}}`)
	if res.status != http.StatusCreated {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
	got := res.tenant(t)
	if res.header.Get("Location") != "/v1/tenants/"+got.ID || res.header.Get("ETag") != `"1"` {
		t.Errorf("Location %q, ETag %q", res.header.Get("Location"), res.header.Get("ETag"))
	}
	if got.Name != "acme" || got.ComputeProvider != "mock" || got.Status != "requested" || got.Generation != 1 || got.Labels["tier"] != "gold" {
		t.Errorf("created %+v", got)
	}
	if strings.Contains(string(res.body), "hunter2") || !strings.Contains(string(got.ComputeConfig), `"DB":"[redacted]"`) {
		t.Errorf("secret not redacted: %s", got.ComputeConfig)
	}
	if strings.Contains(string(got.ComputeConfig), "FROM_DEFAULTS") {
		t.Errorf("compute_config must be shown as submitted, not merged: %s", got.ComputeConfig)
	}
	if res.header.Get("X-Request-ID") == "" {
		t.Error("no X-Request-ID")
	}
	for _, path := range []string{"/v1/tenants/acme", "/v1/tenants/" + got.ID} {
		if r := ts.do(t, "GET", path, "", ""); r.status != 200 || r.tenant(t).ID != got.ID || r.header.Get("ETag") != `"1"` {
			t.Errorf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	again := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"acme","compute_config":{"image":"a"}}`)
	if p := again.problem(t); again.status != http.StatusConflict || p.Code != wire.CodeNameTaken {
		t.Errorf("duplicate name: %d %s", again.status, again.body)
	}
	if strings.Contains(ts.logs.String(), "hunter2") {
		t.Error("a secret reached the log")
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	ts := newServer(t)
	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
		code        string
		pointers    []string
	}{
		{"three violations", "application/json", `{"name":"acme","compute_config":{"image": 5, "ports":[{"container_port":"x"}], "bogus": 1}}`,
			422, wire.CodeInvalidComputeConfig, []string{"/compute_config/bogus", "/compute_config/image", "/compute_config/ports/0/container_port"}},
		{"malformed JSON", "application/json", `{"name":`, 400, wire.CodeInvalidBody, nil},
		{"not an object", "application/json", `[1,2]`, 400, wire.CodeInvalidBody, nil},
		{"trailing data", "application/json", `{"name":"a","compute_config":{"image":"a"}} {}`, 400, wire.CodeInvalidBody, nil},
		{"wrong content type", "text/plain", `{"name":"acme","compute_config":{"image":"a"}}`, 400, wire.CodeInvalidBody, []string{"Content-Type"}},
		{"no content type", "", `{"name":"acme","compute_config":{"image":"a"}}`, 400, wire.CodeInvalidBody, []string{"Content-Type"}},
		{"unknown field", "application/json", `{"name":"acme","compute_config":{"image":"a"},"colour":"red"}`, 400, wire.CodeInvalidBody, []string{"/colour"}},
		{"wrong type", "application/json", `{"name":7,"compute_config":{"image":"a"}}`, 400, wire.CodeInvalidBody, []string{"/name"}},
		{"bad name", "application/json", `{"name":"Acme_Corp","compute_config":{"image":"a"}}`, 400, wire.CodeInvalidName, []string{"/name"}},
		{"uuid name", "application/json", `{"name":"0192f0c4-1d2e-7000-8000-000000000001","compute_config":{"image":"a"}}`, 400, wire.CodeInvalidName, []string{"/name"}},
		{"no config", "application/json", `{"name":"acme"}`, 400, wire.CodeInvalidBody, []string{"/compute_config"}},
		{"config not an object", "application/json", `{"name":"acme","compute_config":"image"}`, 400, wire.CodeInvalidBody, []string{"/compute_config"}},
		{"bad label", "application/json", `{"name":"acme","compute_config":{"image":"a"},"labels":{"bad key":"v"}}`, 400, wire.CodeInvalidBody, []string{"/labels/bad key"}},
		{"unknown provider", "application/json", `{"name":"acme","compute_config":{"image":"a","compute_provider":"nomad"}}`, 422, wire.CodeProviderNotFound, []string{"/compute_config/compute_provider"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, "POST", "/v1/tenants", tt.contentType, tt.body)
			p := res.problem(t)
			if res.status != tt.status || p.Code != tt.code || p.Status != tt.status {
				t.Fatalf("status %d code %s, want %d %s: %s", res.status, p.Code, tt.status, tt.code, res.body)
			}
			if tt.pointers != nil && !slices.Equal(pointers(p), tt.pointers) {
				t.Errorf("pointers %v, want %v", pointers(p), tt.pointers)
			}
			if p.Instance != res.header.Get("X-Request-ID") {
				t.Error("the problem does not carry the request id")
			}
		})
	}
	if r := ts.do(t, "GET", "/v1/tenants", "", ""); !strings.Contains(string(r.body), `"tenants":[]`) {
		t.Errorf("refused requests stored something: %s", r.body)
	}
}

func TestOversizedBody(t *testing.T) {
	ts := newServer(t)
	huge := `{"name":"acme","compute_config":{"image":"` + strings.Repeat("a", 2<<20) + `"}}`
	res := ts.do(t, "POST", "/v1/tenants", "application/json", huge)
	if p := res.problem(t); res.status != http.StatusRequestEntityTooLarge || p.Code != wire.CodeBodyTooLarge {
		t.Fatalf("status %d: %s", res.status, res.body)
	}
}

func TestDryRun(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "POST", "/v1/tenants?dry_run=true", "application/json", `{"name":"acme","compute_config":{"image":"a","secrets":{"K":"s3cr3t"}}}`)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	if got.ComputeProvider != "mock" || !strings.Contains(string(got.EffectiveConfig), "FROM_DEFAULTS") || strings.Contains(string(res.body), "s3cr3t") {
		t.Errorf("dry run shows %s / %s", got.ComputeConfig, got.EffectiveConfig)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme", "", ""); r.status != http.StatusNotFound {
		t.Errorf("a dry run stored the tenant: %d", r.status)
	}
	if r := ts.do(t, "POST", "/v1/tenants?dry_run=maybe", "application/json", `{"name":"acme","compute_config":{"image":"a"}}`); r.status != 400 {
		t.Errorf("dry_run=maybe: %d", r.status)
	}
}

func TestUpdate(t *testing.T) {
	ts := newServer(t)
	created := ts.create(t, "acme", `{"image":"a:1","secrets":{"DB":"hunter2"}}`)

	// The representation read back, sent back: nothing changes, secrets kept.
	res := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", fmt.Sprintf(`{"compute_config":%s}`, created.ComputeConfig))
	if res.status != 200 || res.tenant(t).Generation != 1 {
		t.Fatalf("PUT of the same state: %d %s", res.status, res.body)
	}
	stored, err := ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	if err != nil || !strings.Contains(string(stored.ComputeConfig), "hunter2") {
		t.Fatalf("a round trip of the redacted config lost the secret: %s", stored.ComputeConfig)
	}

	res = ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"a:2","secrets":{"DB":"[redacted]"}},"labels":{"tier":"gold"}}`, "If-Match", `"1"`)
	if res.status != 200 || res.tenant(t).Generation != 2 || res.header.Get("ETag") != `"2"` {
		t.Fatalf("PUT: %d %s", res.status, res.body)
	}
	if r := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"a:3"}}`, "If-Match", `"1"`); r.status != http.StatusPreconditionFailed || r.problem(t).Code != wire.CodePreconditionFailed {
		t.Errorf("stale If-Match: %d %s", r.status, r.body)
	}
	res = ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"compute_config":{"env":{"A":"1"}},"labels":{"tier":null}}`)
	got := res.tenant(t)
	if res.status != 200 || !strings.Contains(string(got.ComputeConfig), `"A":"1"`) || !strings.Contains(string(got.ComputeConfig), `"image":"a:2"`) || len(got.Labels) != 0 {
		t.Errorf("PATCH: %d %s", res.status, res.body)
	}
	stored, _ = ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	if !strings.Contains(string(stored.ComputeConfig), "hunter2") {
		t.Errorf("PATCH lost the secret: %s", stored.ComputeConfig)
	}
	if r := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"name":"other"}`); r.status != 400 || !slices.Equal(pointers(r.problem(t)), []string{"/name"}) {
		t.Errorf("PATCH of the name: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":5}}`); r.status != 422 {
		t.Errorf("invalid PUT: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "PUT", "/v1/tenants/nobody", "application/json", `{"compute_config":{"image":"a"}}`); r.status != 404 || r.problem(t).Code != wire.CodeTenantNotFound {
		t.Errorf("PUT of an unknown tenant: %d %s", r.status, r.body)
	}
}

func TestConcurrentUpdates(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "acme", `{"image":"a:0"}`)
	statuses := make([]int, 20)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			var headers []string
			if i%2 == 0 {
				headers = []string{"If-Match", `"1"`}
			}
			statuses[i] = ts.do(t, "PUT", "/v1/tenants/acme", "application/json", fmt.Sprintf(`{"compute_config":{"image":"a:%d"},"labels":{"writer":"w%d"}}`, i+1, i+1), headers...).status
		})
	}
	wg.Wait()
	for i, st := range statuses {
		if st != 200 && st != 409 && st != 412 {
			t.Errorf("writer %d got %d", i, st)
		}
	}
	got := ts.do(t, "GET", "/v1/tenants/acme", "", "").tenant(t)
	w := got.Labels["writer"]
	if w == "" || !strings.Contains(string(got.ComputeConfig), `"image":"a:`+strings.TrimPrefix(w, "w")+`"`) {
		t.Errorf("final state mixes writes: %s %v", got.ComputeConfig, got.Labels)
	}
}

func TestDelete(t *testing.T) {
	ts := newServer(t)
	created := ts.create(t, "acme", `{"image":"a"}`)
	for range 2 {
		res := ts.do(t, "DELETE", "/v1/tenants/acme", "", "")
		if res.status != http.StatusAccepted || res.tenant(t).Status != "deleting" {
			t.Fatalf("DELETE: %d %s", res.status, res.body)
		}
	}
	if r := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"b"}}`); r.status != 409 || r.problem(t).Code != wire.CodeTenantDeleting {
		t.Errorf("PUT of a deleting tenant: %d %s", r.status, r.body)
	}
	cur, _ := ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	if _, err := ts.store.UpdateObserved(context.Background(), cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleted}); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme", "", ""); r.status != 404 {
		t.Errorf("GET of a deleted tenant: %d", r.status)
	}
	if r := ts.do(t, "GET", "/v1/tenants/"+created.ID+"?include_deleted=true", "", ""); r.status != 200 || r.tenant(t).DeletedAt == nil {
		t.Errorf("GET with include_deleted: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "DELETE", "/v1/tenants/acme", "", ""); r.status != 404 {
		t.Errorf("DELETE of a deleted tenant: %d", r.status)
	}
	events := ts.do(t, "GET", "/v1/tenants/"+created.ID+"/events", "", "")
	var list wire.EventList
	if err := json.Unmarshal(events.body, &list); err != nil || len(list.Events) != 4 || list.Events[0].Type != "created" || list.Events[0].Actor != "anonymous" {
		t.Errorf("events: %s", events.body)
	}
}

func TestListAndRoutes(t *testing.T) {
	ts := newServer(t)
	for i := range 7 {
		ts.create(t, fmt.Sprintf("t-%d", i), `{"image":"a"}`)
	}
	var names []string
	path := "/v1/tenants?page_size=3&name_prefix=t-"
	for path != "" {
		res := ts.do(t, "GET", path, "", "")
		var page wire.TenantList
		if err := json.Unmarshal(res.body, &page); err != nil || res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		for _, tn := range page.Tenants {
			names = append(names, tn.Name)
		}
		path = ""
		if page.NextPageToken != "" {
			path = "/v1/tenants?page_size=3&name_prefix=t-&page_token=" + page.NextPageToken
		}
	}
	if len(names) != 7 {
		t.Errorf("listed %v", names)
	}
	for _, tt := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/tenants?page_size=0", 400, wire.CodeInvalidParameter},
		{"GET", "/v1/tenants?page_size=501", 400, wire.CodeInvalidParameter},
		{"GET", "/v1/tenants?status=sleeping", 400, wire.CodeInvalidParameter},
		{"GET", "/v1/tenants?label=bad", 400, wire.CodeInvalidParameter},
		{"GET", "/v1/tenants?page_token=nope", 400, wire.CodeInvalidParameter},
		{"GET", "/v1/nothing", 404, wire.CodeNotFound},
		{"POST", "/v1/tenants/acme", 405, wire.CodeMethodNotAllowed},
		{"GET", "/v1/compute/config?provider=nomad", 422, wire.CodeProviderNotFound},
		{"GET", "/v1/tenants/t-0/status", 404, wire.CodeWorkloadNotFound},
	} {
		res := ts.do(t, tt.method, tt.path, "", "")
		if p := res.problem(t); res.status != tt.status || p.Code != tt.code {
			t.Errorf("%s %s: %d %s, want %d %s", tt.method, tt.path, res.status, p.Code, tt.status, tt.code)
		}
	}
	if r := ts.do(t, "GET", "/v1/compute/config", "", ""); r.status != 200 || !strings.Contains(string(r.body), `"provider":"mock"`) || !strings.Contains(string(r.body), `"defaults":{"env":{"FROM_DEFAULTS":"yes"}}`) {
		t.Errorf("compute config: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/v1/compute/providers", "", ""); r.status != 200 || !strings.Contains(string(r.body), `{"name":"mock","default":true,"healthy":true,"message":"","capabilities":{"health_checks":true,`) {
		t.Errorf("providers: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	m := ts.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`landlord_http_requests_total{code="201",method="POST",route="/v1/tenants"} 7`,
		`landlord_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`landlord_http_request_duration_seconds_bucket{method="GET",route="/v1/tenants/{tenant}/status"`,
	} {
		if m.status != 200 || !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(m.body), "landlord_http_requests_total"))
		}
	}
	if r := ts.do(t, "GET", "/readyz", "", ""); r.status != 200 || !strings.Contains(string(r.body), `"database":"ok"`) {
		t.Errorf("readyz: %d %s", r.status, r.body)
	}
}

func TestAuth(t *testing.T) {
	ts := newServer(t, api.Token{Name: "ops", Secret: adminToken, Role: api.RoleAdmin}, api.Token{Name: "dashboard", Secret: readerToken, Role: api.RoleReader})
	ts.create(t, "acme", `{"image":"a"}`)
	ts.token = ""
	if r := ts.do(t, "GET", "/v1/tenants", "", ""); r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d", r.status)
	}
	ts.token = "wrong"
	if r := ts.do(t, "GET", "/v1/tenants", "", ""); r.status != 401 {
		t.Errorf("wrong token: %d", r.status)
	}
	ts.token = readerToken
	if r := ts.do(t, "GET", "/v1/tenants/acme", "", ""); r.status != 200 {
		t.Errorf("reader GET: %d", r.status)
	}
	for token, want := range map[string]string{readerToken: `{"name":"dashboard","role":"reader"}`, adminToken: `{"name":"ops","role":"admin"}`} {
		ts.token = token
		if r := ts.do(t, "GET", "/v1/whoami", "", ""); r.status != 200 || strings.TrimSpace(string(r.body)) != want {
			t.Errorf("whoami: %d %s, want %s", r.status, r.body, want)
		}
	}
	ts.token = readerToken
	for _, m := range []string{"POST /v1/tenants", "PUT /v1/tenants/acme", "PATCH /v1/tenants/acme", "DELETE /v1/tenants/acme"} {
		method, path, _ := strings.Cut(m, " ")
		if r := ts.do(t, method, path, "application/json", `{"name":"x","compute_config":{"image":"a"}}`); r.status != 403 || r.problem(t).Code != wire.CodeForbidden {
			t.Errorf("reader %s: %d %s", m, r.status, r.body)
		}
	}
	ts.token = ""
	if r := ts.do(t, "GET", "/healthz", "", ""); r.status != 200 {
		t.Errorf("healthz must stay open: %d", r.status)
	}
	// A kubelet's probe carries no token: /readyz answers it, with the
	// status alone; the checks are for readers.
	if r := ts.do(t, "GET", "/readyz", "", ""); r.status != 200 || strings.TrimSpace(string(r.body)) != `{"status":"ok"}` {
		t.Errorf("readyz without a token: %d %s", r.status, r.body)
	}
	ts.token = "wrong"
	if r := ts.do(t, "GET", "/readyz", "", ""); r.status != 200 || strings.Contains(string(r.body), "checks") {
		t.Errorf("readyz with a wrong token: %d %s", r.status, r.body)
	}
	ts.token = readerToken
	if r := ts.do(t, "GET", "/readyz", "", ""); r.status != 200 || !strings.Contains(string(r.body), `"database":"ok"`) {
		t.Errorf("readyz as a reader: %d %s", r.status, r.body)
	}
	ts.token = adminToken
	created := ts.create(t, "beta", `{"image":"a"}`)
	var list wire.EventList
	_ = json.Unmarshal(ts.do(t, "GET", "/v1/tenants/"+created.ID+"/events", "", "").body, &list)
	if len(list.Events) == 0 || list.Events[0].Actor != "ops" {
		t.Errorf("events do not name the token's holder: %+v", list.Events)
	}
	if strings.Contains(ts.logs.String(), adminToken) || strings.Contains(ts.logs.String(), readerToken) {
		t.Error("a token reached the log")
	}
}

func TestCheckListen(t *testing.T) {
	for _, tt := range []struct {
		addr     string
		tokens   bool
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:8080", false, false, true},
		{"[::1]:8080", false, false, true},
		{"localhost:8080", false, false, true},
		{"0.0.0.0:8080", false, false, false},
		{":8080", false, false, false},
		{"0.0.0.0:8080", true, false, true},
		{"0.0.0.0:8080", false, true, true},
	} {
		if err := api.CheckListen(tt.addr, tt.tokens, tt.insecure); (err == nil) != tt.ok {
			t.Errorf("CheckListen(%s, tokens %v, insecure %v) = %v", tt.addr, tt.tokens, tt.insecure, err)
		}
	}
}

func TestIdempotencyKey(t *testing.T) {
	ts := newServer(t)
	body := `{"name":"acme","compute_config":{"image":"a"}}`
	first := ts.do(t, "POST", "/v1/tenants", "application/json", body, "Idempotency-Key", "k-1")
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// The same body, spelled differently: the same response, no new tenant.
	again := ts.do(t, "POST", "/v1/tenants", "application/json", "{ \"name\": \"acme\", \"compute_config\": {\"image\": \"a\"} }", "Idempotency-Key", "k-1")
	if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get("Location") != first.header.Get("Location") || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", again.status, again.body)
	}
	other := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"beta","compute_config":{"image":"a"}}`, "Idempotency-Key", "k-1")
	if p := other.problem(t); other.status != 422 || p.Code != wire.CodeIdempotencyMismatch {
		t.Errorf("reused key: %d %s", other.status, other.body)
	}
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", body, "Idempotency-Key", strings.Repeat("k", 300)); r.status != 400 {
		t.Errorf("a 300-character key: %d", r.status)
	}
	var list wire.TenantList
	_ = json.Unmarshal(ts.do(t, "GET", "/v1/tenants", "", "").body, &list)
	if len(list.Tenants) != 1 {
		t.Errorf("%d tenants after a replay, want 1", len(list.Tenants))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestStatusUpstreamFailure: a provider that fails while the API reads a
// workload's status is a 502 whose detail says why.
func TestStatusUpstreamFailure(t *testing.T) {
	ts := newServerWith(t, func(logger *slog.Logger) (provider.Provider, error) {
		return mock.New(mock.Options{Block: json.RawMessage(`{"failure_rate":1}`), Logger: logger})
	})
	ts.create(t, "flaky", `{"image":"a"}`)
	res := ts.do(t, "GET", "/v1/tenants/flaky/status", "", "")
	p := res.problem(t)
	if res.status != http.StatusBadGateway || p.Code != wire.CodeUnavailable || !strings.Contains(p.Detail, "injected failure (failure_rate 1)") {
		t.Errorf("status of a failing provider: %d %s %q, want 502 %s saying why", res.status, p.Code, p.Detail, wire.CodeUnavailable)
	}
}

// TestCapabilityRefused: a config asking for what the provider does not
// support is a 422 naming the field and the capability.
func TestCapabilityRefused(t *testing.T) {
	ts := newServerWith(t, func(logger *slog.Logger) (provider.Provider, error) {
		p, err := mock.New(mock.Options{Logger: logger})
		return &singleContainer{p}, err
	})
	res := ts.do(t, "POST", "/v1/tenants", "application/json",
		`{"name":"acme","compute_config":{"image":"a","secrets":{"K":"v"},"sidecars":[{"name":"log","image":"b"}]}}`)
	p := res.problem(t)
	if res.status != http.StatusUnprocessableEntity || p.Code != wire.CodeInvalidComputeConfig {
		t.Fatalf("create with sidecars on a single-container provider: %d %s, want 422 %s", res.status, p.Code, wire.CodeInvalidComputeConfig)
	}
	if len(p.Errors) != 1 || p.Errors[0].Pointer != "/compute_config/sidecars" || !strings.Contains(p.Errors[0].Message, "(capability multiple_containers)") {
		t.Errorf("errors = %+v, want one at /compute_config/sidecars naming multiple_containers", p.Errors)
	}
	if res := ts.do(t, "GET", "/v1/compute/providers", "", ""); !strings.Contains(string(res.body), `"multiple_containers":false`) {
		t.Errorf("providers do not show the missing capability: %s", res.body)
	}
}

// singleContainer is the mock declaring that it runs one container.
type singleContainer struct{ *mock.Provider }

func (p *singleContainer) Capabilities() provider.Capabilities {
	c := p.Provider.Capabilities()
	c.MultipleContainers = false
	return c
}
