package api_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// Idempotency-Key on the writes of plans and rollouts: POST /v1/plans,
// POST /v1/plans/{plan}/versions and POST /v1/rollouts.

// CreateRolloutIdempotent dies as CreateIdempotent does (see dyingStore).
func (d *dyingStore) CreateRolloutIdempotent(ctx context.Context, r *fleet.Rollout, members []fleet.Member, res tenant.IdempotentResponse,
	respond func(*fleet.Rollout) (tenant.IdempotentResponse, error)) (*fleet.Rollout, error) {
	d.killPoint(false)
	out, err := d.Store.CreateRolloutIdempotent(ctx, r, members, res, respond)
	d.killPoint(true)
	return out, err
}

// fleetServerOn serves the API, with plans and rollouts, on store: one
// landlord process of several sharing a database. now is the API's clock
// (nil: the time).
func fleetServerOn(t *testing.T, store interface {
	tenant.Store
	fleet.Store
}, now func() time.Time) *testServer {
	t.Helper()
	return newServerOpts(t, api.Options{Store: store, Fleet: store, Now: now})
}

// replayed checks that res is the replay of first: the same status, body
// and Location, with Idempotent-Replayed: true.
func replayed(t *testing.T, what string, first, res response) {
	t.Helper()
	if res.status != first.status || res.header.Get("Idempotent-Replayed") != "true" || string(res.body) != string(first.body) ||
		res.header.Get("Location") != first.header.Get("Location") || res.header.Get("ETag") != first.header.Get("ETag") {
		t.Errorf("%s: %d (replayed %q, Location %q) %s; want the replay of %d (Location %q) %s", what,
			res.status, res.header.Get("Idempotent-Replayed"), res.header.Get("Location"), res.body,
			first.status, first.header.Get("Location"), first.body)
	}
}

// done checks that res is a write done now, not a replay.
func done(t *testing.T, what string, res response, status int) {
	t.Helper()
	if res.status != status || res.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("%s: %d (replayed %q) %s; want %d, done", what, res.status, res.header.Get("Idempotent-Replayed"), res.body, status)
	}
}

func (ts *testServer) rollouts(t *testing.T) []wire.Rollout {
	t.Helper()
	var list wire.RolloutList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts", "", ""), &list)
	return list.Rollouts
}

func (ts *testServer) versions(t *testing.T, plan string) []wire.PlanVersion {
	t.Helper()
	var list wire.PlanVersionList
	mustDecode(t, ts.do(t, "GET", "/v1/plans/"+plan+"/versions", "", ""), &list)
	return list.Versions
}

// A retried publish with its key gets the version it published, not
// another; the key with another body is a 422.
func TestIdempotentPublish(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	const path, body = "/v1/plans/standard/versions", `{"config":{"image":"example.com/app:2"},"message":"app 2"}`
	first := ts.do(t, "POST", path, "application/json", body, "Idempotency-Key", "publish-2")
	done(t, "publish", first, http.StatusCreated)
	var v wire.PlanVersion
	mustDecode(t, first, &v)
	if v.Version != 2 || first.header.Get("Location") != "/v1/plans/standard/versions/2" {
		t.Fatalf("published version %d at %s, want 2", v.Version, first.header.Get("Location"))
	}
	// Whitespace is not a different request.
	replayed(t, "the retry", first, ts.do(t, "POST", path, "application/json", "{ \"config\": {\"image\": \"example.com/app:2\"}, \"message\": \"app 2\" }\n",
		"Idempotency-Key", "publish-2"))
	expectProblem(t, ts.do(t, "POST", path, "application/json", `{"config":{"image":"example.com/app:3"}}`, "Idempotency-Key", "publish-2"),
		422, wire.CodeIdempotencyMismatch, "Idempotency-Key")
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"other"}`, "Idempotency-Key", "publish-2"),
		422, wire.CodeIdempotencyMismatch, "Idempotency-Key")
	if vs := ts.versions(t, "standard"); len(vs) != 2 {
		t.Errorf("%d versions, want 2", len(vs))
	}
	// A publish that is refused frees its key.
	expectProblem(t, ts.do(t, "POST", path, "application/json", `{"config":{"image":7}}`, "Idempotency-Key", "publish-3"),
		422, wire.CodeInvalidComputeConfig, "/config/image")
	done(t, "a publish with the key of a refused one", ts.do(t, "POST", path, "application/json", `{"config":{"image":"a:3"}}`, "Idempotency-Key", "publish-3"), 201)
	// A retry without a key publishes again: nothing tells it from a
	// new publish.
	done(t, "without a key", ts.do(t, "POST", path, "application/json", body), 201)
	if vs := ts.versions(t, "standard"); len(vs) != 4 {
		t.Errorf("%d versions, want 4", len(vs))
	}
}

// A retried create of a plan with its key gets the 201 again, where
// without the key it is a 409 plan_exists.
func TestIdempotentCreatePlan(t *testing.T) {
	ts := newServer(t)
	const body = `{"name":"standard","description":"the usual"}`
	first := ts.do(t, "POST", "/v1/plans", "application/json", body, "Idempotency-Key", "plan-1")
	done(t, "create", first, http.StatusCreated)
	replayed(t, "the retry", first, ts.do(t, "POST", "/v1/plans", "application/json", body, "Idempotency-Key", "plan-1"))
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", body), 409, wire.CodePlanExists, "/name")
	// Refused for the name taken, a create frees its key.
	expectProblem(t, ts.do(t, "POST", "/v1/plans", "application/json", body, "Idempotency-Key", "plan-2"), 409, wire.CodePlanExists, "/name")
	done(t, "another create with the key", ts.do(t, "POST", "/v1/plans", "application/json", `{"name":"gold"}`, "Idempotency-Key", "plan-2"), 201)
}

// A retried start with its key gets the rollout it started, not a 409
// rollout_active; a dry run with a key stores nothing and frees it. The
// answer to the start, kept for the key, is the rollout as GET shows it
// then: its members' counts and those waiting for their windows.
func TestIdempotentRolloutStart(t *testing.T) {
	ts := newServer(t)
	fleetOf(t, ts, 3)
	ts.closeWindow(t, "t00") // the canary waits for its window
	const body = `{"plan":"standard","waves":[{"name":"canary","selector":{"ring":"canary"},"count":1},{"name":"rest"}]}`
	for range 2 {
		done(t, "a dry run", ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", body, "Idempotency-Key", "start-1"), 200)
	}
	if ros := ts.rollouts(t); len(ros) != 0 {
		t.Fatalf("a dry run started %d rollouts", len(ros))
	}

	first := ts.do(t, "POST", "/v1/rollouts", "application/json", body, "Idempotency-Key", "start-1")
	done(t, "start", first, http.StatusCreated)
	var ro wire.Rollout
	mustDecode(t, first, &ro)
	if first.header.Get("Location") != "/v1/rollouts/"+ro.ID || first.header.Get("ETag") != fmt.Sprintf(`"%d"`, ro.Version) {
		t.Errorf("Location %q, ETag %q", first.header.Get("Location"), first.header.Get("ETag"))
	}
	var got wire.Rollout
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID, "", ""), &got)
	if diff := cmp.Diff(got, ro); diff != "" {
		t.Errorf("the start answered another rollout than GET shows (-GET +start):\n%s", diff)
	}
	if len(ro.Waiting) != 1 || ro.Waiting[0].TenantName != "t00" || ro.Counts["pending"] != 3 {
		t.Errorf("started %+v, want 3 pending and t00 waiting", ro)
	}

	replayed(t, "the retry", first, ts.do(t, "POST", "/v1/rollouts", "application/json", body, "Idempotency-Key", "start-1"))
	expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", `{"plan":"standard"}`, "Idempotency-Key", "start-1"),
		422, wire.CodeIdempotencyMismatch, "Idempotency-Key")
	expectProblem(t, ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", body, "Idempotency-Key", "start-1"),
		422, wire.CodeIdempotencyMismatch, "Idempotency-Key")
	expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", body), 409, wire.CodeRolloutActive)
	// Refused as the plan's rollout is active, a start frees its key.
	expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", body, "Idempotency-Key", "start-2"), 409, wire.CodeRolloutActive)
	if again := ts.do(t, "POST", "/v1/rollouts", "application/json", body, "Idempotency-Key", "start-2"); again.status != 409 || again.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the refused start again: %d (replayed %q), want a 409 done again", again.status, again.header.Get("Idempotent-Replayed"))
	}
	if ros := ts.rollouts(t); len(ros) != 1 || ros[0].ID != ro.ID {
		t.Errorf("rollouts %+v, want %s alone", ros, ro.ID)
	}
	// The replay is the answer as it was: the rollout has moved on since.
	if res := ts.do(t, "POST", "/v1/rollouts/"+ro.ID+"/pause", "", ""); res.status != 200 {
		t.Fatalf("pause: %d %s", res.status, res.body)
	}
	replayed(t, "the retry after a pause", first, ts.do(t, "POST", "/v1/rollouts", "application/json", body, "Idempotency-Key", "start-1"))
}

// Twenty requests at once with one key and one body: one publishes (or
// starts); each other gets that 201 again or a 409
// idempotency_in_progress, never a second version or a 409
// rollout_active.
func TestIdempotentFleetConcurrent(t *testing.T) {
	tests := []struct {
		name, path, body string
		stored           func(t *testing.T, ts *testServer) int
	}{
		{"publish", "/v1/plans/standard/versions", `{"config":{"image":"example.com/app:3"}}`,
			func(t *testing.T, ts *testServer) int { return len(ts.versions(t, "standard")) - 2 }},
		{"start", "/v1/rollouts", `{"plan":"standard"}`,
			func(t *testing.T, ts *testServer) int { return len(ts.rollouts(t)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newServer(t)
			fleetOf(t, ts, 3)
			stored := atOnce(t, ts, 20, tt.path, tt.body)
			if got := tt.stored(t, ts); got != 1 {
				t.Errorf("%d stored, want 1", got)
			}
			replayed(t, "a retry afterwards", stored, ts.do(t, "POST", tt.path, "application/json", tt.body, "Idempotency-Key", "k-1"))
		})
	}
}

// killedStart starts threeWaves with key k-1, on a landlord on a fresh
// SQLite file at path with fleetOf(3), and "kills" it at its kill point:
// after the key is reserved, before the rollout commits, or (afterCommit)
// once it has. The request hangs until dying.wake; first gets its answer
// then.
func killedStart(t *testing.T, afterCommit bool) (path string, dying *dyingStore, first <-chan response) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "landlord.db")
	dying = newDyingStore(t, openSQLite(t, path, new(atomic.Int64)), afterCommit)
	ts := fleetServerOn(t, dying, nil)
	fleetOf(t, ts, 3)
	first = postAsync(t, ts, "/v1/rollouts", threeWaves)
	<-dying.killed
	return path, dying, first
}

// A landlord killed right after a start with an Idempotency-Key committed,
// before it answered: the retry, to the restarted landlord, gets the 201 of
// that start again, with its rollout, never 409 rollout_active.
func TestIdempotentStartKilledAfterCommit(t *testing.T) {
	path, dying, first := killedStart(t, true)

	restarted := fleetServerOn(t, openSQLite(t, path, new(atomic.Int64)), nil)
	retry := restarted.do(t, "POST", "/v1/rollouts", "application/json", threeWaves, "Idempotency-Key", "k-1")
	if retry.status != 201 || retry.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry: %d %s; want the 201 replayed", retry.status, retry.body)
	}
	var ro wire.Rollout
	mustDecode(t, retry, &ro)
	if ros := restarted.rollouts(t); len(ros) != 1 || ros[0].ID != ro.ID || retry.header.Get("Location") != "/v1/rollouts/"+ro.ID {
		t.Errorf("the retry answered rollout %s (Location %s); stored: %+v", ro.ID, retry.header.Get("Location"), ros)
	}
	dying.wake()
	if r := <-first; r.status != 201 || string(r.body) != string(retry.body) {
		t.Errorf("the first request, let go: %d %s", r.status, r.body)
	}
}

// A landlord killed after reserving the key, before its start committed:
// after the lease a retry takes the key over and starts the rollout. The
// killed request, should it come back, starts nothing and answers with the
// taker's response — not with a 409 rollout_active for the taker's
// rollout.
func TestIdempotentStartKilledBeforeCommit(t *testing.T) {
	path, dying, first := killedStart(t, false)

	var later atomic.Int64
	restarted := fleetServerOn(t, openSQLite(t, path, &later), clock(&later))
	retry := restarted.do(t, "POST", "/v1/rollouts", "application/json", threeWaves, "Idempotency-Key", "k-1")
	if p := retry.problem(t); retry.status != 409 || p.Code != wire.CodeIdempotencyPending || retry.header.Get("Retry-After") != "1" {
		t.Fatalf("a retry within the lease: %d %s (Retry-After %q); want 409 %s", retry.status, retry.body, retry.header.Get("Retry-After"), wire.CodeIdempotencyPending)
	}
	later.Store(int64(tenant.IdempotencyLease + time.Second))
	took := restarted.do(t, "POST", "/v1/rollouts", "application/json", threeWaves, "Idempotency-Key", "k-1")
	done(t, "a retry after the lease", took, http.StatusCreated)

	dying.wake()
	replayed(t, "the killed request, back", took, <-first)
	if ros := restarted.rollouts(t); len(ros) != 1 {
		t.Errorf("%d rollouts, want 1", len(ros))
	}
}

// A fleet store that cannot keep responses is refused: a key on its writes
// would be a promise the server cannot keep.
func TestFleetWithoutIdempotency(t *testing.T) {
	store := openSQLite(t, filepath.Join(t.TempDir(), "landlord.db"), new(atomic.Int64))
	_, err := api.New(api.Options{Store: store, Fleet: struct{ fleet.Store }{store}, Compute: mockCompute(t)})
	if err == nil {
		t.Fatal("a fleet store without fleet.IdempotencyStore was accepted")
	}
}
