package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// A page on another site cannot make a browser write to landlord: the
// form POST of a rollout's abort (any content type, no body needed) is a
// 403 and the rollout runs on, whether the browser says so with
// Sec-Fetch-Site or only with Origin; the same browser on landlord's own
// pages, and clients that are not browsers, are served.
func TestCrossSiteWritesAreRefused(t *testing.T) {
	for _, tokens := range [][]api.Token{nil, {{Name: "ops", Secret: adminToken, Role: api.RoleAdmin}}} {
		name := "without credentials"
		if tokens != nil {
			name = "with tokens"
		}
		t.Run(name, func(t *testing.T) {
			ts := newServer(t, tokens...)
			fleetOf(t, ts, 3)
			ro := ts.startRollout(t, `{"plan":"standard"}`)
			for _, tt := range []struct {
				name    string
				headers []string
			}{
				{"a browser on another site", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
				{"a browser on a sibling site", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://other.localhost"}},
				{"an older browser, by its Origin", []string{"Origin", "https://evil.example"}},
				{"a page of no origin", []string{"Origin", "null"}},
			} {
				for _, action := range []string{"pause", "abort"} {
					res := ts.do(t, "POST", "/v1/rollouts/"+ro.ID+"/"+action, "application/x-www-form-urlencoded", "", tt.headers...)
					if res.status != http.StatusForbidden || res.problem(t).Code != wire.CodeForbidden || !strings.Contains(res.problem(t).Detail, "another site") {
						t.Errorf("%s, %s: %d %s; want 403 forbidden", tt.name, action, res.status, res.body)
					}
				}
				if res := ts.do(t, "POST", "/v1/tenants", "text/plain", `{"name":"forged","compute_config":{}}`, tt.headers...); res.status != http.StatusForbidden {
					t.Errorf("%s, a text/plain create: %d %s; want 403", tt.name, res.status, res.body)
				}
			}
			var got wire.Rollout
			mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID, "", "", "Sec-Fetch-Site", "cross-site"), &got)
			if got.State != ro.State {
				t.Fatalf("the rollout is %s after the refused requests, want %s", got.State, ro.State)
			}
			// landlord's own pages, and the CLI, which sends neither header.
			if res := ts.do(t, "POST", "/v1/rollouts/"+ro.ID+"/pause", "", "", "Sec-Fetch-Site", "same-origin", "Origin", ts.URL); res.status != http.StatusOK {
				t.Errorf("a same-origin pause: %d %s", res.status, res.body)
			}
			if res := ts.do(t, "POST", "/v1/rollouts/"+ro.ID+"/abort", "", ""); res.status != http.StatusOK {
				t.Errorf("an abort without browser headers: %d %s", res.status, res.body)
			}
		})
	}
}

// A server without credentials on loopback answers only requests
// addressed to loopback: a page that re-points its name at 127.0.0.1 (DNS
// rebinding) gets a 403 for reads and writes, of the API and of what is
// served beside it (the console); localhost, loopback addresses and
// configured names are served. With credentials, or called in the process
// (the console's calls), any Host is served.
func TestForeignHostsAreRefused(t *testing.T) {
	ts := newServerTuned(t, func(o *api.Options) { o.Hosts = []string{"landlord.test"} })
	ts.create(t, "acme", `{"image":"a"}`)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	for host, want := range map[string]int{
		"evil.example:" + port:         http.StatusForbidden,
		"evil.example":                 http.StatusForbidden,
		"127.0.0.1.nip.io:" + port:     http.StatusForbidden,
		"localhost.evil.example":       http.StatusForbidden,
		"192.168.1.10:" + port:         http.StatusForbidden,
		"localhost:" + port:            http.StatusOK,
		"LOCALHOST:" + port:            http.StatusOK,
		"localhost.:" + port:           http.StatusOK,
		"127.0.0.1:" + port:            http.StatusOK,
		"127.0.0.2:" + port:            http.StatusOK,
		"[::1]:" + port:                http.StatusOK,
		"[::ffff:127.0.0.1]:" + port:   http.StatusOK,
		"landlord.test:" + port:        http.StatusOK,
		"landlord.test":                http.StatusOK,
		"other.landlord.test:" + port:  http.StatusForbidden,
		"landlord.test.evil.example:1": http.StatusForbidden,
	} {
		for _, r := range []struct{ method, path string }{{"GET", "/v1/tenants/acme"}, {"DELETE", "/v1/tenants/acme"}, {"GET", "/healthz"}} {
			res := doHost(t, ts, r.method, r.path, host)
			if want == http.StatusOK && r.method == "DELETE" {
				continue // keep acme
			}
			if (res.status == http.StatusForbidden) != (want == http.StatusForbidden) {
				t.Errorf("%s %s with Host %q: %d %s; want %d", r.method, r.path, host, res.status, res.body, want)
			}
			if want == http.StatusForbidden && !strings.Contains(string(res.body), "DNS rebinding") {
				t.Errorf("%s %s with Host %q: %s; want it to say why", r.method, r.path, host, res.body)
			}
		}
	}

	// What is served beside the API (the console) is refused alike.
	s, err := api.New(api.Options{Store: ts.store, Compute: mockCompute(t)})
	if err != nil {
		t.Fatal(err)
	}
	beside := httptest.NewServer(s.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The console calls the API in the process, with its own Host.
		call := httptest.NewRequestWithContext(r.Context(), "GET", "http://landlord.internal/v1/tenants", nil)
		call.RemoteAddr = ""
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, call)
		w.WriteHeader(rec.Code)
	})))
	t.Cleanup(beside.Close)
	b := &testServer{Server: beside}
	if res := doHost(t, b, "GET", "/ui/", "evil.example"); res.status != http.StatusForbidden {
		t.Errorf("the console with a foreign Host: %d %s", res.status, res.body)
	}
	if res := doHost(t, b, "GET", "/ui/", "localhost"); res.status != http.StatusOK {
		t.Errorf("the console, and its call of the API in the process: %d %s", res.status, res.body)
	}

	// With tokens a foreign name gets nothing without one.
	withTokens := newServer(t, api.Token{Name: "ops", Secret: adminToken, Role: api.RoleAdmin})
	if res := doHost(t, withTokens, "GET", "/v1/tenants", "evil.example"); res.status != http.StatusOK {
		t.Errorf("a server with tokens, a foreign Host: %d %s", res.status, res.body)
	}
}

// doHost is ts.do with the Host header host.
func doHost(t *testing.T, ts *testServer, method, path, host string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if ts.token != "" {
		req.Header.Set("Authorization", "Bearer "+ts.token)
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf strings.Builder
	_, _ = io.Copy(&buf, res.Body)
	return response{status: res.StatusCode, header: res.Header, body: []byte(buf.String())}
}
