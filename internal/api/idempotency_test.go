package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// newServerOn serves the API on store, with the mock provider: one landlord
// process of several sharing a database. now is the API's clock (nil: the
// time).
func newServerOn(t *testing.T, store tenant.Store, now func() time.Time) *testServer {
	t.Helper()
	return newServerOpts(t, api.Options{Store: store, Now: now})
}

// newServerOpts serves the API with opts, on the mock provider.
func newServerOpts(t *testing.T, opts api.Options) *testServer {
	t.Helper()
	opts.Compute, opts.Logger = mockCompute(t), slog.New(slog.DiscardHandler)
	s, err := api.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &testServer{Server: ts, store: opts.Store}
}

// mockCompute is compute with the mock provider only.
func mockCompute(t *testing.T) *compute.Manager {
	t.Helper()
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return computetest.Manager(t, p, compute.ManagerOptions{})
}

// clock is the time, offset ahead.
func clock(offset *atomic.Int64) func() time.Time {
	return func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
}

// openSQLite opens the database at path with a clock running offset ahead.
func openSQLite(t *testing.T, path string, offset *atomic.Int64) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Now: clock(offset)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dyingStore is a landlord killed in the middle of a create with an
// Idempotency-Key: at its kill point — before the create's transaction, or
// after its commit — the request stops, as in a process killed there: it
// never answers and never cleans up. It goes on only when the test ends it
// (resume), so that its server can close.
type dyingStore struct {
	*sqlite.Store
	afterCommit bool
	killed      chan struct{}
	resume      chan struct{}
}

func newDyingStore(t *testing.T, s *sqlite.Store, afterCommit bool) *dyingStore {
	d := &dyingStore{Store: s, afterCommit: afterCommit, killed: make(chan struct{}), resume: make(chan struct{})}
	t.Cleanup(d.wake)
	return d
}

func (d *dyingStore) wake() {
	select {
	case <-d.resume:
	default:
		close(d.resume)
	}
}

// killPoint stops the request here when this is its kill point: before
// the write's transaction (afterCommit false) or after its commit.
func (d *dyingStore) killPoint(afterCommit bool) {
	if d.afterCommit == afterCommit {
		close(d.killed)
		<-d.resume
	}
}

func (d *dyingStore) CreateIdempotent(ctx context.Context, t *tenant.Tenant, actor string, res tenant.IdempotentResponse,
	respond func(*tenant.Tenant) (tenant.IdempotentResponse, error)) (*tenant.Tenant, error) {
	d.killPoint(false)
	out, err := d.Store.CreateIdempotent(ctx, t, actor, res, respond)
	d.killPoint(true)
	return out, err
}

const acmeBody = `{"name":"acme","compute_config":{"image":"a"}}`

// postAsync sends a POST of body to path with Idempotency-Key k-1 and
// returns its response when it comes.
func postAsync(t *testing.T, ts *testServer, path, body string) <-chan response {
	out := make(chan response, 1)
	go func() {
		out <- ts.do(t, "POST", path, "application/json", body, "Idempotency-Key", "k-1")
	}()
	return out
}

func mustCount(t *testing.T, ts *testServer, want int) {
	t.Helper()
	var list wire.TenantList
	if err := json.Unmarshal(ts.do(t, "GET", "/v1/tenants", "", "").body, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tenants) != want {
		t.Errorf("%d tenants stored, want %d", len(list.Tenants), want)
	}
}

// A landlord killed right after a create with an Idempotency-Key committed,
// before it answered: the retry, to the restarted landlord, gets the 201 of
// that create again, with its tenant id, never 409 name_taken. (Before the
// tenant and its response were one transaction, the kill point between them
// made the retry create again, and fail with name_taken.)
func TestIdempotentCreateKilledAfterCommit(t *testing.T) {
	path, dying, first := killedCreate(t, true)

	restarted := newServerOn(t, openSQLite(t, path, new(atomic.Int64)), nil)
	retry := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
	if retry.status != 201 || retry.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry: %d %s; want the 201 replayed", retry.status, retry.body)
	}
	stored := restarted.do(t, "GET", "/v1/tenants/acme", "", "").tenant(t)
	if got := retry.tenant(t); got.ID != stored.ID || retry.header.Get("Location") != "/v1/tenants/"+stored.ID {
		t.Errorf("the retry answered tenant %s (Location %s), want %s", got.ID, retry.header.Get("Location"), stored.ID)
	}
	mustCount(t, restarted, 1)

	dying.wake()
	if r := <-first; r.status != 201 || r.tenant(t).ID != stored.ID {
		t.Errorf("the first request, let go: %d %s", r.status, r.body)
	}
}

// killedCreate sends acme's create with key k-1 to a landlord on a fresh
// SQLite file at path, and "kills" it at its kill point: after the key is
// reserved, before the tenant commits, or (afterCommit) once it has. The
// request hangs until dying.wake; first gets its answer then.
func killedCreate(t *testing.T, afterCommit bool) (path string, dying *dyingStore, first <-chan response) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "landlord.db")
	dying = newDyingStore(t, openSQLite(t, path, new(atomic.Int64)), afterCommit)
	first = postAsync(t, newServerOn(t, dying, nil), "/v1/tenants", acmeBody)
	<-dying.killed
	return path, dying, first
}

// A landlord killed after reserving the key, before its create committed:
// within the lease a retry is told the request is in progress (409 with
// Retry-After); after it, the retry takes the key over and creates the
// tenant. The killed request, should it come back, cannot complete the key:
// it answers with the taker's response, and one tenant exists.
func TestIdempotentCreateKilledBeforeCommit(t *testing.T) {
	path, dying, first := killedCreate(t, false)

	var later atomic.Int64
	restarted := newServerOn(t, openSQLite(t, path, &later), clock(&later))
	// While the reservation is young its request is taken to be working:
	// retry in a second; later, when the lease lapses.
	for _, tt := range []struct {
		age        time.Duration
		retryAfter string
	}{{0, "1"}, {10 * time.Second, "20"}, {25 * time.Second, "5"}} {
		later.Store(int64(tt.age))
		retry := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
		if p := retry.problem(t); retry.status != 409 || p.Code != wire.CodeIdempotencyPending || retry.header.Get("Retry-After") != tt.retryAfter {
			t.Fatalf("a retry %v into the lease: %d %s, Retry-After %q; want 409 %s with Retry-After %s",
				tt.age, retry.status, retry.body, retry.header.Get("Retry-After"), wire.CodeIdempotencyPending, tt.retryAfter)
		}
	}
	other := restarted.do(t, "POST", "/v1/tenants", "application/json", `{"name":"beta","compute_config":{"image":"a"}}`, "Idempotency-Key", "k-1")
	if p := other.problem(t); other.status != 422 || p.Code != wire.CodeIdempotencyMismatch {
		t.Errorf("another body within the lease: %d %s", other.status, other.body)
	}
	mustCount(t, restarted, 0)

	later.Store(int64(tenant.IdempotencyLease + time.Second))
	took := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
	if took.status != 201 || took.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("a retry after the lease: %d %s (replayed %q); want the create done", took.status, took.body, took.header.Get("Idempotent-Replayed"))
	}
	created := took.tenant(t)

	dying.wake()
	r := <-first
	if r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" || r.tenant(t).ID != created.ID {
		t.Errorf("the killed request, back: %d %s; want the taker's 201, replayed", r.status, r.body)
	}
	again := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || again.tenant(t).ID != created.ID {
		t.Errorf("a retry after the takeover: %d %s", again.status, again.body)
	}
	mustCount(t, restarted, 1)
}

// Options.IdempotencyLease sets how long the reservation of a request that
// died holds its key: Retry-After counts down to it, and a retry after it
// takes the key over. A lease out of its bounds is refused.
func TestIdempotencyLeaseConfigured(t *testing.T) {
	path, dying, first := killedCreate(t, false)

	var later atomic.Int64
	restarted := newServerOpts(t, api.Options{Store: openSQLite(t, path, &later), Now: clock(&later), IdempotencyLease: 5 * time.Second})
	later.Store(int64(3 * time.Second))
	retry := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
	if retry.status != 409 || retry.header.Get("Retry-After") != "2" {
		t.Fatalf("a retry 3s into a 5s lease: %d %s, Retry-After %q; want 409 with Retry-After 2", retry.status, retry.body, retry.header.Get("Retry-After"))
	}
	later.Store(int64(6 * time.Second))
	took := restarted.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1")
	if took.status != 201 || took.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("a retry after the 5s lease: %d %s (replayed %q); want the create done", took.status, took.body, took.header.Get("Idempotent-Replayed"))
	}
	dying.wake()
	<-first
	mustCount(t, restarted, 1)

	for _, lease := range []time.Duration{500 * time.Millisecond, time.Hour} {
		if _, err := api.New(api.Options{Store: openSQLite(t, path, &later), Compute: mockCompute(t), IdempotencyLease: lease}); err == nil {
			t.Errorf("a lease of %v was accepted", lease)
		}
	}
}

// atOnce sends n requests at once to path, with one body and one
// Idempotency-Key, and checks that one of them did the write (a 201, not
// replayed) and each other got that 201 again or a 409
// idempotency_in_progress with Retry-After. It returns the one that wrote.
func atOnce(t *testing.T, ts *testServer, n int, path, body string) response {
	t.Helper()
	results := make([]response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = ts.do(t, "POST", path, "application/json", body, "Idempotency-Key", "k-1") })
	}
	wg.Wait()
	var stored []response
	replays, inProgress := 0, 0
	for i, r := range results {
		switch {
		case r.status == 201 && r.header.Get("Idempotent-Replayed") == "":
			stored = append(stored, r)
		case r.status == 201:
			replays++
		case r.status == 409 && r.problem(t).Code == wire.CodeIdempotencyPending && r.header.Get("Retry-After") != "":
			inProgress++
		default:
			t.Errorf("request %d: %d %s (Retry-After %q)", i, r.status, r.body, r.header.Get("Retry-After"))
		}
	}
	if len(stored) != 1 {
		t.Fatalf("%d requests stored, want 1", len(stored))
	}
	for i, r := range results {
		if r.status == 201 && string(r.body) != string(stored[0].body) {
			t.Errorf("request %d answered another: %s", i, r.body)
		}
	}
	t.Logf("of %d: 1 stored, %d replayed, %d in progress", n, replays, inProgress)
	return stored[0]
}

// Twenty requests at once with one key and one body: one creates the
// tenant; each other gets that 201 again or a 409 idempotency_in_progress
// with Retry-After, never name_taken.
func TestIdempotentCreateConcurrent(t *testing.T) {
	ts := newServer(t)
	created := atOnce(t, ts, 20, "/v1/tenants", acmeBody)
	mustCount(t, ts, 1)
	if r := ts.do(t, "POST", "/v1/tenants", "application/json", acmeBody, "Idempotency-Key", "k-1"); r.status != 201 || string(r.body) != string(created.body) {
		t.Errorf("a retry afterwards: %d %s", r.status, r.body)
	}
}

// A request that stores nothing — it was refused, or lost the name to
// another request, or was a dry run — frees its key: a retry with the key
// is done again, whatever its body.
func TestIdempotencyKeyFreedByFailure(t *testing.T) {
	ts := newServer(t)
	ts.create(t, "taken", `{"image":"a"}`)
	tests := []struct {
		name, query, body string
		status            int
	}{
		{"invalid", "", `{"name":"Not A Name","compute_config":{"image":"a"}}`, 400},
		{"name taken by another request", "", `{"name":"taken","compute_config":{"image":"a"}}`, 409},
		{"dry run", "?dry_run=true", `{"name":"free","compute_config":{"image":"a"}}`, 200},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprint("k-", i)
			for range 2 {
				r := ts.do(t, "POST", "/v1/tenants"+tt.query, "application/json", tt.body, "Idempotency-Key", key)
				if r.status != tt.status || r.header.Get("Idempotent-Replayed") != "" {
					t.Fatalf("%d %s (replayed %q); want %d, done", r.status, r.body, r.header.Get("Idempotent-Replayed"), tt.status)
				}
			}
			name := []string{"after-invalid", "after-taken", "free"}[i]
			r := ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"`+name+`","compute_config":{"image":"a"}}`, "Idempotency-Key", key)
			if r.status != 201 {
				t.Errorf("another request with the key: %d %s; want it done", r.status, r.body)
			}
		})
	}
}
