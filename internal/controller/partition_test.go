package controller_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// ttl is the lease TTL of the tests with several replicas: short, so that
// a dead replica's partitions move quickly.
const ttl = time.Second

// faultyLeases is a replica's view of the leases: after kill every call
// fails, as for a process that died or lost the database (its leases
// expire, nothing is released); refuse makes it fail to acquire one
// partition; blind hides lost leases from it.
type faultyLeases struct {
	tenant.LeaseStore
	dead   atomic.Bool
	blind  atomic.Bool
	refuse atomic.Int32 // 1 + the partition it cannot acquire; 0 for none
}

var errDead = errors.New("the replica is dead")

func (f *faultyLeases) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (tenant.Lease, error) {
	if p, ok := tenant.ParsePartitionLease(name); f.dead.Load() || ok && int32(p)+1 == f.refuse.Load() {
		return tenant.Lease{}, errDead
	}
	return f.LeaseStore.AcquireLease(ctx, name, holder, ttl)
}

func (f *faultyLeases) RenewLeases(ctx context.Context, holder string, held []tenant.Lease, ttl time.Duration) ([]tenant.Lease, error) {
	if f.dead.Load() {
		return nil, errDead
	}
	lost, err := f.LeaseStore.RenewLeases(ctx, holder, held, ttl)
	if f.blind.Load() {
		return nil, err
	}
	return lost, err
}

func (f *faultyLeases) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	if f.dead.Load() {
		return errDead
	}
	return f.LeaseStore.ReleaseLease(ctx, name, holder, epoch)
}

func (f *faultyLeases) ListLeases(ctx context.Context, prefix string) ([]tenant.Lease, time.Time, error) {
	if f.dead.Load() {
		return nil, time.Time{}, errDead
	}
	return f.LeaseStore.ListLeases(ctx, prefix)
}

// replica is one landlord process: its own store connection, provider and
// controller over the shared database and platform.
type replica struct {
	name   string
	c      *controller.Controller
	env    *env
	leases *faultyLeases
	cancel context.CancelFunc
	done   chan struct{}
}

// cluster is replicas over one database and one platform, opening a store
// connection for each.
type cluster struct {
	t      *testing.T
	open   func(t *testing.T) tenant.Store
	shared *env
}

func newCluster(t *testing.T, db string, latency time.Duration) *cluster {
	var open func(t *testing.T) tenant.Store
	switch db {
	case "sqlite":
		// Processes on one file.
		path := filepath.Join(t.TempDir(), "landlord.db")
		open = func(t *testing.T) tenant.Store {
			s, err := sqlite.Open(ctx, path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	default:
		url := pgtest.NewDatabase(t)
		open = func(t *testing.T) tenant.Store {
			s, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 16})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	cl := &cluster{t: t, open: open}
	cl.shared = newEnv(t, open(t), fmt.Sprintf(`{"latency": %q}`, latency))
	return cl
}

// start runs a replica whose provider calls take latency.
func (cl *cluster) start(name string, latency time.Duration, tune func(*controller.Options)) *replica {
	t := cl.t
	t.Helper()
	store := cl.open(t)
	e := &env{store: store, platform: cl.shared.platform}
	e.restartProvider(t, fmt.Sprintf(`{"latency": %q}`, latency))
	leases := &faultyLeases{LeaseStore: store.(tenant.LeaseStore)}
	opts := fast()
	opts.Identity = name
	opts.Leases = leases
	opts.LeaseTTL = ttl
	opts.LeaseRenew = ttl / 5
	if tune != nil {
		tune(&opts)
	}
	c := controller.New(store, e.manager, opts)
	runCtx, cancel := context.WithCancel(ctx)
	r := &replica{name: name, c: c, env: e, leases: leases, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := c.Run(runCtx); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

// stop stops the replica gracefully.
func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// kill makes the replica die: its lease calls fail from now on, so that its
// leases expire unreleased, and it stops as a replica that cannot renew
// does, stepping down at 4/5 of the TTL.
func (r *replica) kill() {
	r.leases.dead.Store(true)
	r.cancel()
}

// holders reads who holds each partition's lease now (live leases only).
func holders(t *testing.T, s tenant.Store) []string {
	t.Helper()
	leases, now, err := s.(tenant.LeaseStore).ListLeases(ctx, tenant.PartitionLeasePrefix)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, tenant.Partitions)
	for p, l := range tenant.PartitionHolders(leases, now) {
		if l != nil {
			out[p] = l.Holder
		}
	}
	return out
}

// waitHolders waits until the partitions are held as want says (by
// holder), and returns how long that took.
func waitHolders(t *testing.T, s tenant.Store, what string, want func(holders []string) bool) time.Duration {
	t.Helper()
	start := time.Now()
	poll.Until(t, what, 30*ttl, func() (bool, string) {
		h := holders(t, s)
		return want(h), fmt.Sprintf("holders %v", h)
	})
	return time.Since(start)
}

// balanced says each of the names holds its share of the partitions and
// nobody else holds any.
func balanced(names ...string) func([]string) bool {
	return func(h []string) bool {
		counts := map[string]int{}
		for _, holder := range h {
			counts[holder]++
		}
		for _, n := range names {
			if c := counts[n]; c < tenant.Partitions/len(names) || c > (tenant.Partitions+len(names)-1)/len(names) {
				return false
			}
		}
		return len(counts) == len(names)
	}
}

// exclusive watches the replicas until stop is called and fails the test
// when two of them work one partition at the same time.
//
// A sample reads the replicas one after another, not at one instant: a
// partition that moves from one to the other between two reads shows up in
// both. It moves once, though, so the next sample, reading the replicas in
// the same order, no longer shows the first working it. An overlap counts
// only when two consecutive samples show it; one shorter than a sample
// (about a millisecond) goes unseen.
func exclusive(t *testing.T, replicas ...*replica) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		samples, seen := 0, 0
		defer func() {
			t.Logf("ownership sampled %d times: never two workers of one partition in two samples running (%d moves seen mid-sample)", samples, seen)
		}()
		var before map[string]bool // overlaps of the previous sample
		for {
			select {
			case <-done:
				return
			default:
			}
			owner := map[int]string{}
			now := map[string]bool{}
			for _, r := range replicas {
				for _, p := range controller.Worked(r.c) {
					if o, ok := owner[p]; ok {
						overlap := fmt.Sprintf("partition %d worked by %s and %s at once", p, o, r.name)
						if before[overlap] {
							t.Error(overlap)
							return
						}
						now[overlap] = true
						seen++
						continue
					}
					owner[p] = r.name
				}
			}
			before = now
			samples++
			time.Sleep(time.Millisecond)
		}
	})
	return func() { close(done); wg.Wait() }
}

// Three replicas share the tenants: the first holds every partition alone;
// two more join while it provisions and take their shares, each handed
// over once its in-flight work is done; one dies and its partitions move
// to the survivors once its leases expire. Every tenant ends ready with one
// workload, no two replicas ever call the provider for one tenant at once
// or work one partition at once, and the actor of each tenant's ready
// status is one of the replicas.
//
// It runs on PostgreSQL, where replicas are a deployment: SQLite is one
// process, and three replicas' writes through its one writer under the
// race detector delay renewals past a 1 s TTL's step-down, which is right
// but makes the timings meaningless. Shared leases on SQLite are covered by
// the handover and fencing tests below.
func TestReplicasShareTheTenants(t *testing.T) {
	for _, db := range []string{"postgres"} {
		t.Run(db, func(t *testing.T) {
			const latency = 20 * time.Millisecond
			cl := newCluster(t, db, latency)
			a := cl.start("replica-a", latency, nil)
			waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
			if got := len(controller.Worked(a.c)); got != tenant.Partitions {
				t.Errorf("replica-a works %d partitions, want %d", got, tenant.Partitions)
			}

			ids := cl.shared.createMany(t, "t", 400, appConfig)
			waitCalls(t, cl.shared, ids, 50)
			b := cl.start("replica-b", latency, nil)
			c := cl.start("replica-c", latency, nil)
			stop := exclusive(t, a, b, c)
			took := waitHolders(t, cl.shared.store, "three replicas share the partitions", balanced("replica-a", "replica-b", "replica-c"))
			t.Logf("two replicas joined: the partitions were balanced %s later (lease TTL %s)", took.Round(time.Millisecond), ttl)

			more := cl.shared.createMany(t, "u", 400, appConfig)
			waitCalls(t, cl.shared, more, 50)
			before := holders(t, cl.shared.store)
			c.kill()
			killed := time.Now()
			took = waitHolders(t, cl.shared.store, "the survivors hold every partition", balanced("replica-a", "replica-b"))
			t.Logf("replica-c died: its %d partitions were held by the survivors %s later (lease TTL %s, renewed every %s)",
				countOf(before, "replica-c"), time.Since(killed).Round(time.Millisecond), ttl, ttl/5)
			if took > 5*ttl {
				t.Errorf("the dead replica's partitions moved %s after it died; want within the TTL plus a renewal or two", took)
			}
			<-c.done
			all := append(slices.Clone(ids), more...)
			cl.shared.waitStatus(t, 2*time.Minute, tenant.StatusReady, all...)
			stop()

			if n := cl.shared.mock.Overlaps(); n != 0 {
				t.Errorf("%d provider operations ran for a tenant while another was running for it", n)
			}
			if n := cl.shared.mock.Workloads(); n != len(all) {
				t.Errorf("%d workloads for %d tenants", n, len(all))
			}
			for _, id := range all {
				if n := cl.shared.mock.Containers(id); n != 1 {
					t.Errorf("tenant %s has %d containers", id, n)
				}
				ready := cl.shared.events(t, id, tenant.EventStatus)
				actor := ready[len(ready)-1].Actor
				if !slices.Contains([]string{"replica-a", "replica-b", "replica-c"}, actor) {
					t.Errorf("tenant %s was made ready by %q", id, actor)
				}
			}
		})
	}
}

func countOf(holders []string, name string) int {
	n := 0
	for _, h := range holders {
		if h == name {
			n++
		}
	}
	return n
}

// A partition handed over to a replica that joins lets its in-flight
// reconciles finish first: no tenant is provisioned twice, and those
// already being provisioned are made ready by the replica that began them.
func TestHandoverLetsInFlightWorkFinish(t *testing.T) {
	const latency = 300 * time.Millisecond
	// A handover waits for in-flight work up to the lease TTL. A
	// reconcile here is two provider calls of 300 ms and a few writes:
	// give it three TTLs of the other tests, so that a machine slowed by
	// the race detector and other packages' tests does not turn the wait
	// into a cancellation (by design, then another replica provisions).
	slower := func(o *controller.Options) { o.LeaseTTL, o.LeaseRenew = 3*ttl, 3*ttl/5 }
	cl := newCluster(t, "postgres", latency)
	a := cl.start("replica-a", latency, slower)
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
	ids := cl.shared.createMany(t, "t", 64, appConfig)
	waitCalls(t, cl.shared, ids, 16)
	var started []string
	for _, id := range ids {
		if cl.shared.mock.Calls(id, mock.OpProvision) > 0 {
			started = append(started, id)
		}
	}
	b := cl.start("replica-b", latency, slower)
	stop := exclusive(t, a, b)
	waitHolders(t, cl.shared.store, "two replicas share the partitions", balanced("replica-a", "replica-b"))
	cl.shared.waitStatus(t, time.Minute, tenant.StatusReady, ids...)
	stop()
	h := holders(t, cl.shared.store)
	moved := 0
	for _, id := range started {
		if h[tenant.PartitionOf(id)] != "replica-b" {
			continue
		}
		moved++
		events := cl.shared.events(t, id, tenant.EventStatus)
		if actor := events[len(events)-1].Actor; actor != "replica-a" {
			t.Errorf("tenant %s, in flight on replica-a when its partition was handed over, was made ready by %s", id, actor)
		}
	}
	t.Logf("%d tenants were being provisioned by replica-a in partitions handed to replica-b", moved)
	for _, id := range ids {
		if n := cl.shared.mock.Calls(id, mock.OpProvision); n != 1 {
			t.Errorf("tenant %s was provisioned %d times", id, n)
		}
	}
	if n := cl.shared.mock.Overlaps(); n != 0 {
		t.Errorf("%d overlapping provider operations", n)
	}
}

// A partition whose in-flight work outlasts the handover's bound (the
// lease TTL) has it cancelled before the lease is released: no provider
// call of the old holder outlives its lease, and the new holder finishes
// the work.
func TestHandoverCutsOffSlowWork(t *testing.T) {
	const latency = 3 * ttl
	cl := newCluster(t, "sqlite", latency)
	a := cl.start("replica-a", latency, nil)
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
	ids := cl.shared.createMany(t, "t", 16, appConfig)
	waitCalls(t, cl.shared, ids, 16)
	b := cl.start("replica-b", 10*time.Millisecond, nil)
	stop := exclusive(t, a, b)
	took := waitHolders(t, cl.shared.store, "two replicas share the partitions", balanced("replica-a", "replica-b"))
	if took > latency {
		t.Errorf("the partitions were balanced %s after replica-b started, past %s: a handover is bounded by a lease TTL (%s), and the new holder takes the lease at its next look", took, latency, ttl)
	}
	h := holders(t, cl.shared.store)
	var onB []string
	for _, id := range ids {
		if h[tenant.PartitionOf(id)] == "replica-b" {
			onB = append(onB, id)
		}
	}
	if len(onB) == 0 {
		t.Fatal("test set-up: no tenant's partition moved")
	}
	cl.shared.waitStatus(t, time.Minute, tenant.StatusReady, onB...)
	stop()
	if n := cl.shared.mock.Overlaps(); n != 0 {
		t.Errorf("%d provider operations overlapped: the old holder's call outlived its lease", n)
	}
}

// A replica that stops gives up its membership and its idle partitions at
// once, not when its slowest in-flight reconcile ends: the survivor holds
// them while that reconcile still runs, and the slow tenant's partition
// follows once it is done, the tenant made ready by the replica that began
// it and provisioned once.
func TestStoppingReplicaReleasesIdlePartitionsFirst(t *testing.T) {
	const slow = 8 * ttl
	cl := newCluster(t, "sqlite", 0)
	cl.start("replica-a", 0, nil)
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
	b := cl.start("replica-b", slow, func(o *controller.Options) { o.ShutdownTimeout = 3 * slow })
	waitHolders(t, cl.shared.store, "two replicas share the partitions", balanced("replica-a", "replica-b"))

	h := holders(t, cl.shared.store)
	var victim *tenant.Tenant
	for i := 0; victim == nil || h[tenant.PartitionOf(victim.ID)] != "replica-b"; i++ {
		victim = cl.shared.create(t, fmt.Sprintf("t-%d", i), appConfig, nil)
	}
	p := tenant.PartitionOf(victim.ID)
	waitCalls(t, cl.shared, []string{victim.ID}, 1)
	stopped := time.Now()
	b.cancel()

	othersOnA := func(h []string) bool {
		for q, holder := range h {
			if q != p && holder != "replica-a" {
				return false
			}
		}
		return true
	}
	took := waitHolders(t, cl.shared.store, "replica-a holds every partition but the slow tenant's", othersOnA)
	t.Logf("replica-b stopped: replica-a held its idle partitions %s later (its provision takes %s)", took.Round(time.Millisecond), slow)
	if took > slow/2 {
		t.Errorf("replica-a held replica-b's idle partitions %s after replica-b stopped; want well before its slow provision (%s) ends", took, slow)
	}
	if got := holders(t, cl.shared.store)[p]; got != "replica-b" && time.Since(stopped) < slow/2 {
		t.Errorf("partition %d, whose provision is in flight on replica-b, is held by %q before that provision ended", p, got)
	}
	<-b.done
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
	cl.shared.waitStatus(t, time.Minute, tenant.StatusReady, victim.ID)
	if n := cl.shared.mock.Calls(victim.ID, mock.OpProvision); n != 1 {
		t.Errorf("tenant %s was provisioned %d times", victim.ID, n)
	}
	events := cl.shared.events(t, victim.ID, tenant.EventStatus)
	if actor := events[len(events)-1].Actor; actor != "replica-b" {
		t.Errorf("tenant %s, in flight on replica-b when it stopped, was made ready by %s", victim.ID, actor)
	}
	if n := cl.shared.mock.Overlaps(); n != 0 {
		t.Errorf("%d overlapping provider operations", n)
	}
}

// A partition lease the database says a replica holds, though the replica
// does not know it (an acquisition whose answer was lost), is released by
// that replica at its next look when the partition is assigned to another,
// rather than left to expire.
func TestUnknownLeaseAssignedElsewhereIsReleased(t *testing.T) {
	const p = 5
	cl := newCluster(t, "sqlite", 0)
	cl.start("replica-a", 0, nil)
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))
	b := cl.start("replica-b", 0, func(o *controller.Options) {
		o.Leases.(*faultyLeases).refuse.Store(p + 1) // replica-b cannot take partition p yet
	})
	if got := controller.Assign([]string{"replica-a", "replica-b"})[p]; got != "replica-b" {
		t.Fatalf("test set-up: partition %d is assigned to %s, want replica-b", p, got)
	}
	waitHolders(t, cl.shared.store, "replica-a hands partition 5 over", func(h []string) bool { return h[p] == "" })
	// replica-a acquires it again, as far as the database knows, for an
	// hour; replica-a never hears of it.
	if _, err := cl.shared.store.(tenant.LeaseStore).AcquireLease(ctx, tenant.PartitionLease(p), "replica-a", time.Hour); err != nil {
		t.Fatal(err)
	}
	took := waitHolders(t, cl.shared.store, "replica-a releases partition 5", func(h []string) bool { return h[p] != "replica-a" })
	if took > ttl {
		t.Errorf("replica-a released a lease it did not know it held %s later; want at its next look (every %s)", took, ttl/5)
	}
	b.leases.refuse.Store(0)
	waitHolders(t, cl.shared.store, "two replicas share the partitions", balanced("replica-a", "replica-b"))
}

// A write the store refuses as fenced drops that partition alone: its
// tenant is not provisioned by the replica that lost the lease, and the
// other partitions are worked on.
func TestFencedPartitionIsDropped(t *testing.T) {
	cl := newCluster(t, "sqlite", 0)
	a := cl.start("replica-a", 0, nil)
	a.leases.blind.Store(true) // it does not hear from renewals that it lost a lease
	waitHolders(t, cl.shared.store, "replica-a holds every partition", balanced("replica-a"))

	victim := cl.shared.create(t, "victim", appConfig, nil)
	p := tenant.PartitionOf(victim.ID)
	// Provision victim so that its next change is an update.
	cl.shared.waitStatus(t, 30*time.Second, tenant.StatusReady, victim.ID)
	// Another replica takes the partition over behind replica-a's back.
	leases := cl.shared.store.(tenant.LeaseStore)
	// ListLeases lists by prefix: controller/6 is also the prefix of
	// controller/60 to controller/63, so pick the partition's own lease.
	listed, _, err := leases.ListLeases(ctx, tenant.PartitionLease(p))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(listed, func(l tenant.Lease) bool { return l.Name == tenant.PartitionLease(p) })
	if i < 0 {
		t.Fatalf("no lease of partition %d in %v", p, listed)
	}
	held := listed[i]
	if err := leases.ReleaseLease(ctx, held.Name, "replica-a", held.Epoch); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.AcquireLease(ctx, held.Name, "thief", time.Hour); err != nil {
		t.Fatal(err)
	}
	cur := cl.shared.get(t, victim.ID)
	if _, err := cl.shared.store.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"b"}`)}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, fmt.Sprintf("replica-a stops working partition %d after its write was fenced", p), 30*time.Second, func() (bool, string) {
		worked := controller.Worked(a.c)
		return !slices.Contains(worked, p), fmt.Sprintf("works %v", worked)
	})
	if n := cl.shared.mock.Calls(victim.ID, mock.OpUpdate); n != 0 {
		t.Errorf("the fenced replica updated the workload %d times", n)
	}
	if got := cl.shared.get(t, victim.ID); got.Status != tenant.StatusReady || got.ObservedGeneration == got.Generation {
		t.Errorf("the fenced write changed the tenant: %s, observed generation %d of %d", got.Status, got.ObservedGeneration, got.Generation)
	}
	if got := len(controller.Worked(a.c)); got != tenant.Partitions-1 {
		t.Errorf("replica-a works %d partitions after one was fenced, want %d", got, tenant.Partitions-1)
	}
	// The other partitions are worked on.
	var other *tenant.Tenant
	for i := 0; other == nil || tenant.PartitionOf(other.ID) == p; i++ {
		other = cl.shared.create(t, fmt.Sprintf("other-%d", i), appConfig, nil)
	}
	cl.shared.waitStatus(t, 30*time.Second, tenant.StatusReady, other.ID)
}

// Readiness: a replica is ready once it is a member and every partition
// has a live holder; a partition nobody can take for longer than the TTL
// makes it unready until someone does.
func TestReadiness(t *testing.T) {
	cl := newCluster(t, "sqlite", 0)
	c := controller.New(cl.shared.store, cl.shared.manager, controller.Options{Leases: cl.shared.store.(tenant.LeaseStore), LeaseTTL: ttl})
	if err := c.Ready(); err == nil {
		t.Error("a controller that is not running is ready")
	}
	a := cl.start("replica-a", 0, nil)
	a.leases.refuse.Store(5 + 1) // partition 5 cannot be acquired
	waitFor := func(what string, cond func(error) bool) {
		t.Helper()
		poll.Until(t, what, 30*ttl, func() (bool, string) {
			err := a.c.Ready()
			return cond(err), fmt.Sprintf("Ready() = %v", err)
		})
	}
	waitFor("unready while partition 5 has no holder", func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "partition 5 has had no live holder")
	})
	a.leases.refuse.Store(0)
	waitFor("ready once it is held", func(err error) bool { return err == nil })
	a.kill()
	<-a.done
	if err := a.c.Ready(); err == nil {
		t.Error("a stopped replica is ready")
	}
}

// waitCalls waits until provisioning has started for n of the tenants.
func waitCalls(t *testing.T, e *env, ids []string, n int) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("provisioning started for %d tenants", n), time.Minute, func() (bool, string) {
		started := 0
		for _, id := range ids {
			if e.mock.Calls(id, mock.OpProvision) > 0 {
				started++
			}
		}
		return started >= n, fmt.Sprintf("only %d of %d", started, len(ids))
	})
}

// Lease timings a replica could not keep are refused.
func TestLeaseTimingsOutOfBounds(t *testing.T) {
	for _, tt := range []struct{ ttl, renew time.Duration }{
		{500 * time.Millisecond, 0},
		{time.Hour, 0},
		{10 * time.Second, 5 * time.Second},
		{10 * time.Second, time.Millisecond},
	} {
		s := openSQLite(t)
		c := controller.New(s, nil, controller.Options{Leases: s.(tenant.LeaseStore), LeaseTTL: tt.ttl, LeaseRenew: tt.renew})
		if err := c.Run(ctx); err == nil {
			t.Errorf("Run with TTL %v, renew every %v: no error", tt.ttl, tt.renew)
		}
	}
	if err := controller.CheckLease(2*time.Second, 500*time.Millisecond); err != nil {
		t.Errorf("CheckLease(2s, 500ms) = %v", err)
	}
}
