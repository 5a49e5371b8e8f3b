package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Seeds that reach deep into the handlers: valid configs, near misses and
// hostile shapes.
var fuzzSeeds = []string{
	`{"name":"acme","compute_config":{"image":"a"}}`,
	`{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":8080,"host_port":0,"protocol":"udp"}],"env":{"A":"1"},"secrets":{"S":"x"}}}`,
	`{"name":"acme","compute_config":{"image": 5, "ports":[{"container_port":"x"}], "bogus": 1}}`,
	`{"name":"acme","compute_config":{"image":"a","sidecars":[{"name":"b","image":"b","health_check":{"http":{"port":1}}}]},"labels":{"k":"v"}}`,
	`{"name":"acme","compute_config":{"image":"a","compute_provider":"nomad"}}`,
	`{"name":"acme","compute_config":{"image":"a","x-mock":{"fail":"terminal","latency":"1ms"}}}`,
	`{"name":"","compute_config":null}`,
	`{"compute_config":{"image":"\u0000"},"annotations":{"a":"\u0000"}}`,
	`{"name":"acme","compute_config":{"image":"a","health_check":{"command":[],"interval":"1x"}}}`,
	`[]`, `null`, `{`, `{"name":"acme","compute_config":{"image":"a"}}{}`, `{"name":1e999}`,
	// Hostile shapes: nesting past the limit, repeated keys, integers
	// spelled as decimals, too large for their field, many bad labels.
	`{"name":"acme","compute_config":{"image":"a","x-a":` + nested(70, false) + `}}`,
	`{"name":"acme","compute_config":{"image":"a","x-a":` + nested(200, true) + `}}`,
	`{"name":"acme","name":"b","compute_config":{"image":"a","env":{"A":"1","\u0041":"2"}}}`,
	`{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":80.0},{"container_port":1e2,"host_port":8.08e3}]}}`,
	`{"name":"acme","compute_config":{"image":"a","x-mock":{"fail_times":1e30},"health_check":{"tcp":{"port":1.5}}}}`,
	`{"name":5,"compute_config":"x","labels":{"bad key!":1,"b":"v"},"annotations":[]}`,
	badLabels(200),
}

// checkProblemSize fails when the answer to body is far larger than body:
// a problem lists at most api.MaxFieldErrors fields.
func checkProblemSize(t *testing.T, body string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 400 && rec.Body.Len() > 2*len(body)+32<<10 {
		t.Fatalf("a %d-byte body got a %d-byte problem", len(body), rec.Body.Len())
	}
}

func FuzzCreateTenant(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, false)
	}
	ts := newServer(f)
	h := ts.Config.Handler
	f.Fuzz(func(t *testing.T, body string, dryRun bool) {
		path := "/v1/tenants"
		if dryRun {
			path += "?dry_run=true"
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST %s %q: %d %s", path, body, rec.Code, rec.Body)
		}
		checkProblemSize(t, body, rec)
		checkNoSecrets(t, rec.Body.Bytes())
	})
}

// checkNoSecrets fails when a response shows the value of a secret: every
// value under a "secrets" object must read [redacted].
func checkNoSecrets(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if json.Unmarshal(body, &v) != nil {
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if secrets, ok := c.(map[string]any); ok && k == "secrets" {
					for name, val := range secrets {
						if val != "[redacted]" {
							t.Fatalf("secret %s came back as %v: %s", name, val, body)
						}
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(v)
}

func FuzzUpdateTenant(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "PUT")
		f.Add(s, "PATCH")
	}
	f.Add(`{"compute_config":{"env":{"A":null}},"labels":null}`, "PATCH")
	f.Add(`{"compute_config":{"image":"b","secrets":{"S":"[redacted]"}}}`, "PUT")
	f.Add(`{"compute_config":{"x-a":`+nested(100, false)+`},"labels":{"a":1,"a":2}}`, "PATCH")
	f.Add(`{"compute_config":{"image":"b"},"labels":{"compute_provider":"nomad"}}`, "PUT")
	ts := newServer(f)
	h := ts.Config.Handler
	seed := httptest.NewRequest(http.MethodPost, "/v1/tenants", strings.NewReader(`{"name":"acme","compute_config":{"image":"a","secrets":{"S":"x"}}}`))
	seed.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, seed)
	if rec.Code != http.StatusCreated {
		f.Fatalf("seed tenant: %d %s", rec.Code, rec.Body)
	}
	f.Fuzz(func(t *testing.T, body, method string) {
		if method != http.MethodPut && method != http.MethodPatch {
			method = http.MethodPatch
		}
		req := httptest.NewRequest(method, "/v1/tenants/acme", strings.NewReader(body))
		req.Header.Set("Content-Type", map[string]string{http.MethodPut: "application/json", http.MethodPatch: "application/merge-patch+json"}[method])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", method, body, rec.Code, rec.Body)
		}
		checkProblemSize(t, body, rec)
		checkNoSecrets(t, rec.Body.Bytes())
	})
}
