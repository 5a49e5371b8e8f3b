package controller_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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
}

// cluster is several replicas over one database and one platform.
type cluster struct {
	leaders, maxLeaders atomic.Int32
}

func (cl *cluster) start(t *testing.T, name string, store tenant.Store, shared *env, leases tenant.LeaseStore) *replica {
	t.Helper()
	e := &env{store: store, platform: shared.platform}
	e.restartProvider(t, `{"latency": "1ms"}`)
	el, err := controller.NewElector(leases, controller.ElectorOptions{Identity: name, TTL: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	opts := fast()
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
			return c.Run(ctx, epoch)
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
			a := cl.start(t, "replica-a", s1, shared, s1.(tenant.LeaseStore))
			first := <-a.epochs // a leads first: b is not started yet
			b := cl.start(t, "replica-b", s2, shared, noRelease{s2.(tenant.LeaseStore)})

			ids := shared.createMany(t, "t", 300, appConfig)
			shared.waitStatus(t, 2*time.Minute, tenant.StatusReady, ids...)

			// A leader that stops gives the lease up; the other takes over.
			stopped := time.Now()
			a.stop()
			var second int64
			select {
			case second = <-b.epochs:
			case <-time.After(30 * time.Second):
				t.Fatal("replica-b never took over after replica-a stopped")
			}
			t.Logf("replica-b took over %s after replica-a stopped (lease TTL 600ms)", time.Since(stopped).Round(time.Millisecond))
			if second <= first {
				t.Errorf("the new leader's epoch %d is not above %d", second, first)
			}
			more := shared.createMany(t, "u", 50, appConfig)
			shared.waitStatus(t, time.Minute, tenant.StatusReady, more...)

			// A paused ex-leader's writes are fenced.
			cur := shared.get(t, ids[0])
			_, err := s1.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusReady, Epoch: first})
			if !errors.Is(err, tenant.ErrFenced) {
				t.Errorf("a write under the old epoch = %v, want ErrFenced", err)
			}

			// A leader that dies without releasing is replaced when its
			// lease expires.
			c := cl.start(t, "replica-c", s1, shared, s1.(tenant.LeaseStore))
			died := time.Now()
			b.stop()
			select {
			case third := <-c.epochs:
				t.Logf("replica-c took over %s after replica-b died (lease TTL 600ms)", time.Since(died).Round(time.Millisecond))
				if third <= second {
					t.Errorf("epoch %d after %d", third, second)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("replica-c never took over after replica-b died")
			}

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
