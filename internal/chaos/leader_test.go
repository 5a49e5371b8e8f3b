package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// leaderConfig runs two replicas' controllers on one lease. The renewal
// interval is short beside the TTL so that the leaderless window after a
// kill — from 2.5 missed renewals until the lease expires — is long enough
// for the test to see it whatever the scheduling; in production it is the
// last half interval of the default 15 s TTL and 5 s renewal, about 2.5 s.
const leaderConfig = `compute:
  default: mock
  mock: {}
controller:
  workers: 4
  lease_ttl: 3s
  lease_renew: 300ms
`

// leaderTenants are created while the first leader provisions them, each
// taking its mock provider leaderLatency per operation.
const (
	leaderTenants = 60
	leaderLatency = "200ms"
)

// TestLeaderKilledAmongReplicas runs two `landlord serve` replicas on one
// PostgreSQL database, kills the leader with SIGKILL while it provisions,
// and checks that the other replica's /readyz turns unready in the
// leaderless window and ready again once it has taken the lease over; that
// its API takes creates all along; and that every tenant, those created
// before and during the window, becomes ready under the new leader. Then
// the killed replica comes back as a follower, the leader is stopped
// gracefully, and it hands the lease over by releasing it.
func TestLeaderKilledAmongReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db := pgtest.NewDatabase(t)
	a := servetest.New(t, servetest.Options{Config: leaderConfig, Database: db})
	b := servetest.New(t, servetest.Options{Config: leaderConfig, Database: db})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	a.Start()
	waitLogged(ctx, t, a, "elected leader", 1)
	b.Start()
	waitReady(ctx, t, b)
	tenants := b.Client().Tenants()

	var creates sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range leaderTenants {
		creates.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			servetest.CreateTenant(ctx, t, tenants, fmt.Sprintf("lead-%02d", i),
				json.RawMessage(fmt.Sprintf(`{"image": "app:1", "x-mock": {"latency": %q}}`, leaderLatency)))
		})
	}
	creates.Wait()
	readyAtKill := waitReadyCount(ctx, t, tenants, leaderTenants/6)

	a.Kill()
	killed := time.Now()
	var unreadyAt, takeoverAt, readyAgainAt time.Duration
	during := false
	for takeoverAt == 0 || readyAgainAt == 0 {
		if ctx.Err() != nil {
			t.Fatalf("no takeover %v after the leader was killed (unready after %v)\n%s", time.Since(killed), unreadyAt, b.Log())
		}
		code := readyz(t, b.Addr())
		since := time.Since(killed)
		if code != http.StatusOK && unreadyAt == 0 {
			unreadyAt = since
			// The API does not need a leader: a create in the window is
			// stored, and provisioned once a leader is back.
			servetest.CreateTenant(ctx, t, tenants, "lead-window", json.RawMessage(`{"image": "app:1"}`))
			during = true
		}
		if takeoverAt == 0 && strings.Contains(b.Log(), "elected leader") {
			takeoverAt = since
		}
		if code == http.StatusOK && takeoverAt != 0 {
			readyAgainAt = since
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !during || unreadyAt > takeoverAt {
		t.Fatalf("the surviving replica's /readyz never failed between the kill and its takeover (%v after the kill)", takeoverAt)
	}
	waitReadyCount(ctx, t, tenants, leaderTenants+1)
	readyIn := time.Since(killed)
	t.Logf("leader killed with %d of %d tenants ready: the replica's /readyz failed %v later, it took the lease over %v after the kill and was ready %v after it; all %d tenants ready %v after the takeover",
		readyAtKill, leaderTenants, unreadyAt.Round(time.Millisecond), takeoverAt.Round(time.Millisecond), readyAgainAt.Round(time.Millisecond),
		leaderTenants+1, (readyIn - takeoverAt).Round(time.Millisecond))

	// A planned restart: the leader stops gracefully and releases the
	// lease, and the follower takes it without waiting for the TTL.
	a.Start()
	waitReady(ctx, t, a)
	b.Stop()
	stopped := time.Now()
	if !strings.Contains(b.Log(), "lease released") {
		t.Errorf("the leader stopped without releasing its lease:\n%s", b.Log())
	}
	waitLogged(ctx, t, a, "elected leader", 2)
	t.Logf("leader stopped gracefully: the other replica led %v after the stop began", time.Since(stopped).Round(time.Millisecond))
	servetest.CreateTenant(ctx, t, a.Client().Tenants(), "lead-after", json.RawMessage(`{"image": "app:1"}`))
	waitReadyCount(ctx, t, a.Client().Tenants(), leaderTenants+2)
}

// waitLogged waits until p's log holds s n times.
func waitLogged(ctx context.Context, t *testing.T, p *servetest.Process, s string, n int) {
	t.Helper()
	for strings.Count(p.Log(), s) < n {
		if ctx.Err() != nil {
			t.Fatalf("%q was logged fewer than %d times:\n%s", s, n, p.Log())
		}
		sleep(ctx, 20*time.Millisecond)
	}
}

// waitReady waits until p's /readyz answers 200.
func waitReady(ctx context.Context, t *testing.T, p *servetest.Process) {
	t.Helper()
	for readyz(t, p.Addr()) != http.StatusOK {
		if ctx.Err() != nil {
			t.Fatalf("/readyz of %s never answered 200:\n%s", p.Addr(), p.Log())
		}
		sleep(ctx, 20*time.Millisecond)
	}
}

// waitReadyCount waits until at least n tenants are ready and returns how
// many there are; a failed tenant fails the test.
func waitReadyCount(ctx context.Context, t *testing.T, tenants *llclient.Tenants, n int) int {
	t.Helper()
	for {
		ready, names := 0, map[string]bool{}
		for tn, err := range tenants.All(ctx, llclient.ListOptions{PageSize: 500}) {
			if err != nil {
				t.Fatalf("list the tenants: %v", err)
			}
			if names[tn.Name] {
				t.Fatalf("tenant %s is listed twice", tn.Name)
			}
			names[tn.Name] = true
			switch tn.Status {
			case llclient.StatusReady:
				ready++
			case llclient.StatusFailed:
				t.Fatalf("tenant %s failed: %s", tn.Name, tn.StatusMessage)
			}
		}
		if ready >= n {
			return ready
		}
		if ctx.Err() != nil {
			t.Fatalf("%d tenants ready, want %d", ready, n)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}
