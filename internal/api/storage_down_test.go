package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// noStorage are the operations that never touch the database: their
// answers with PostgreSQL stopped are their usual ones.
var noStorage = map[string]bool{
	"healthz": true, "getMetrics": true, "whoami": true, "listProviders": true, "getComputeConfig": true,
	"getOpenAPI": true, "getDocs": true, "getDocsAsset": true,
}

// storageDownBodies are request bodies that would succeed were the
// database up, by operation.
var storageDownBodies = map[string]string{
	"createTenant":             `{"name":"newcomer","compute_config":{"image":"a"}}`,
	"replaceTenant":            `{"compute_config":{"image":"b"}}`,
	"patchTenant":              `{"labels":{"team":"a"}}`,
	"createPlan":               `{"name":"another"}`,
	"publishPlanVersion":       `{"config":{"image":"c"}}`,
	"createRollout":            `{"plan":"standard"}`,
	"moveTenant":               `{"compute_config":{"image":"m"}}`,
	"createSubscription":       `{"name":"hooks","url":"https://hooks.example.com/","secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
	"updateSubscription":       `{"enabled":false}`,
	"rotateSubscriptionSecret": `{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
	"redeliver":                `{"event_id":"evt_1"}`,
}

// With PostgreSQL stopped, every operation that reads or writes the
// database answers 503 storage_unavailable with Retry-After, never a 500:
// tenant reads (get, list with each filter, history, status), plans and
// their versions, rollouts with their members and history, a dry run, and
// every write. The console reads through these same operations. /readyz is
// 503.
func TestStorageDownIsUnavailable(t *testing.T) {
	pgtest.NewDatabase(t) // skips without PostgreSQL
	c, err := pgtest.StartCluster()
	if errors.Is(err, pgtest.ErrUnavailable) {
		t.Skipf("no cluster of this test's own to stop: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	url, err := c.CreateDatabase(ctx, "storage_down")
	if err != nil {
		t.Fatal(err)
	}
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ts := serverOn(t, store)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	if res := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"acme","compute_config":{},"labels":{"ring":"canary"},"plan":{"name":"standard"}}`); res.status != http.StatusCreated {
		t.Fatalf("create acme: %d %s", res.status, res.body)
	}
	ts.publish(t, "standard", `{"image":"example.com/app:2"}`)
	ro := ts.startRollout(t, `{"plan":"standard"}`)

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	paths := strings.NewReplacer("{tenant}", "acme", "{plan}", "standard", "{version}", "1", "{rollout}", ro.ID, "{asset}", "app.css")
	type call struct{ method, path, op, body string }
	var calls []call
	for _, r := range api.Routes() {
		method, pattern, op := r[0], r[1], r[2]
		if noStorage[op] {
			continue
		}
		calls = append(calls, call{method, paths.Replace(pattern), op, storageDownBodies[op]})
	}
	// The reads' filters and pages take other queries.
	for _, path := range []string{
		"/v1/tenants?status=ready", "/v1/tenants?label=ring%3Dcanary", "/v1/tenants?name_prefix=ac",
		"/v1/tenants?plan=standard", "/v1/tenants?include_deleted=true", "/v1/tenants/acme?include_deleted=true",
		"/v1/tenants/acme/events?order=newest&page_size=1", "/v1/rollouts?plan=standard&active=true",
		"/v1/rollouts/" + ro.ID + "/events?after=1&page_size=1",
	} {
		calls = append(calls, call{"GET", path, "a filtered read", ""})
	}
	calls = append(calls, call{"POST", "/v1/rollouts?dry_run=true", "a dry run", `{"plan":"standard"}`})
	for _, c := range calls {
		res := ts.do(t, c.method, c.path, "application/json", c.body)
		if c.op == "readyz" {
			if res.status != http.StatusServiceUnavailable {
				t.Errorf("%s %s with the database stopped: %d %s, want 503", c.method, c.path, res.status, res.body)
			}
			continue
		}
		if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") == "" {
			t.Errorf("%s %s (%s) with the database stopped: %d, Retry-After %q: %s; want 503 with Retry-After",
				c.method, c.path, c.op, res.status, res.header.Get("Retry-After"), res.body)
			continue
		}
		if p := res.problem(t); p.Code != wire.CodeStorageUnavailable {
			t.Errorf("%s %s (%s) with the database stopped: code %q, want %s", c.method, c.path, c.op, p.Code, wire.CodeStorageUnavailable)
		}
	}
}
