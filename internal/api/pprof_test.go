package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestPprofNeedsAnAdminToken(t *testing.T) {
	ts := newServer(t, roleTokens...)
	for _, tt := range []struct {
		name, token, path string
		want              int
	}{
		{"no token", "", "/debug/pprof/", http.StatusUnauthorized},
		{"no token, a profile", "", "/debug/pprof/profile?seconds=1", http.StatusUnauthorized},
		{"wrong token", "wrong", "/debug/pprof/heap", http.StatusUnauthorized},
		{"reader", readerToken, "/debug/pprof/", http.StatusForbidden},
		{"reader, a profile", readerToken, "/debug/pprof/goroutine?debug=1", http.StatusForbidden},
		{"admin index", adminToken, "/debug/pprof/", http.StatusOK},
		{"admin heap", adminToken, "/debug/pprof/heap?debug=1", http.StatusOK},
		{"admin goroutine", adminToken, "/debug/pprof/goroutine?debug=1", http.StatusOK},
		{"admin allocs", adminToken, "/debug/pprof/allocs", http.StatusOK},
		{"admin cpu profile", adminToken, "/debug/pprof/profile?seconds=1", http.StatusOK},
		{"admin trace", adminToken, "/debug/pprof/trace?seconds=0.1", http.StatusOK},
		{"admin symbol", adminToken, "/debug/pprof/symbol", http.StatusOK},
		// The command line may hold a database password.
		{"admin cmdline", adminToken, "/debug/pprof/cmdline", http.StatusNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := *ts
			c.token = tt.token
			res := c.do(t, "GET", tt.path, "", "")
			if res.status != tt.want {
				t.Fatalf("GET %s: %d, want %d: %.200s", tt.path, res.status, tt.want, res.body)
			}
			switch tt.want {
			case http.StatusUnauthorized:
				if res.header.Get("WWW-Authenticate") == "" {
					t.Error("401 without WWW-Authenticate")
				}
				if p := res.problem(t); p.Code != "unauthorized" {
					t.Errorf("code %q, want unauthorized", p.Code)
				}
			case http.StatusForbidden:
				if p := res.problem(t); p.Code != "forbidden" {
					t.Errorf("code %q, want forbidden", p.Code)
				}
			case http.StatusOK:
				if len(res.body) == 0 {
					t.Error("empty body")
				}
			}
		})
	}
}

func TestPprofOpenWithoutTokens(t *testing.T) {
	// Without tokens landlord serves loopback only, as the anonymous admin.
	ts := newServer(t)
	res := ts.do(t, "GET", "/debug/pprof/", "", "")
	if res.status != http.StatusOK || !strings.Contains(string(res.body), "goroutine") {
		t.Fatalf("GET /debug/pprof/: %d %.200s", res.status, res.body)
	}
}

func TestPprofIsNotInTheDocument(t *testing.T) {
	doc, _ := mustOpenAPI(t, newServer(t))
	for path := range doc.Paths.Map() {
		if strings.HasPrefix(path, "/debug") {
			t.Errorf("the OpenAPI document lists %s", path)
		}
	}
}
