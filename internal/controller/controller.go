package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Compute is what the controller needs of compute.Manager.
type Compute interface {
	Resolve(ctx context.Context, req compute.ResolveRequest) (*compute.Resolution, error)
	ProvisionTenant(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error)
	UpdateTenant(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error)
	DestroyTenant(ctx context.Context, t provider.TenantRef) error
	GetTenantStatus(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error)
	// InspectTenant reads the status and, given a spec and a provider that
	// is a provider.DriftDetector, the drift of the tenant's workload.
	InspectTenant(ctx context.Context, t provider.TenantRef, spec *provider.TenantComputeSpec) (*provider.Inspection, error)
	// Registry holds the enabled providers: a tenant whose provider is not
	// among them is left as it is (see Reconcile).
	Registry() *compute.Registry
}

var _ Compute = (*compute.Manager)(nil)

// changeWatcher is implemented by a Compute that hears of changes to
// workloads as they happen (compute.Manager, through its providers'
// provider.ChangeNotifier): the controller looks at such a tenant at once,
// not at its next poll or resync.
type changeWatcher interface {
	WatchChanges(ctx context.Context, changed func(tenantID string))
}

var _ changeWatcher = (*compute.Manager)(nil)

// Result says when to look at a tenant again.
type Result struct {
	// Requeue asks for another reconcile at once (the tenant changed under
	// us, or a repair was just started).
	Requeue bool
	// RequeueAfter asks for another reconcile after a delay (backoff, or
	// polling a workload that is starting).
	RequeueAfter time.Duration
}

// Controller reconciles tenants. Create one with New and start it with Run.
type Controller struct {
	store   tenant.Store
	compute Compute
	opts    Options
	log     *slog.Logger
	specs   *specCache
	// workloads maps the workloads of placements to their tenants, for
	// providers' change notifications.
	workloads workloads
	// wait waits until the clock says a time (see waitUntil); nil means a
	// timer. Tests that drive Options.Now set it.
	wait func(ctx context.Context, until time.Time) error

	current atomic.Pointer[run] // the running Run, nil when stopped
}

// run is the state of one Run; a controller run again starts afresh.
type run struct {
	queue    workqueue.TypedRateLimitingInterface[string]
	stopping atomic.Bool   // set on shutdown: workers take no new tenant
	sweeps   chan struct{} // asks for a sweep; coalesced
	// opCtx is the parent of every partition's context: it outlives Run's
	// own context by the shutdown timeout, so that a graceful stop lets
	// in-flight operations finish.
	opCtx context.Context
	// parts are the partitions worked, each under its lease's epoch.
	parts  [tenant.Partitions]atomic.Pointer[part]
	member *member // nil when running alone
	// resyncChecks is how many tenants the last resync checked: the next
	// spreads as many checks over its period. Only the resync loop uses it.
	resyncChecks int
}

// New returns a controller over store and compute.
func New(store tenant.Store, c Compute, opts Options) *Controller {
	opts = opts.WithDefaults()
	return &Controller{store: store, compute: c, opts: opts, log: opts.Logger.With(slog.String("component", "controller")),
		specs: newSpecCache(opts.SpecCache)}
}

// Enqueue asks for the tenant to be reconciled soon. It is safe to call at
// any time; it does nothing while the controller is not running or does
// not work the tenant's partition.
func (c *Controller) Enqueue(id string) {
	if r := c.current.Load(); r != nil {
		r.add(id)
	}
}

// Run reconciles until ctx ends.
//
// With Options.Leases it works the partitions of the tenants
// (tenant.Partitions) it holds the leases of, as one member among the
// replicas sharing them: it acquires the partitions assigned to it (see
// Assign), hands over those assigned to another once their in-flight
// reconciles finish, and fences every write to a tenant with the epoch of
// its partition's lease. A partition whose lease is lost, or whose write
// the store refuses as fenced, is dropped at once, its in-flight operations
// cancelled; the others go on. Without Options.Leases it works every
// partition, unfenced: it must then be the only controller on the store.
//
// When ctx ends it stops taking work and, with leases, gives up its member
// lease at once, so that the others stop assigning partitions to it. It
// lets in-flight operations finish for up to ShutdownTimeout, renewing the
// leases of their partitions meanwhile, and releases each partition's
// lease as soon as that partition's own in-flight operations are done, so
// that the other replicas take it at once. It
// returns an error only when it is already running or the lease timings
// are out of bounds (CheckLease).
func (c *Controller) Run(ctx context.Context) error {
	if c.opts.Leases != nil {
		if err := CheckLease(c.opts.LeaseTTL, c.opts.LeaseRenew); err != nil {
			return err
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// Operations get their own context, so that a graceful stop lets them
	// finish instead of cutting them off.
	opCtx, cancelOps := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelOps()
	r := &run{
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.opts.BaseBackoff, c.opts.MaxBackoff),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "tenants"},
		),
		sweeps: make(chan struct{}, 1),
		opCtx:  opCtx,
	}
	if c.opts.Leases != nil {
		r.member = newMember(c, r)
	}
	if !c.current.CompareAndSwap(nil, r) {
		return errors.New("controller: Run is already running")
	}
	defer c.current.Store(nil)

	// Listen before the first sweep, so that nothing written in between is
	// missed.
	announcements := c.subscribe(runCtx)
	var loops sync.WaitGroup
	loops.Go(func() { c.watch(runCtx, r, announcements) })
	loops.Go(func() { c.sweepLoop(runCtx, r) })
	loops.Go(func() { c.every(runCtx, c.opts.Resync, func(ctx context.Context) error { return c.resync(ctx, r) }) })
	if w, ok := c.compute.(changeWatcher); ok {
		loops.Go(func() { w.WatchChanges(runCtx, func(id string) { r.add(c.workloads.tenantOf(id)) }) })
	}

	var workers sync.WaitGroup
	for range c.opts.Workers {
		workers.Go(func() {
			for c.processNext(r) {
			}
		})
	}
	// The member outlives ctx: once ctx ends it leaves the members and
	// hands over each partition as soon as that partition's in-flight work
	// is finished or cut off, renewing the leases it still holds meanwhile.
	// memberCtx ends once the workers are done, so that whatever is still
	// held then is released at once.
	memberCtx, leave := context.WithCancel(context.WithoutCancel(ctx))
	defer leave()
	var membership sync.WaitGroup
	if r.member != nil {
		membership.Go(func() { r.member.run(memberCtx, runCtx.Done()) })
	} else {
		for p := range tenant.Partitions {
			r.gain(p, 0)
		}
	}
	c.log.Info("controller started", slog.Int("workers", c.opts.Workers), slog.String("identity", c.opts.Identity), slog.Bool("shared", c.opts.Leases != nil))

	<-runCtx.Done()
	r.stopping.Store(true)
	r.queue.ShutDown() // wakes idle workers; busy ones finish their tenant
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.opts.ShutdownTimeout):
		c.log.Warn("controller stopping: in-flight operations did not finish in time; cancelling them", slog.Duration("timeout", c.opts.ShutdownTimeout))
		cancelOps()
		<-done
	}
	leave()
	membership.Wait()
	loops.Wait()
	c.log.Info("controller stopped")
	return nil
}

// processNext reconciles one tenant from the queue; false when the queue is
// shut down.
func (c *Controller) processNext(r *run) bool {
	id, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(id)
	if r.stopping.Load() {
		return false // stopping: what is still queued is picked up by the next owner's sweep
	}
	pt := r.owner(tenant.PartitionOf(id))
	if pt == nil || !pt.begin() {
		// Not worked here (any more): its partition's holder finds it.
		r.queue.Forget(id)
		return true
	}
	defer pt.end()
	start := time.Now()
	res, err := c.reconcileSafely(pt.ctx, id, pt.epoch)
	if c.opts.Observer != nil {
		c.opts.Observer.ObserveReconcile(resultOf(res, err), time.Since(start))
	}
	switch {
	case errors.Is(err, tenant.ErrFenced):
		if r.lose(pt.p, pt, err) {
			c.log.Error("a write was fenced: another replica holds the tenant's partition now; dropping the partition",
				slog.String("tenant_id", id), slog.Int("partition", pt.p), slog.Int64("epoch", pt.epoch), slog.Any("error", err))
		}
		r.queue.Forget(id)
	case pt.ctx.Err() != nil:
		// The partition was dropped or handed over under this reconcile:
		// its new holder carries on.
		r.queue.Forget(id)
	case err != nil:
		c.log.Warn("reconcile failed; retrying", slog.String("tenant_id", id), slog.Any("error", err))
		r.queue.AddRateLimited(id)
	case res.Requeue:
		r.queue.Forget(id)
		r.queue.Add(id)
	case res.RequeueAfter > 0:
		r.queue.Forget(id)
		r.queue.AddAfter(id, res.RequeueAfter)
	default:
		r.queue.Forget(id)
	}
	return true
}

func resultOf(res Result, err error) string {
	switch {
	case err != nil:
		return "error"
	case res.Requeue:
		return "requeue"
	case res.RequeueAfter > 0:
		return "retry"
	default:
		return "done"
	}
}

// QueueDepth is how many tenants wait in the work queue; 0 when the
// controller is not running.
func (c *Controller) QueueDepth() int {
	if r := c.current.Load(); r != nil {
		return r.queue.Len()
	}
	return 0
}

// Partitions is how many partitions the controller works now; 0 when it is
// not running.
func (c *Controller) Partitions() int {
	if r := c.current.Load(); r != nil {
		return r.held()
	}
	return 0
}

// Members is how many live members the controller saw at its last look at
// the leases; 1 when it runs alone, 0 when it is not running or has not
// looked yet.
func (c *Controller) Members() int {
	r := c.current.Load()
	switch {
	case r == nil:
		return 0
	case r.member == nil:
		return 1
	}
	if v := r.member.view.Load(); v != nil {
		return v.members
	}
	return 0
}

// Ready returns why the tenants' work is not being done, as far as this
// replica can tell, or nil: the controller is not running; with leases,
// this replica is not a member, has not seen the leases for a lease TTL,
// or sees a partition that has had no live holder for longer than a lease
// TTL (longer than a dead holder takes to be replaced).
func (c *Controller) Ready() error {
	r := c.current.Load()
	switch {
	case r == nil:
		return errors.New("the controller is not running")
	case r.member == nil:
		return nil
	}
	return r.member.ready()
}

// reconcileSafely turns a panic in a reconcile into an error, so that one
// tenant cannot take the controller down.
func (c *Controller) reconcileSafely(ctx context.Context, id string, epoch int64) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("reconcile panicked", slog.String("tenant_id", id), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("controller: reconcile of tenant %s panicked: %v", id, r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, c.opts.OperationTimeout)
	defer cancel()
	return c.reconcile(ctx, id, epoch)
}

// subscribe asks the store to announce changes; nil when it cannot.
func (c *Controller) subscribe(ctx context.Context) <-chan string {
	w, ok := c.store.(tenant.Watcher)
	if !ok {
		c.log.Warn("the store does not announce changes; tenants are picked up by the sweep and resync only")
		return nil
	}
	ch, err := w.Watch(ctx)
	if err != nil {
		c.log.Error("cannot watch the store; tenants are picked up by the sweep and resync only", slog.Any("error", err))
		return nil
	}
	return ch
}

// watch enqueues tenants as the store announces changes to them.
func (c *Controller) watch(ctx context.Context, r *run, ch <-chan string) {
	if ch == nil {
		return
	}
	for id := range ch {
		if id == "" {
			// Announcements were lost: look for work now, without holding
			// up the announcements that follow.
			r.sweepSoon()
			continue
		}
		r.add(id)
	}
}

// sweepLoop sweeps at start, every Sweep (jittered), and when asked.
func (c *Controller) sweepLoop(ctx context.Context, r *run) {
	for {
		if err := c.sweep(ctx, r); err != nil && ctx.Err() == nil {
			c.log.Warn("sweep failed", slog.Any("error", err))
		}
		t := time.NewTimer(jitter(c.opts.Sweep))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-r.sweeps:
			t.Stop()
		}
	}
}

// every runs fn every period (jittered) until ctx ends, a period from the
// start of one run to the start of the next: a resync spreads its checks
// over most of its period. A run that outlasts its period is followed by
// the next a tenth of a period after it ends.
func (c *Controller) every(ctx context.Context, period time.Duration, fn func(context.Context) error) {
	wait := jitter(period)
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("periodic scan failed", slog.Any("error", err))
		}
		wait = max(jitter(period)-time.Since(start), period/10)
	}
}

// sweep enqueues every tenant of the partitions worked here that the store
// says needs work.
func (c *Controller) sweep(ctx context.Context, r *run) error {
	after := ""
	for {
		ids, err := c.store.ListWork(ctx, tenant.WorkOptions{After: after})
		if err != nil {
			return fmt.Errorf("controller: sweep: %w", err)
		}
		for _, id := range ids {
			r.add(id)
		}
		if len(ids) < tenant.DefaultWorkLimit {
			return nil
		}
		after = ids[len(ids)-1]
	}
}

// resync checks every live tenant against its provider. A ready tenant
// whose workload still runs is left alone, without a trip through the queue
// and a read of its row; every other tenant, and a ready one whose workload
// has drifted or cannot be asked about, is queued for the workers, which
// look again before they repair anything. Tenants of partitions not worked
// here are left to their holders.
//
// The checks are spread evenly over resyncSpread percent of the period,
// for as many tenants as the last resync checked (counted first when none
// did): a provider is asked at a steady rate rather than about every tenant
// at once. They run in parallel, at most Workers at a time, each under its
// partition's context. Tenants that need work are queued as the listing
// finds them, and a tenant a change notification names is looked at at
// once, whatever the resync's pace.
func (c *Controller) resync(ctx context.Context, r *run) error {
	n := r.resyncChecks
	if n == 0 {
		if err := c.eachTenant(ctx, func(t *tenant.Tenant) error {
			if r.working(t.ID) != nil && checkable(t) {
				n++
			}
			return nil
		}); err != nil {
			return err
		}
	}
	pace := pacer{begin: c.opts.Now(), span: c.opts.Resync * resyncSpread / 100, n: n}
	limit := make(chan struct{}, c.opts.Workers)
	var checks sync.WaitGroup
	defer checks.Wait()
	checked := 0
	err := c.eachTenant(ctx, func(t *tenant.Tenant) error {
		pt := r.working(t.ID)
		if pt == nil {
			return nil
		}
		if !checkable(t) {
			r.queue.Add(t.ID)
			return nil
		}
		if err := c.waitUntil(ctx, pace.due(checked)); err != nil {
			return err
		}
		checked++
		select {
		case limit <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		checks.Go(func() {
			defer func() { <-limit }()
			ctx, cancel := context.WithTimeout(pt.ctx, c.opts.OperationTimeout)
			defer cancel()
			if c.needsWorker(ctx, t) {
				r.queue.Add(t.ID)
			}
		})
		return nil
	})
	if err == nil {
		r.resyncChecks = checked
	}
	return err
}

// needsWorker asks the providers about a ready tenant's workload, each of
// its placements', and reports whether a worker must look at it: a
// placement's spec does not resolve, its workload has drifted, or a
// provider could not say.
func (c *Controller) needsWorker(ctx context.Context, t *tenant.Tenant) bool {
	views := []*tenant.Tenant{t}
	if !t.Simple() {
		c.workloads.remember(t)
		views = views[:0]
		for _, p := range t.Placements {
			v, err := t.View(p.Name)
			if err != nil {
				return true
			}
			views = append(views, v)
		}
	}
	for _, v := range views {
		spec, err := c.desiredSpec(ctx, v)
		if err != nil {
			return true // the worker says why
		}
		in, err := c.compute.InspectTenant(ctx, v.ComputeRef(), spec)
		if needsCheck(v, spec, in, err) {
			return true
		}
	}
	return false
}

// checkable reports whether a resync asks the provider about the tenant
// itself rather than queueing it: it is ready, needs no work, is not being
// deleted and is not paused.
func checkable(t *tenant.Tenant) bool {
	return t.Status == tenant.StatusReady && !t.NeedsWork() && t.DeletionRequestedAt == nil && t.Annotations[wire.PausedAnnotation] != "true"
}

// eachTenant calls fn with every live tenant, reading the store a page at a
// time, until fn returns an error.
func (c *Controller) eachTenant(ctx context.Context, fn func(*tenant.Tenant) error) error {
	opts := tenant.ListOptions{PageSize: tenant.MaxPageSize}
	for {
		page, err := c.store.List(ctx, opts)
		if err != nil {
			return fmt.Errorf("controller: resync: %w", err)
		}
		for _, t := range page.Tenants {
			if err := fn(t); err != nil {
				return err
			}
		}
		if page.NextPageToken == "" {
			return nil
		}
		opts.PageToken = page.NextPageToken
	}
}
