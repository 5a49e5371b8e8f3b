package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// newEventsServer serves the API with events on, secrets sealed with a key,
// loopback receivers allowed.
func newEventsServer(t *testing.T, tokens ...api.Token) *testServer {
	t.Helper()
	keys, err := seal.NewKeyring("k1", seal.Key{ID: "k1", Material: make([]byte, seal.KeySize)})
	if err != nil {
		t.Fatal(err)
	}
	return newServerTuned(t, func(o *api.Options) {
		o.Events = o.Store.(events.Store)
		o.EventEncoder = &events.Encoder{Source: "test"}
		o.EventKeys = keys
		o.EventGuard = events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
		o.Changes, _ = o.Store.(tenant.ChangeFeed)
	}, tokens...)
}

func feed(t *testing.T, ts *testServer, query string) wire.EventFeed {
	t.Helper()
	res := ts.do(t, "GET", "/v1/events"+query, "", "")
	if res.status != http.StatusOK {
		t.Fatalf("GET /v1/events%s: %d %s", query, res.status, res.body)
	}
	var f wire.EventFeed
	if err := json.Unmarshal(res.body, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestEventFeed(t *testing.T) {
	ts := newEventsServer(t)
	a := ts.create(t, "acme", `{"image":"nginx"}`)
	ts.create(t, "globex", `{"image":"nginx"}`)
	f := feed(t, ts, "")
	if len(f.Events) != 2 || f.Next != f.Events[1].Sequence {
		t.Fatalf("feed %+v, want the two created events", f)
	}
	e := f.Events[0]
	if e.SpecVersion != "1.0" || e.Type != string(events.TenantCreated) || e.Subject != a.ID || e.Source != "test" ||
		!strings.HasPrefix(e.ID, "evt_") || e.DataContentType != "application/json" {
		t.Errorf("event %+v", e)
	}
	var data wire.TenantEventData
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Tenant.Name != "acme" || data.Tenant.Status != "requested" || data.Event.Type != "created" || data.Event.Generation != 1 {
		t.Errorf("data %+v", data)
	}
	if res := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"labels":{"tier":"gold"}}`); res.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", res.status, res.body)
	}
	changed := feed(t, ts, "?type=landlord.tenant.changed")
	var cd wire.TenantEventData
	if len(changed.Events) != 1 || json.Unmarshal(changed.Events[0].Data, &cd) != nil || len(cd.Changed) != 1 || cd.Changed[0] != "labels" ||
		cd.Tenant.Labels["tier"] != "gold" || cd.Tenant.Generation != 2 {
		t.Errorf("changed events %+v: want one, of labels, with the tenant at generation 2", changed)
	}
	if rest := feed(t, ts, "?after="+f.Events[0].Sequence); len(rest.Events) != 2 || rest.Events[0].ID != f.Events[1].ID {
		t.Errorf("after the first: %+v", rest)
	}
	if head := feed(t, ts, "?after=latest"); len(head.Events) != 0 || head.Next != changed.Events[0].Sequence {
		t.Errorf("after=latest: %+v, want nothing, next the head %s", head, changed.Events[0].Sequence)
	}
	if none := feed(t, ts, "?type=landlord.tenant.ready"); len(none.Events) != 0 || none.Next != "0" {
		t.Errorf("ready events: %+v, want none, next 0", none)
	}
	if again := feed(t, ts, ""); string(again.Events[0].Data) != string(e.Data) {
		t.Error("an event reads differently twice")
	}
	for _, q := range []struct{ query, param string }{{"?after=x", "after"}, {"?after=-1", "after"}, {"?type=tenant.ready", "type"}, {"?page_size=0", "page_size"}} {
		res := ts.do(t, "GET", "/v1/events"+q.query, "", "")
		if res.status != http.StatusBadRequest || len(res.problem(t).Errors) == 0 || res.problem(t).Errors[0].Parameter != q.param {
			t.Errorf("GET /v1/events%s: %d %s, want 400 at %s", q.query, res.status, res.body, q.param)
		}
	}
}

// TestEventStream reads the stream: what was written before, then what is
// written while it is open, each with its sequence as id.
func TestEventStream(t *testing.T) {
	ts := newEventsServer(t)
	ts.create(t, "acme", `{"image":"nginx"}`)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/events/stream", nil)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("%d %s", res.StatusCode, ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	next := func() (id, typ string, ce wire.CloudEvent) {
		t.Helper()
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "event: "):
				typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ce); err != nil {
					t.Fatal(err)
				}
			case line == "" && id != "":
				return id, typ, ce
			}
		}
		t.Fatalf("the stream ended: %v", sc.Err())
		return
	}
	id, typ, ce := next()
	if id != "1" || typ != string(events.TenantCreated) || ce.Sequence != "1" {
		t.Errorf("first message id %s, event %s, sequence %s", id, typ, ce.Sequence)
	}
	ts.create(t, "globex", `{"image":"nginx"}`)
	if id, _, ce := next(); id != "2" || ce.Subject == "" {
		t.Errorf("second message id %s %+v", id, ce)
	}
}

func subscriptionBody(name, url, secret string, extra string) string {
	return `{"name":"` + name + `","url":"` + url + `","secret":"` + secret + `"` + extra + `}`
}

func TestSubscriptionsRefuseBadInput(t *testing.T) {
	ts := newEventsServer(t)
	secret := events.NewSecret()
	for _, tc := range []struct {
		body    string
		status  int
		pointer string
	}{
		{`{`, 400, ""},
		{subscriptionBody("hooks", "https://hooks.example.com/x", secret, `,"colour":"red"`), 400, "/colour"},
		{subscriptionBody("Hooks!", "https://hooks.example.com/x", secret, ""), 422, "/name"},
		{subscriptionBody("hooks", "", secret, ""), 422, "/url"},
		{subscriptionBody("hooks", "http://hooks.example.com/x", secret, ""), 422, "/url"},
		{subscriptionBody("hooks", "https://10.0.0.1/x", secret, ""), 422, "/url"},
		{subscriptionBody("hooks", "https://169.254.169.254/x", secret, ""), 422, "/url"},
		{subscriptionBody("hooks", "https://hooks.example.com/x", "hunter2", ""), 422, "/secret"},
		{subscriptionBody("hooks", "https://hooks.example.com/x", secret, `,"types":["landlord.tenant.ready","tenant.nope"]`), 422, "/types/1"},
		{subscriptionBody("hooks", "https://hooks.example.com/x", secret, `,"labels":{"bad key":"x"}`), 422, "/labels/bad key"},
		{subscriptionBody("hooks", "https://hooks.example.com/x", secret, `,"types":"landlord.tenant.ready"`), 400, "/types"},
	} {
		res := ts.do(t, "POST", "/v1/subscriptions", "application/json", tc.body)
		if res.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, res.status, res.body, tc.status)
			continue
		}
		if tc.pointer != "" && !containsString(pointers(res.problem(t)), tc.pointer) {
			t.Errorf("%s: problem at %v, want %s", tc.body, pointers(res.problem(t)), tc.pointer)
		}
		if strings.Contains(string(res.body), secret) {
			t.Errorf("%s: the answer holds the secret", tc.body)
		}
	}
	if res := ts.do(t, "GET", "/v1/subscriptions", "", ""); !strings.Contains(string(res.body), `"subscriptions":[]`) {
		t.Errorf("a refused subscription was stored: %s", res.body)
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestSubscriptionLifecycle creates, reads, changes, rotates and deletes a
// subscription: the secret never comes back, it is stored sealed, a stale
// If-Match is a 412, a taken name a 409.
func TestSubscriptionLifecycle(t *testing.T) {
	ts := newEventsServer(t)
	secret, next := events.NewSecret(), events.NewSecret()
	res := ts.do(t, "POST", "/v1/subscriptions", "application/json",
		subscriptionBody("hooks", "https://hooks.example.com/landlord", secret, `,"types":["landlord.tenant.ready"],"labels":{"tier":"gold"}`))
	if res.status != http.StatusCreated || res.header.Get("Location") != "/v1/subscriptions/hooks" || res.header.Get("ETag") != `"1"` {
		t.Fatalf("create: %d %v %s", res.status, res.header, res.body)
	}
	var sub wire.Subscription
	if err := json.Unmarshal(res.body, &sub); err != nil {
		t.Fatal(err)
	}
	if !sub.Enabled || len(sub.Secrets) != 1 || sub.Types[0] != "landlord.tenant.ready" || sub.Labels["tier"] != "gold" {
		t.Errorf("created %+v", sub)
	}
	stored, err := ts.store.(events.Store).Subscription(t.Context(), "hooks")
	if err != nil || !seal.IsSealed(stored.Secrets[0].Value) {
		t.Errorf("the secret is stored as %.12q…, want it sealed (%v)", stored.Secrets[0].Value, err)
	}
	if res := ts.do(t, "POST", "/v1/subscriptions", "application/json", subscriptionBody("hooks", "https://x.example.com/", secret, "")); res.status != http.StatusConflict ||
		res.problem(t).Code != wire.CodeNameTaken || pointers(res.problem(t))[0] != "/name" {
		t.Errorf("a taken name: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "POST", "/v1/subscriptions/hooks/redeliver", "application/json", `{"since":"yesterday"}`); res.status != http.StatusBadRequest || pointers(res.problem(t))[0] != "/since" {
		t.Errorf("redeliver since yesterday: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "PATCH", "/v1/subscriptions/hooks", "application/json", `{"enabled":false}`, "If-Match", `"7"`); res.status != http.StatusPreconditionFailed {
		t.Errorf("a stale If-Match: %d %s", res.status, res.body)
	}
	res = ts.do(t, "PATCH", "/v1/subscriptions/hooks", "application/json", `{"enabled":false,"url":"https://hooks2.example.com/"}`, "If-Match", `"1"`)
	if res.status != http.StatusOK || !strings.Contains(string(res.body), `"enabled":false`) || res.header.Get("ETag") != `"2"` {
		t.Errorf("PATCH: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "PATCH", "/v1/subscriptions/hooks", "application/json", `{"url":"http://hooks.example.com/"}`); res.status != 422 || pointers(res.problem(t))[0] != "/url" {
		t.Errorf("PATCH to http: %d %s", res.status, res.body)
	}
	res = ts.do(t, "POST", "/v1/subscriptions/hooks/secrets", "application/json", `{"secret":"`+next+`","previous_expires_in":"1h"}`)
	if err := json.Unmarshal(res.body, &sub); err != nil || res.status != http.StatusOK || len(sub.Secrets) != 2 || sub.Secrets[1].ExpiresAt == nil || sub.Secrets[0].ExpiresAt != nil {
		t.Errorf("rotate: %d %s", res.status, res.body)
	}
	for _, path := range []string{"/v1/subscriptions", "/v1/subscriptions/hooks", "/v1/subscriptions/" + sub.ID} {
		res := ts.do(t, "GET", path, "", "")
		if res.status != http.StatusOK || strings.Contains(string(res.body), secret) || strings.Contains(string(res.body), next) ||
			strings.Contains(string(res.body), "llsec:") {
			t.Errorf("GET %s: %d, holds a secret: %s", path, res.status, res.body)
		}
	}
	if strings.Contains(ts.logs.String(), secret) || strings.Contains(ts.logs.String(), next) {
		t.Error("a secret is in the log")
	}
	if res := ts.do(t, "POST", "/v1/subscriptions/hooks/redeliver", "application/json", `{}`); res.status != 422 {
		t.Errorf("redeliver nothing: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "POST", "/v1/subscriptions/hooks/redeliver", "application/json", `{"event_id":"evt_nope"}`); res.status != 404 {
		t.Errorf("redeliver an unknown event: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "GET", "/v1/subscriptions/hooks/deliveries?state=lost", "", ""); res.status != 400 {
		t.Errorf("deliveries in state lost: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "DELETE", "/v1/subscriptions/hooks", "", ""); res.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", res.status, res.body)
	}
	if res := ts.do(t, "GET", "/v1/subscriptions/hooks", "", ""); res.status != http.StatusNotFound {
		t.Errorf("after delete: %d %s", res.status, res.body)
	}
}

// TestReaderCannotSubscribe: readers read the feed and the subscriptions,
// and change nothing.
func TestReaderCannotSubscribe(t *testing.T) {
	ts := newEventsServer(t, api.Token{Name: "admin", Secret: adminToken, Role: api.RoleAdmin}, api.Token{Name: "reader", Secret: readerToken, Role: api.RoleReader})
	ts.token = readerToken
	if res := ts.do(t, "POST", "/v1/subscriptions", "application/json", subscriptionBody("hooks", "https://hooks.example.com/", events.NewSecret(), "")); res.status != http.StatusForbidden {
		t.Errorf("a reader subscribes: %d %s", res.status, res.body)
	}
	for _, path := range []string{"/v1/events", "/v1/subscriptions"} {
		if res := ts.do(t, "GET", path, "", ""); res.status != http.StatusOK {
			t.Errorf("a reader reads %s: %d %s", path, res.status, res.body)
		}
	}
}

// doHeaders is do for a stream: it reads the status and the headers, and
// the body only when the answer is not a stream.
func (ts *testServer) doHeaders(t *testing.T, method, path, contentType, body string, headers ...string) response {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := ts.request(t, ctx, method, path, contentType, body, headers...)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := response{status: res.StatusCode, header: res.Header}
	if res.Header.Get("Content-Type") != "text/event-stream" {
		out.body, _ = io.ReadAll(res.Body)
	}
	return out
}
