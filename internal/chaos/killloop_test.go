package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// The size of a kill loop: enough tenants that every kill lands among
// requests in flight, few enough for CI.
const (
	killLoopTenants = 1000
	killLoopClients = 16
	killLoopKills   = 20
	// killLoopTimeout bounds one database's run, creates and checks.
	killLoopTimeout = 3 * time.Minute
)

// killLoopConfig runs tenants on the mock provider. Short leases keep the
// run short, not different: a new process leads soon after the one killed
// before it (whose controller lease is not released), so that provisioning
// goes on between kills; and a retry takes over the Idempotency-Key of a
// create killed mid-request after 2 s, not the default 30 s, which made the
// run a multiple of 30 s (31 s to 61 s for 1,000 tenants and 10 kills, as
// clients stalled on several kills in turn).
const killLoopConfig = `compute:
  default: mock
  mock: {}
controller:
  lease_ttl: 2s
api:
  idempotency_lease: 2s
`

// TestKillLoopIdempotentCreates is issue 17's kill -9 loop: retrying
// clients create killLoopTenants tenants, each with its own
// Idempotency-Key, while landlord serve is killed with SIGKILL
// killLoopKills times and started again on the same database. Every client
// must get a 201 (original or replayed) for a tenant that exists with the
// id it was told: none lost, none duplicated, no 409 name_taken and no 500;
// and after the last restart every tenant becomes ready (none orphaned).
func TestKillLoopIdempotentCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Run("sqlite", func(t *testing.T) { killLoop(t, "") })
	t.Run("postgres", func(t *testing.T) { killLoop(t, pgtest.NewDatabase(t)) })
}

// killLoop runs the loop on database (a PostgreSQL URL, or "" for SQLite).
func killLoop(t *testing.T, database string) {
	p := servetest.New(t, servetest.Options{Config: killLoopConfig, Database: database})
	p.Start()
	ctx, cancel := context.WithTimeout(t.Context(), killLoopTimeout)
	defer cancel()

	began := time.Now()
	creator := newRetryingCreator(p.Addr(), killLoopTenants)
	kills, downtime := createKilling(ctx, p, creator)
	createTime := time.Since(began)
	if kills < killLoopKills {
		t.Errorf("landlord was killed %d times, want %d: the clients finished first", kills, killLoopKills)
	}

	results := creator.results()
	checkAnswers(t, results)
	tenants := p.Client().Tenants()
	checkStored(ctx, t, tenants, results)
	readyIn := waitAllReady(ctx, t, tenants)
	checkReplays(ctx, t, creator, results)

	var s struct{ attempts, connErrors, inProgress, retryable, replayed int }
	var maxWait time.Duration
	for _, o := range results {
		s.attempts += o.Attempts
		s.connErrors += o.ConnErrors
		s.inProgress += o.InProgress
		s.retryable += o.Retryable
		if o.Replayed {
			s.replayed++
		}
		maxWait = max(maxWait, o.Waited)
	}
	t.Logf("%d tenants by %d clients, %d kills (down %v in all): creates done in %v, %d requests: %d without an answer, %d × 409 idempotency_in_progress (longest Retry-After %ds, longest wait for one tenant %v), %d × 502–504, %d 201s replayed; all ready %v after the creates",
		killLoopTenants, killLoopClients, kills, downtime.Round(time.Millisecond), createTime.Round(time.Millisecond),
		s.attempts, s.connErrors, s.inProgress, creator.maxRetryAfter.Load(), maxWait, s.retryable, s.replayed, readyIn.Round(time.Millisecond))
}

// createKilling runs killLoopClients clients of creator until they are
// done, killing p with SIGKILL killLoopKills times meanwhile and starting
// it again on the same database; it returns the kills made and the time p
// was down. Kills come at even steps of the clients' progress, each a
// random moment after its step, so that they fall among requests in flight
// whatever the machine's speed.
func createKilling(ctx context.Context, p *servetest.Process, creator *retryingCreator) (kills int, downtime time.Duration) {
	var clients sync.WaitGroup
	for range killLoopClients {
		clients.Go(func() { creator.run(ctx) })
	}
	finished := make(chan struct{})
	go func() { clients.Wait(); close(finished) }()
	for k := 1; k <= killLoopKills; k++ {
		if !waitDone(ctx, finished, creator, int64(killLoopTenants*k/(killLoopKills+1))) {
			break
		}
		time.Sleep(rand.N(20 * time.Millisecond))
		p.Kill()
		kills++
		down := time.Now()
		time.Sleep(rand.N(200 * time.Millisecond)) // clients are refused meanwhile
		p.Start()
		downtime += time.Since(down)
	}
	select {
	case <-finished:
	case <-ctx.Done():
		<-finished
	}
	return kills, downtime
}

// waitDone waits until n tenants are done; false if the clients finished or
// ctx ended first.
func waitDone(ctx context.Context, finished <-chan struct{}, c *retryingCreator, n int64) bool {
	for c.done.Load() < n {
		select {
		case <-finished:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
	return true
}

// checkAnswers checks that every client got a 201 with an id, and nothing
// unexpected on the way (a 500, a 409 name_taken).
func checkAnswers(t *testing.T, results []createOutcome) {
	t.Helper()
	lost, unexpected := 0, 0
	for _, o := range results {
		if o.Err != nil || o.ID == "" {
			lost++
			if lost <= 10 {
				t.Errorf("%s: no 201: %v", o.Name, o.Err)
			}
		}
		for _, u := range o.Unexpected {
			unexpected++
			if unexpected <= 10 {
				t.Errorf("%s: unexpected answer %s", o.Name, u)
			}
		}
	}
	if lost > 0 || unexpected > 0 {
		t.Errorf("%d of %d creates got no 201; %d unexpected answers", lost, len(results), unexpected)
	}
}

// checkStored checks that the tenants stored are exactly those the clients
// were told of, each once, with the id its client was given.
func checkStored(ctx context.Context, t *testing.T, tenants *llclient.Tenants, results []createOutcome) {
	t.Helper()
	stored := map[string]string{} // name → id
	for tn, err := range tenants.All(ctx, llclient.ListOptions{PageSize: 500}) {
		if err != nil {
			t.Fatalf("list the tenants: %v", err)
		}
		if prev, ok := stored[tn.Name]; ok {
			t.Errorf("tenant %s is stored twice: %s and %s", tn.Name, prev, tn.ID)
		}
		stored[tn.Name] = tn.ID
	}
	if len(stored) != len(results) {
		t.Errorf("%d tenants are stored, want %d", len(stored), len(results))
	}
	for _, o := range results {
		if o.ID == "" {
			continue // reported by checkAnswers
		}
		switch id, ok := stored[o.Name]; {
		case !ok:
			t.Errorf("%s: its client was told %s, but no such tenant is stored", o.Name, o.ID)
		case id != o.ID:
			t.Errorf("%s: its client was told %s, but the tenant stored is %s", o.Name, o.ID, id)
		}
	}
}

// waitAllReady waits until every tenant is ready, failing t if one fails
// or some are still not ready when ctx ends, and returns how long it took.
func waitAllReady(ctx context.Context, t *testing.T, tenants *llclient.Tenants) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		notReady := map[string]int{}
		var example string
		for tn, err := range tenants.All(ctx, llclient.ListOptions{PageSize: 500}) {
			if err != nil {
				t.Fatalf("list the tenants: %v", err)
			}
			if tn.Status == llclient.StatusFailed {
				t.Fatalf("tenant %s failed: %+v", tn.Name, tn)
			}
			if tn.Status != llclient.StatusReady {
				notReady[tn.Status]++
				example = tn.Name
			}
		}
		if len(notReady) == 0 {
			return time.Since(began)
		}
		if ctx.Err() != nil {
			t.Fatalf("tenants never became ready (orphaned) %v after the last restart: %v, %s among them", time.Since(began).Round(time.Millisecond), notReady, example)
		}
		sleep(ctx, 250*time.Millisecond)
	}
}

// checkReplays sends every create once more, after the kills: each must be
// answered with its first 201, replayed, with the id its client was told.
func checkReplays(ctx context.Context, t *testing.T, c *retryingCreator, results []createOutcome) {
	t.Helper()
	bad := 0
	for i, o := range results {
		a, err := c.post(ctx, i)
		var problem string
		switch {
		case err != nil:
			problem = err.Error()
		case a.status != 201 || !a.replayed || a.id != o.ID:
			problem = fmt.Sprintf("%s (replayed %t, id %s)", a, a.replayed, a.id)
		}
		if problem != "" {
			bad++
			if bad <= 10 {
				t.Errorf("%s: a retry after the kills got %s, want its 201 with %s replayed", o.Name, problem, o.ID)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d retries after the kills were not replays", bad, len(results))
	}
}
