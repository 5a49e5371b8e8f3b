package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// A string that is not UTF-8 text (a byte that is not UTF-8, an escape of
// half a surrogate pair) is refused wherever it is sent, with a 400 at its
// pointer or parameter, on both stores; it was replaced by U+FFFD in
// annotation values, plan descriptions and version messages (and in
// compute_config for an escape), and refused elsewhere by whichever rule
// the garbled value broke. Nothing refused is stored; a whole surrogate
// pair is one character, kept.
func TestTextIsRefusedAtItsPointer(t *testing.T) {
	onEachStore(t, func(t *testing.T, ts *testServer) {
		ts.create(t, "acme", `{"image":"a"}`)
		if res := ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"standard"}`); res.status != http.StatusCreated {
			t.Fatalf("create plan: %d %s", res.status, res.body)
		}
		for _, tt := range []struct {
			name, method, path, contentType, body string
			pointer, parameter                    string
		}{
			{"an annotation value", "POST", "/v1/tenants", "", "{\"name\":\"a1\",\"compute_config\":{\"image\":\"a\"},\"annotations\":{\"note\":\"caf\xe9\"}}", "/annotations/note", ""},
			{"an escaped half pair in an annotation", "POST", "/v1/tenants", "", `{"name":"a2","compute_config":{"image":"a"},"annotations":{"note":"\ud800 x"}}`, "/annotations/note", ""},
			{"a low half alone", "POST", "/v1/tenants", "", `{"name":"a3","compute_config":{"image":"a"},"annotations":{"note":"\uDC00"}}`, "/annotations/note", ""},
			{"a high half before another character", "POST", "/v1/tenants", "", `{"name":"a4","compute_config":{"image":"a"},"annotations":{"note":"\ud83d\u0041"}}`, "/annotations/note", ""},
			{"an annotation key", "POST", "/v1/tenants", "", "{\"name\":\"a5\",\"compute_config\":{\"image\":\"a\"},\"annotations\":{\"n\xffte\":\"x\"}}", "/annotations", ""},
			{"a label value", "POST", "/v1/tenants", "", "{\"name\":\"a6\",\"compute_config\":{\"image\":\"a\"},\"labels\":{\"ring\":\"\xc3\"}}", "/labels/ring", ""},
			{"the name", "POST", "/v1/tenants", "", "{\"name\":\"a7\xff\",\"compute_config\":{\"image\":\"a\"}}", "/name", ""},
			{"a config value", "POST", "/v1/tenants", "", "{\"name\":\"a8\",\"compute_config\":{\"image\":\"a\",\"env\":{\"X\":\"\xff\"}}}", "/compute_config/env/X", ""},
			{"an escaped half pair in the config", "POST", "/v1/tenants", "", `{"name":"a9","compute_config":{"image":"a","x-note":"\ud800"}}`, "/compute_config/x-note", ""},
			{"an array element", "POST", "/v1/tenants", "", "{\"name\":\"a10\",\"compute_config\":{\"image\":\"a\",\"command\":[\"ok\",\"\xff\"]}}", "/compute_config/command/1", ""},
			{"a dry run", "POST", "/v1/tenants?dry_run=true", "", "{\"name\":\"a11\",\"compute_config\":{\"image\":\"a\"},\"annotations\":{\"note\":\"\xff\"}}", "/annotations/note", ""},
			{"a replace", "PUT", "/v1/tenants/acme", "", "{\"compute_config\":{\"image\":\"a\"},\"annotations\":{\"note\":\"\xff\"}}", "/annotations/note", ""},
			{"a patch", "PATCH", "/v1/tenants/acme", "application/merge-patch+json", "{\"annotations\":{\"note\":\"\xff\"}}", "/annotations/note", ""},
			{"a plan description", "POST", "/v1/plans", "", "{\"name\":\"p1\",\"description\":\"\xff\"}", "/description", ""},
			{"a version message", "POST", "/v1/plans/standard/versions", "", "{\"config\":{\"image\":\"a\"},\"message\":\"\xff\"}", "/message", ""},
			{"a version's config", "POST", "/v1/plans/standard/versions", "", `{"config":{"image":"a\udfff"}}`, "/config/image", ""},
			{"a rollout's plan", "POST", "/v1/rollouts", "", "{\"plan\":\"standard\xff\"}", "/plan", ""},
			{"a wave selector", "POST", "/v1/rollouts?dry_run=true", "", "{\"plan\":\"standard\",\"waves\":[{\"selector\":{\"ring\":\"\xff\"}}]}", "/waves/0/selector/ring", ""},
			{"outside any string", "POST", "/v1/tenants", "", "{\"name\":\"a12\",\"compute_config\":\xff}", "/compute_config", ""},
			{"a path parameter", "GET", "/v1/tenants/%ff", "", "", "", "tenant"},
			{"a path parameter of a write", "DELETE", "/v1/tenants/acme%ff", "", "", "", "tenant"},
			{"a plan in the path", "GET", "/v1/plans/%C3", "", "", "", "plan"},
			{"a query parameter", "GET", "/v1/tenants?name_prefix=%ff", "", "", "", "name_prefix"},
			{"a label filter", "GET", "/v1/tenants?label=ring%3D%ff", "", "", "", "label"},
			{"a plan filter", "GET", "/v1/tenants?plan=%ff", "", "", "", "plan"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				ct := tt.contentType
				if ct == "" && tt.body != "" {
					ct = "application/json"
				}
				res := ts.do(t, tt.method, tt.path, ct, tt.body)
				p := res.problem(t)
				want := wire.FieldError{Pointer: tt.pointer, Parameter: tt.parameter}
				if res.status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Pointer != want.Pointer || p.Errors[0].Parameter != want.Parameter {
					t.Errorf("%d %s; want a 400 at %s%s alone", res.status, res.body, tt.pointer, tt.parameter)
				}
			})
		}
		page, err := ts.store.List(context.Background(), tenant.ListOptions{IncludeDeleted: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tenants) != 1 || len(page.Tenants[0].Annotations) != 0 {
			t.Errorf("stored tenants after the refusals: %+v, want acme unchanged", page.Tenants)
		}
		fl := ts.store.(fleet.Store)
		plans, err := fl.ListPlans(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		versions, err := fl.ListVersions(context.Background(), "standard")
		if err != nil {
			t.Fatal(err)
		}
		if len(plans) != 1 || len(versions) != 0 {
			t.Errorf("%d plans and %d versions of standard after the refusals, want 1 and 0", len(plans), len(versions))
		}

		// A surrogate pair is one character, and text is kept as sent.
		res := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"rocket","compute_config":{"image":"a","x-note":"\ud83d\ude80"},"annotations":{"note":"caf\u00e9 \uD83D\uDE80 ✓"}}`)
		if res.status != http.StatusCreated {
			t.Fatalf("text with a surrogate pair: %d %s", res.status, res.body)
		}
		if got := res.tenant(t).Annotations["note"]; got != "café 🚀 ✓" {
			t.Errorf("annotation %q, want %q", got, "café 🚀 ✓")
		}
		if !slices.Contains([]int{http.StatusOK}, ts.do(t, "GET", "/v1/tenants?name_prefix=caf%C3%A9", "", "").status) {
			t.Error("a UTF-8 query value is refused")
		}
	})
}
