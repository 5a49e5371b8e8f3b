package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// leaksGo reports whether a response speaks of Go's types rather than the
// API's ("Go struct field PortMapping…", "unmarshal", "int64").
func leaksGo(body []byte) bool {
	for _, s := range []string{"Go struct", "Go value", "unmarshal", "int64", "PortMapping", "json:"} {
		if strings.Contains(string(body), s) {
			return true
		}
	}
	return false
}

// TestIntegralNumbers: 80.0 and 1e2 where the schema wants an integer are
// accepted (they were a 422 naming Go's types), the effective config holds
// the integer, the stored config keeps what was sent; a number that is no
// integer, or one too large for its field, is a 422 at its pointer that
// says "must be an integer".
func TestIntegralNumbers(t *testing.T) {
	ts := newServer(t)
	for _, tt := range []struct{ number, want string }{
		{"80.0", `"container_port":80`}, {"1e2", `"container_port":100`}, {"8.0e1", `"container_port":80`}, {"80", `"container_port":80`},
	} {
		res := ts.do(t, "POST", "/v1/tenants?dry_run=true", "application/json", `{"name":"acme","compute_config":{"image":"a","ports":[{"container_port":`+tt.number+`}],"health_check":{"tcp":{"port":`+tt.number+`},"retries":3.0}}}`)
		if res.status != http.StatusOK || !strings.Contains(string(res.tenant(t).EffectiveConfig), tt.want) {
			t.Errorf("container_port %s: %d %s", tt.number, res.status, res.body)
		}
	}
	created := ts.create(t, "acme", `{"image":"a","ports":[{"container_port":80.0}],"x-mock":{"fail_times":2e0}}`)
	stored, err := ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	if err != nil || !strings.Contains(string(stored.ComputeConfig), "80.0") {
		t.Errorf("the stored config does not keep the number as sent: %s", stored.ComputeConfig)
	}
	for _, tt := range []struct{ name, config, pointer string }{
		{"a fraction", `{"image":"a","ports":[{"container_port":80.5}]}`, "/compute_config/ports/0/container_port"},
		{"an integer too large for its field", `{"image":"a","x-mock":{"fail_times":1e30}}`, "/compute_config/x-mock/fail_times"},
		{"in a sidecar", `{"image":"a","sidecars":[{"name":"b","image":"b","ports":[{"container_port":1},{"container_port":2.5}]}]}`, "/compute_config/sidecars/0/ports/1/container_port"},
	} {
		res := ts.do(t, "POST", "/v1/tenants", "application/json", fmt.Sprintf(`{"name":"bad","compute_config":%s}`, tt.config))
		p := res.problem(t)
		if res.status != http.StatusUnprocessableEntity || !slices.Equal(pointers(p), []string{tt.pointer}) || !strings.Contains(p.Errors[0].Message, "must be an integer") || leaksGo(res.body) {
			t.Errorf("%s: %d %s, want 422 \"must be an integer\" at %s", tt.name, res.status, res.body, tt.pointer)
		}
	}
}

// badLabels is a create body with n label keys that break the key rules.
func badLabels(n int) string {
	var b strings.Builder
	b.WriteString(`{"name":"many","compute_config":{"image":"a"},"labels":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"bad key %d!":"v"`, i)
	}
	b.WriteString("}}")
	return b.String()
}

// TestViolationsAreCapped: 20,000 bad label keys made a 3.1 MB problem;
// now it lists 100 and says how many more.
func TestViolationsAreCapped(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "POST", "/v1/tenants", "application/json", badLabels(20000))
	p := res.problem(t)
	// 20,000 keys, and /labels has more than 64.
	const listed, more = api.MaxFieldErrors, 20001 - api.MaxFieldErrors
	if res.status != http.StatusBadRequest || len(p.Errors) != listed || p.ErrorsOmitted != more || !strings.Contains(p.Detail, fmt.Sprintf("and %d more", more)) {
		t.Fatalf("%d, %d errors listed, %d omitted, detail %q", res.status, len(p.Errors), p.ErrorsOmitted, p.Detail)
	}
	t.Logf("20,000 bad label keys: a %d-byte problem", len(res.body))
	if len(res.body) > 32<<10 {
		t.Errorf("the problem is %d bytes; want under 32 KiB", len(res.body))
	}
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", badLabels(3)); len(r.problem(t).Errors) != 3 || r.problem(t).ErrorsOmitted != 0 {
		t.Errorf("a few violations: %s", r.body)
	}
}

// Violations at long pointers are capped by their size too: 100 bad label
// keys of 500 bytes each (and /labels, over its count) are 50 KB of
// pointers alone.
func TestViolationsAreCappedBySize(t *testing.T) {
	ts := newServer(t)
	var b strings.Builder
	b.WriteString(`{"name":"long","compute_config":{"image":"a"},"labels":{`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%03d%s!":"v"`, i, strings.Repeat("k", 496))
	}
	b.WriteString("}}")
	res := ts.do(t, "POST", "/v1/tenants", "application/json", b.String())
	p := res.problem(t)
	if res.status != http.StatusBadRequest || len(p.Errors) == 0 || len(p.Errors)+p.ErrorsOmitted < 100 || p.ErrorsOmitted == 0 {
		t.Fatalf("%d, %d errors listed, %d omitted", res.status, len(p.Errors), p.ErrorsOmitted)
	}
	if len(res.body) > 2*api.MaxFieldErrorBytes {
		t.Errorf("the problem is %d bytes; want under %d", len(res.body), 2*api.MaxFieldErrorBytes)
	}
	t.Logf("100 bad label keys of 500 bytes: %d listed in a %d-byte problem", len(p.Errors), len(res.body))
}

// TestTypeErrorsDoNotHideOtherViolations: a field of the wrong type was
// reported alone; now every field at fault is, with what the well-typed
// fields break.
func TestTypeErrorsDoNotHideOtherViolations(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "acme", `{"image":"a"}`)
	for _, tt := range []struct {
		name, method, path, contentType, body string
		pointers                              []string
	}{
		{"create: a type error and a bad label", "POST", "/v1/tenants", "application/json",
			`{"name":5,"compute_config":{"image":"a"},"labels":{"bad key!":"v"}}`, []string{"/labels/bad key!", "/name"}},
		{"create: every field", "POST", "/v1/tenants", "application/json",
			`{"name":"Bad_Name","compute_config":"x","labels":{"a":1,"b":true},"annotations":[1],"colour":"red"}`,
			[]string{"/annotations", "/colour", "/compute_config", "/labels/a", "/labels/b", "/name"}},
		{"create: a field spelled in another case", "POST", "/v1/tenants", "application/json",
			`{"NAME":"acme","compute_config":{"image":"a"},"Labels":{"a":"b"}}`, []string{"/Labels", "/NAME"}},
		{"replace", "PUT", "/v1/tenants/acme", "application/json",
			`{"compute_config":{"image":"a"},"labels":{"a":[1]},"annotations":{"bad key!":"x"}}`, []string{"/annotations/bad key!", "/labels/a"}},
		{"patch", "PATCH", "/v1/tenants/acme", "application/merge-patch+json",
			`{"labels":{"a":1,"b":"ok","c":null},"annotations":{"d":{}},"name":"x"}`, []string{"/annotations/d", "/labels/a", "/name"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, tt.path, tt.contentType, tt.body)
			p := res.problem(t)
			if res.status != http.StatusBadRequest || p.Code != wire.CodeInvalidBody || !slices.Equal(pointers(p), tt.pointers) || leaksGo(res.body) {
				t.Errorf("%d %s %v, want 400 %s %v: %s", res.status, p.Code, pointers(p), wire.CodeInvalidBody, tt.pointers, res.body)
			}
		})
	}
}

// TestProviderChosenByLabel: a provider chosen by a label or an annotation
// is reported at that label or annotation, not at compute_config, in words
// that say so.
func TestProviderChosenByLabel(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "acme", `{"image":"a"}`)
	for _, tt := range []struct {
		name, method, path, body, code, pointer, words string
	}{
		{"create, label names no enabled provider", "POST", "/v1/tenants", `{"name":"b","compute_config":{"image":"a"},"labels":{"compute_provider":"nomad"}}`,
			wire.CodeProviderNotFound, "/labels/compute_provider", `named by the label compute_provider`},
		{"create, annotation names no enabled provider", "POST", "/v1/tenants", `{"name":"b","compute_config":{"image":"a"},"annotations":{"compute_provider_type":"nomad"}}`,
			wire.CodeProviderNotFound, "/annotations/compute_provider_type", `named by the annotation compute_provider_type`},
		{"replace, label moves the tenant", "PUT", "/v1/tenants/acme", `{"compute_config":{"image":"a"},"labels":{"compute_provider":"nomad"}}`,
			wire.CodeInvalidComputeConfig, "/labels/compute_provider", "a label or annotation chooses a provider this tenant cannot use"},
		{"config key", "POST", "/v1/tenants", `{"name":"b","compute_config":{"image":"a","compute_provider":"nomad"}}`,
			wire.CodeProviderNotFound, "/compute_config/compute_provider", `not found`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, tt.path, "application/json", tt.body)
			p := res.problem(t)
			if res.status != http.StatusUnprocessableEntity || p.Code != tt.code || !slices.Equal(pointers(p), []string{tt.pointer}) ||
				!strings.Contains(string(res.body), tt.words) || strings.Contains(string(res.body), "invalid compute specification") {
				t.Errorf("%d %s %v, want 422 %s at %s saying %q: %s", res.status, p.Code, pointers(p), tt.code, tt.pointer, tt.words, res.body)
			}
		})
	}
}

// TestLabelSelectorWording: each bad ?label= term is its own error, in
// words without a pointer in them.
func TestLabelSelectorWording(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "GET", "/v1/tenants?label=bad&label=tier=gold&label=a=b=c", "", "")
	p := res.problem(t)
	want := []string{`"bad" is not a label selector of the form key=value`, `"a=b=c" is not a label selector of the form key=value`}
	var got []string
	for _, e := range p.Errors {
		if e.Parameter != "label" {
			t.Errorf("error names %q, not the parameter label", e.Parameter)
		}
		got = append(got, e.Message)
	}
	if res.status != http.StatusBadRequest || p.Code != wire.CodeInvalidParameter || !slices.Equal(got, want) {
		t.Errorf("%d %s %q, want 400 %s %q", res.status, p.Code, got, wire.CodeInvalidParameter, want)
	}
}
