package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// DELETE ?forget=true deletes the record of a tenant whose provider is not
// enabled (landlord was switched to another), at once, destroying nothing;
// admins only; the tenant's history says who and what may still run. A
// tenant whose provider is enabled is deleted the usual way instead.
func TestForget(t *testing.T) {
	ts := newServer(t, roleTokens...)
	ctx := context.Background()
	stranded, err := ts.store.Create(ctx, &tenant.Tenant{Name: "acme", Provider: "docker", ComputeConfig: json.RawMessage(`{"image":"nginx"}`)}, "ops")
	if err != nil {
		t.Fatal(err)
	}
	stranded, err = ts.store.UpdateObserved(ctx, stranded.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning,
		ResourceIDs: map[string]string{"container/app": "c0ffee"}})
	if err != nil {
		t.Fatal(err)
	}
	ts.create(t, "live", `{"image":"a"}`)

	reader := *ts
	reader.token = readerToken
	if r := reader.do(t, "DELETE", "/v1/tenants/acme?forget=true", "", ""); r.status != http.StatusForbidden {
		t.Errorf("a reader forgets: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "DELETE", "/v1/tenants/live?forget=true", "", ""); r.status != http.StatusConflict || r.problem(t).Code != wire.CodeProviderEnabled {
		t.Errorf("forget a tenant whose provider is enabled: %d %s", r.status, r.body)
	}
	// Until the controller has recorded that the provider is missing, the
	// leader may still run it: this replica's view is not enough.
	if r := ts.do(t, "DELETE", "/v1/tenants/acme?forget=true", "", ""); r.status != http.StatusConflict || !strings.Contains(r.problem(t).Detail, "the controller has not recorded") {
		t.Errorf("forget before the controller left the tenant alone: %d %s", r.status, r.body)
	}
	stranded, err = ts.store.UpdateObserved(ctx, stranded.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: tenant.ProviderMissing(stranded),
		ResourceIDs: map[string]string{"container/app": "c0ffee"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := ts.do(t, "DELETE", "/v1/tenants/acme?forget=maybe", "", ""); r.status != http.StatusBadRequest || pointers(r.problem(t))[0] != "forget" {
		t.Errorf("forget=maybe: %d %s", r.status, r.body)
	}
	if r := ts.do(t, "DELETE", "/v1/tenants/acme?forget=true", "", "", "If-Match", `"99"`); r.status != http.StatusPreconditionFailed {
		t.Errorf("a stale If-Match: %d %s", r.status, r.body)
	}

	res := ts.do(t, "DELETE", "/v1/tenants/acme?forget=true", "", "", "If-Match", `"`+strconv.FormatInt(stranded.Version, 10)+`"`)
	if res.status != http.StatusOK {
		t.Fatalf("forget: %d %s", res.status, res.body)
	}
	got := res.tenant(t)
	if got.Status != "deleted" || got.DeletedAt == nil || !strings.Contains(got.StatusMessage, "container/app=c0ffee") ||
		!strings.Contains(got.StatusMessage, "compute provider docker is not enabled") {
		t.Errorf("forgotten tenant: %s %q", got.Status, got.StatusMessage)
	}
	if r := ts.do(t, "GET", "/v1/tenants/acme", "", ""); r.status != http.StatusNotFound {
		t.Errorf("GET of a forgotten tenant: %d", r.status)
	}
	var events wire.EventList
	if err := json.Unmarshal(ts.do(t, "GET", "/v1/tenants/"+stranded.ID+"/events", "", "").body, &events); err != nil {
		t.Fatal(err)
	}
	last := events.Events[len(events.Events)-2:]
	if last[0].Type != "forgotten" || last[0].Actor != "ops" || !strings.Contains(last[0].Message, "container/app=c0ffee") ||
		last[1].Type != "status" || last[1].To != "deleted" || last[1].Actor != "ops" {
		t.Errorf("history ends %+v", last)
	}
	if !strings.Contains(ts.logs.String(), `"msg":"tenant forgotten`) || !strings.Contains(ts.logs.String(), `"actor":"ops"`) {
		t.Errorf("no log line records who forgot the tenant:\n%s", ts.logs.String())
	}
	if r := ts.do(t, "DELETE", "/v1/tenants/acme?forget=true", "", ""); r.status != http.StatusNotFound {
		t.Errorf("forget again: %d %s", r.status, r.body)
	}
}
