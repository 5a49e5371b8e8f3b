package controller_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// replica is one landlord process: its own store connection, provider and
// controller, campaigning for the lease.
type replica struct {
	name   string
	env    *env
	cancel context.CancelFunc
	done   chan struct{}
	epochs chan int64 // each epoch it starts leading under
	killed atomic.Bool
}

// cluster is several replicas over one database and one platform.
type cluster struct {
	leaders, maxLeaders atomic.Int32
}

func (cl *cluster) start(t *testing.T, name string, store tenant.Store, shared *env, leases tenant.LeaseStore, latency time.Duration) *replica {
	t.Helper()
	e := &env{store: store, platform: shared.platform}
	e.restartProvider(t, fmt.Sprintf(`{"latency": %q}`, latency))
	opts := fast()
	el, err := controller.NewElector(leases, controller.ElectorOptions{Identity: name, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	opts.Identity = name
	c := controller.New(store, e.manager, opts)
	runCtx, cancel := context.WithCancel(ctx)
	r := &replica{name: name, env: e, cancel: cancel, done: make(chan struct{}), epochs: make(chan int64, 16)}
	go func() {
		defer close(r.done)
		err := el.Run(runCtx, func(ctx context.Context, epoch int64) error {
			n := cl.leaders.Add(1)
			defer cl.leaders.Add(-1)
			for m := cl.maxLeaders.Load(); n > m && !cl.maxLeaders.CompareAndSwap(m, n); m = cl.maxLeaders.Load() {
			}
			r.epochs <- epoch
			// A killed replica's work stops with it.
			killCtx, cancelKill := context.WithCancelCause(context.WithoutCancel(ctx))
			defer cancelKill(nil)
			stopKill := context.AfterFunc(ctx, func() {
				if r.killed.Load() {
					cancelKill(tenant.ErrLeaseLost)
				} else {
					cancelKill(context.Cause(ctx))
				}
			})
			defer stopKill()
			return c.Run(killCtx, epoch)
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// kill stops the replica as a crash would: in-flight work is cut off and
// (with noRelease) the lease is not given up.
func (r *replica) kill() {
	r.killed.Store(true)
	r.stop()
}

// waitCalls waits until provisioning has started for n of the tenants.
func waitCalls(t *testing.T, e *env, ids []string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		started := 0
		for _, id := range ids {
			if e.mock.Calls(id, mock.OpProvision) > 0 {
				started++
			}
		}
		if started >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("provisioning started for only %d of %d tenants", started, len(ids))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitReady waits until at least n of the tenants are ready.
func waitReady(t *testing.T, e *env, ids []string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ready := 0
		for _, id := range ids {
			if e.get(t, id).Status == tenant.StatusReady {
				ready++
			}
		}
		if ready >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d tenants ready", ready, len(ids))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// currentLease reads the controller lease without changing it.
func currentLease(t *testing.T, s tenant.Store) tenant.Lease {
	t.Helper()
	l, err := s.(tenant.LeaseStore).AcquireLease(ctx, tenant.ControllerLease, "observer", time.Nanosecond)
	if !errors.Is(err, tenant.ErrLeaseHeld) {
		t.Fatalf("the controller lease is free: %+v, %v", l, err)
	}
	return l
}

const ttl = time.Second

// noRelease is a LeaseStore whose holder dies without giving the lease up.
type noRelease struct{ tenant.LeaseStore }

func (noRelease) ReleaseLease(context.Context, string, string, int64) error {
	return errors.New("the process died")
}

func TestOneLeaderAtATime(t *testing.T) {
	for _, db := range []struct {
		name string
		open func(t *testing.T) (tenant.Store, tenant.Store)
	}{
		{"sqlite", func(t *testing.T) (tenant.Store, tenant.Store) {
			// Two processes on one file.
			path := filepath.Join(t.TempDir(), "landlord.db")
			var stores [2]tenant.Store
			for i := range stores {
				s, err := sqlite.Open(ctx, path, sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			return stores[0], stores[1]
		}},
		{"postgres", func(t *testing.T) (tenant.Store, tenant.Store) {
			url := pgtest.NewDatabase(t)
			var stores [2]tenant.Store
			for i := range stores {
				s, err := postgres.Open(ctx, url, postgres.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			return stores[0], stores[1]
		}},
	} {
		t.Run(db.name, func(t *testing.T) {
			s1, s2 := db.open(t)
			shared := newEnv(t, s1, ``)
			cl := &cluster{}
			// a's provider calls take longer than the lease TTL.
			a := cl.start(t, "replica-a", s1, shared, s1.(tenant.LeaseStore), 3*ttl/2)
			first := <-a.epochs // a leads first: b is not started yet
			b := cl.start(t, "replica-b", s2, shared, noRelease{s2.(tenant.LeaseStore)}, 50*time.Millisecond)

			// Stop the leader while its calls are in flight: they finish,
			// under its lease, before the other starts.
			ids := shared.createMany(t, "t", 32, appConfig)
			waitCalls(t, shared, ids, 16)
			stopped := time.Now()
			a.stop()
			var second int64
			select {
			case second = <-b.epochs:
			case <-time.After(30 * time.Second):
				t.Fatal("replica-b never took over after replica-a stopped")
			}
			t.Logf("replica-b took over %s after replica-a stopped (lease TTL %s)", time.Since(stopped).Round(time.Millisecond), ttl)
			if second <= first {
				t.Errorf("the new leader's epoch %d is not above %d", second, first)
			}
			if lease := currentLease(t, s2); lease.Holder != "replica-b" {
				t.Errorf("lease held by %q, want replica-b", lease.Holder)
			}
			shared.waitStatus(t, 2*time.Minute, tenant.StatusReady, ids...)

			// A paused ex-leader's writes are fenced.
			cur := shared.get(t, ids[0])
			_, err := s1.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusReady, Epoch: first})
			if !errors.Is(err, tenant.ErrFenced) {
				t.Errorf("a write under the old epoch = %v, want ErrFenced", err)
			}

			// A leader that dies in the middle of its work, without
			// releasing, is replaced when its lease expires.
			more := shared.createMany(t, "u", 100, appConfig)
			waitReady(t, shared, more, 10)
			c := cl.start(t, "replica-c", s1, shared, s1.(tenant.LeaseStore), 50*time.Millisecond)
			died := time.Now()
			b.kill()
			select {
			case third := <-c.epochs:
				t.Logf("replica-c took over %s after replica-b died (lease TTL %s)", time.Since(died).Round(time.Millisecond), ttl)
				if third <= second {
					t.Errorf("epoch %d after %d", third, second)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("replica-c never took over after replica-b died")
			}
			shared.waitStatus(t, 2*time.Minute, tenant.StatusReady, more...)

			if n := cl.maxLeaders.Load(); n != 1 {
				t.Errorf("%d replicas led at the same time", n)
			}
			if n := shared.mock.Overlaps(); n != 0 {
				t.Errorf("%d provider operations ran for a tenant while another was running for it", n)
			}
			if n := shared.mock.Workloads(); n != len(ids)+len(more) {
				t.Errorf("%d workloads for %d tenants", n, len(ids)+len(more))
			}
		})
	}
}

// The elector refuses lease timings a leader could not keep.
func TestElectorRefusesLeaseTimingsOutOfBounds(t *testing.T) {
	for _, tt := range []struct{ ttl, renew time.Duration }{
		{500 * time.Millisecond, 0},
		{time.Hour, 0},
		{10 * time.Second, 5 * time.Second},
		{10 * time.Second, time.Millisecond},
	} {
		if _, err := controller.NewElector(nil, controller.ElectorOptions{Identity: "x", TTL: tt.ttl, RenewEvery: tt.renew}); err == nil {
			t.Errorf("NewElector with TTL %v, renew every %v: no error", tt.ttl, tt.renew)
		}
	}
	if _, err := controller.NewElector(nil, controller.ElectorOptions{Identity: "x", TTL: 2 * time.Second, RenewEvery: 500 * time.Millisecond}); err != nil {
		t.Errorf("NewElector with TTL 2s, renew every 500ms: %v", err)
	}
}

// memLeases is a LeaseStore in memory, with the stores' own rules.
type memLeases struct {
	mu  sync.Mutex
	cur *tenant.Lease
}

func (m *memLeases) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (tenant.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	next, err := tenant.ApplyLease(m.cur, name, holder, ttl, time.Now())
	if err == nil {
		m.cur = &next
	}
	return next, err
}

func (m *memLeases) RenewLease(_ context.Context, name, holder string, epoch int64, ttl time.Duration) (tenant.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil || m.cur.Holder != holder || m.cur.Epoch != epoch || !m.cur.ExpiresAt.After(time.Now()) {
		return tenant.Lease{}, tenant.ErrLeaseLost
	}
	next, err := tenant.ApplyLease(m.cur, name, holder, ttl, time.Now())
	if err == nil {
		m.cur = &next
	}
	return next, err
}

func (m *memLeases) ReleaseLease(context.Context, string, string, int64) error { return nil }

// A replica that sees the leader's lease stop moving (the leader died
// without releasing it) reports no leader until one takes over, so that
// its readiness check fails through the leaderless window.
func TestLeaderlessWindowIsSeen(t *testing.T) {
	leases := &memLeases{}
	// The dead leader: it took the lease and will never renew it.
	if _, err := leases.AcquireLease(ctx, tenant.ControllerLease, "dead", 3*time.Second); err != nil {
		t.Fatal(err)
	}
	el, err := controller.NewElector(leases, controller.ElectorOptions{Identity: "follower", TTL: 3 * time.Second, RenewEvery: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- el.Run(runCtx, func(ctx context.Context, _ int64) error { <-ctx.Done(); return nil })
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func(string, bool) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if holder, ok := el.Leader(); cond(holder, ok) {
				return
			}
			if time.Now().After(deadline) {
				holder, ok := el.Leader()
				t.Fatalf("never %s: Leader() = %q, %v", what, holder, ok)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("saw the dead leader", func(h string, ok bool) bool { return ok && h == "dead" })
	waitFor("reported no leader while the dead one's lease ran out", func(_ string, ok bool) bool { return !ok })
	waitFor("took over", func(h string, ok bool) bool { return ok && h == "follower" })
}
