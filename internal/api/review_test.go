package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

func TestPatchKeepsWhatItDoesNotName(t *testing.T) {
	ts := newServer(t)
	created := ts.create(t, "acme", `{"image":"a","x-big":12345678901234567891,"x-huge":1e400}`)
	res := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"labels":{"tier":"gold"}}`)
	if res.status != 200 {
		t.Fatalf("PATCH: %d %s", res.status, res.body)
	}
	stored, _ := ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	if !strings.Contains(string(stored.ComputeConfig), "12345678901234567891") || !strings.Contains(string(stored.ComputeConfig), "1e400") {
		t.Errorf("a labels-only patch rewrote compute_config: %s", stored.ComputeConfig)
	}
	if r := ts.do(t, "PATCH", "/v1/tenants/acme", "application/merge-patch+json", `{"labels":{"tier":7}}`); r.status != 400 || !slices.Equal(pointers(r.problem(t)), []string{"/labels/tier"}) {
		t.Errorf("a label of the wrong type: %d %s", r.status, r.body)
	}
}

func TestReviewedStatuses(t *testing.T) {
	ts := newServer(t)
	created := ts.create(t, "acme", `{"image":"a","secrets":{"DB":"x"}}`)
	for _, tt := range []struct {
		name, method, path, contentType, body string
		headers                               []string
		status                                int
		code                                  string
		pointer                               string
	}{
		{"dry run of a taken name", "POST", "/v1/tenants?dry_run=true", "application/json", `{"name":"acme","compute_config":{"image":"a"}}`, nil, 409, wire.CodeNameTaken, "/name"},
		{"weak ETag never matches", "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"b"}}`, []string{"If-Match", `W/"1"`}, 412, wire.CodePreconditionFailed, ""},
		{"a redacted secret with nothing to keep", "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"a","secrets":{"DB":"[redacted]","NEW":"[redacted]"}}}`, nil, 422, wire.CodeInvalidComputeConfig, "/compute_config/secrets/NEW"},
		{"a charset other than UTF-8", "PUT", "/v1/tenants/acme", "application/json; charset=latin1", `{"compute_config":{"image":"b"}}`, nil, 400, wire.CodeInvalidBody, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do(t, tt.method, tt.path, tt.contentType, tt.body, tt.headers...)
			p := res.problem(t)
			if res.status != tt.status || p.Code != tt.code || (tt.pointer != "" && !slices.Contains(pointers(p), tt.pointer)) {
				t.Errorf("%d %s %v, want %d %s %s", res.status, p.Code, pointers(p), tt.status, tt.code, tt.pointer)
			}
		})
	}
	if r := ts.do(t, "PUT", "/v1/tenants/acme", "application/json", `{"compute_config":{"image":"b","secrets":{"DB":"[redacted]"}}}`, "If-Match", `"7", "1"`); r.status != 200 {
		t.Errorf("If-Match with a list holding the current ETag: %d %s", r.status, r.body)
	}
	cur, _ := ts.store.Get(context.Background(), created.ID, tenant.GetOptions{})
	d, _ := ts.store.RequestDeletion(context.Background(), cur.ID, 0, "test")
	if _, err := ts.store.UpdateObserved(context.Background(), d.ID, tenant.Observation{Generation: d.Generation, Status: tenant.StatusDeleted}); err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "PUT", "/v1/tenants/"+created.ID, "application/json", `{"compute_config":{"image":"c"}}`); r.status != 409 || r.problem(t).Code != wire.CodeTenantDeleting {
		t.Errorf("PUT of a deleted tenant: %d %s", r.status, r.body)
	}
	// The request log names the caller and the tenant.
	found := false
	for _, line := range strings.Split(ts.logs.String(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "request" && l["method"] == "PUT" && l["tenant_id"] == created.ID && l["actor"] == "anonymous" {
			found = true
		}
	}
	if !found {
		t.Error("no request log line carries the tenant id and the actor")
	}
}
