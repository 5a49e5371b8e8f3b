package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// What clients of other landlord APIs send and read works here too.

// A problem carries "error" beside RFC 9457's members: clients that read
// it show it, where they showed only the status. It is the detail and,
// when fields are at fault, the first of them and how many more there are,
// so that a client that shows only error shows why; errors lists them all.
func TestProblemHasErrorMember(t *testing.T) {
	ts := newServer(t)
	for _, tc := range []struct{ name, method, path, body, want string }{
		{"not found", "GET", "/v1/tenants/nosuch", "", "no such tenant; list tenants with GET /v1/tenants"},
		{"no route", "GET", "/v1/nosuch", "", "no route GET /v1/nosuch; see GET /v1/openapi.json"},
		{"invalid body", "POST", "/v1/tenants", `{"name":"Bad Name","compute_config":{"image":"a"}}`,
			"the name is not valid: /name: name \"Bad Name\" must be a lowercase DNS label"},
		{"invalid compute_config", "POST", "/v1/tenants", `{"name":"acme","compute_config":{"image":5,"bogus":1,"ports":[{"container_port":"x"}]}}`,
			"compute_config is not valid for its provider: /compute_config/bogus: unknown field (extensions must start with \"x-\") (and 2 more)"},
		{"a query parameter", "GET", "/v1/tenants?zz=1", "",
			"GET /v1/tenants has an unknown query parameter (\"zz\"); it takes "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, tc.method, tc.path, "application/json", tc.body)
			var body struct {
				Detail string `json:"detail"`
				Error  string `json:"error"`
				Errors []struct {
					Pointer, Parameter, Message string
				} `json:"errors"`
			}
			if err := json.Unmarshal(res.body, &body); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(body.Error, tc.want) || !strings.HasPrefix(body.Error, body.Detail) {
				t.Errorf("error %q, want %q after the detail %q", body.Error, tc.want, body.Detail)
			}
			if len(body.Errors) > 0 {
				first := body.Errors[0]
				at := first.Pointer
				if at == "" {
					at = "parameter " + first.Parameter
				}
				if !strings.Contains(body.Error, at+": "+first.Message) {
					t.Errorf("error %q does not name the first field at fault, %s: %s", body.Error, at, first.Message)
				}
			}
		})
	}
	// 20,000 bad label keys: the first, and how many more, though errors
	// lists only some of them.
	res := ts.do(t, "POST", "/v1/tenants", "application/json", badLabels(20000))
	var p wire.Problem
	mustDecode(t, res, &p)
	if want := fmt.Sprintf(" (and %d more)", len(p.Errors)+p.ErrorsOmitted-1); p.ErrorsOmitted == 0 || !strings.HasSuffix(p.ErrorMessage, want) {
		t.Errorf("20,000 bad labels: error %q, want it to end %q", p.ErrorMessage, want)
	}
}

// ?include_deleted=true lists deleted tenants too, as it finds them on a
// get.
func TestListIncludeDeleted(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "live", `{"image":"a"}`)
	gone := ts.create(t, "gone", `{"image":"a"}`)
	if r := ts.do(t, "DELETE", "/v1/tenants/gone", "", ""); r.status != http.StatusAccepted {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	cur, err := ts.store.Get(context.Background(), gone.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.store.UpdateObserved(context.Background(), cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleted}); err != nil {
		t.Fatal(err)
	}
	names := func(query string) []string {
		t.Helper()
		res := ts.do(t, "GET", "/v1/tenants"+query, "", "")
		if res.status != http.StatusOK {
			t.Fatalf("GET /v1/tenants%s: %d %s", query, res.status, res.body)
		}
		var list wire.TenantList
		if err := json.Unmarshal(res.body, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tn := range list.Tenants {
			out = append(out, tn.Name+" "+tn.Status)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(""), []string{"live requested"}; !slices.Equal(got, want) {
		t.Errorf("without include_deleted: %v, want %v", got, want)
	}
	if got, want := names("?include_deleted=true"), []string{"gone deleted", "live requested"}; !slices.Equal(got, want) {
		t.Errorf("include_deleted=true: %v, want %v", got, want)
	}
	if got, want := names("?include_deleted=false"), []string{"live requested"}; !slices.Equal(got, want) {
		t.Errorf("include_deleted=false: %v, want %v", got, want)
	}
	if r := ts.do(t, "GET", "/v1/tenants?include_deleted=yes", "", ""); r.status != http.StatusBadRequest || pointers(r.problem(t))[0] != "include_deleted" {
		t.Errorf("include_deleted=yes: %d %s", r.status, r.body)
	}
}

// A PUT that leaves labels or annotations out (or sends null) keeps the
// tenant's; {} clears them.
func TestReplaceKeepsOmittedLabels(t *testing.T) {
	ts := newServer(t)
	res := ts.do(t, "POST", "/v1/tenants", "application/json",
		`{"name":"acme","compute_config":{"image":"a"},"labels":{"tier":"gold"},"annotations":{"owner":"ops"}}`)
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	for _, tc := range []struct {
		name, body          string
		labels, annotations map[string]string
	}{
		{"both left out", `{"compute_config":{"image":"b"}}`, map[string]string{"tier": "gold"}, map[string]string{"owner": "ops"}},
		{"null keeps", `{"compute_config":{"image":"c"},"labels":null,"annotations":null}`, map[string]string{"tier": "gold"}, map[string]string{"owner": "ops"}},
		{"labels replaced", `{"compute_config":{"image":"c"},"labels":{"tier":"silver"}}`, map[string]string{"tier": "silver"}, map[string]string{"owner": "ops"}},
		{"empty labels clear", `{"compute_config":{"image":"c"},"labels":{}}`, nil, map[string]string{"owner": "ops"}},
		{"empty annotations clear", `{"compute_config":{"image":"c"},"annotations":{}}`, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", tc.body)
			if res.status != http.StatusOK {
				t.Fatalf("PUT: %d %s", res.status, res.body)
			}
			got := res.tenant(t)
			if !maps.Equal(got.Labels, tc.labels) || !maps.Equal(got.Annotations, tc.annotations) {
				t.Errorf("labels %v, annotations %v; want %v, %v", got.Labels, got.Annotations, tc.labels, tc.annotations)
			}
		})
	}
}

// Every operation refuses a query parameter it does not read, naming it,
// rather than answer as if it were not there.
func TestUnknownQueryParameters(t *testing.T) {
	ts := newServer(t, roleTokens...)
	ts.create(t, "acme", `{"image":"a"}`)
	for _, r := range api.Routes() {
		method, pattern, op := r[0], r[1], r[2]
		t.Run(op, func(t *testing.T) {
			path := strings.NewReplacer("{tenant}", "acme", "{asset}", "app.css").Replace(pattern)
			res := ts.do(t, method, path+"?page_size=5&statuss=ready&zz=1", "application/json", `{}`)
			if res.status != http.StatusBadRequest {
				t.Fatalf("%s %s with unknown parameters: %d %s", method, path, res.status, res.body)
			}
			p := res.problem(t)
			var unknown []string
			for _, e := range p.Errors {
				unknown = append(unknown, e.Parameter)
			}
			want := []string{"statuss", "zz"}
			if op != "listTenants" && op != "listTenantEvents" && op != "listRolloutEvents" && op != "listEvents" && op != "listDeliveries" {
				want = []string{"page_size", "statuss", "zz"}
			}
			if p.Code != wire.CodeInvalidParameter || !cmp.Equal(unknown, want) || !strings.Contains(p.Detail, "zz") {
				t.Errorf("problem %s %v; want invalid_parameter naming %v: %s", p.Code, unknown, want, res.body)
			}
		})
	}
	if r := ts.do(t, "GET", "/v1/tenants?page_size=%zz", "", ""); r.status != http.StatusBadRequest || r.problem(t).Code != wire.CodeInvalidParameter {
		t.Errorf("a malformed query: %d %s", r.status, r.body)
	}
	// A query of 64 KB of long unknown names gets a bounded answer: the
	// detail names five, cut short, and the fields are capped.
	var q strings.Builder
	for i := range 60 {
		fmt.Fprintf(&q, "&p%02d%s=1", i, strings.Repeat("x", 1000))
	}
	r := ts.do(t, "GET", "/v1/tenants?"+q.String()[1:], "", "")
	if p := r.problem(t); r.status != http.StatusBadRequest || !strings.Contains(p.Detail, "and 55 more") || len(r.body) > 32<<10 {
		t.Errorf("60 unknown names of 1 KB: %d, a %d-byte answer, detail %.200q", r.status, len(r.body), p.Detail)
	}
	if r := ts.do(t, "GET", "/v1/tenants?status=ready&include_deleted=true&page_size=5", "", ""); r.status != http.StatusOK {
		t.Errorf("known parameters: %d %s", r.status, r.body)
	}
}
