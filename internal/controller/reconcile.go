package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

const pausedMessage = "reconciliation paused by the " + wire.PausedAnnotation + " annotation"

// Reconcile brings one tenant closer to its desired state. It reads the
// tenant from the store every time. An error means "retry with backoff"
// (the store or the provider could not be asked); a tenant's own failed
// attempts are recorded on the tenant and answered with RequeueAfter.
//
// A tenant whose provider is not enabled (landlord was restarted with
// another provider) is left as it is, its workload untouched, with a status
// message that says so and what to do: nothing is attempted, retried or
// failed until the provider is back, when the message goes.
//
// Its writes carry the epoch of the tenant's partition lease as the running
// controller holds it (none when it is not running or runs alone).
func (c *Controller) Reconcile(ctx context.Context, id string) (Result, error) {
	var epoch int64
	if r := c.current.Load(); r != nil {
		if pt := r.owner(tenant.PartitionOf(id)); pt != nil {
			epoch = pt.epoch
		}
	}
	return c.reconcile(ctx, id, epoch)
}

// reconcile is Reconcile with writes fenced by epoch.
func (c *Controller) reconcile(ctx context.Context, id string, epoch int64) (Result, error) {
	t, err := c.store.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
	if errors.Is(err, tenant.ErrNotFound) {
		return Result{}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("controller: read tenant %s: %w", id, err)
	}
	log := c.log.With(slog.String("tenant_id", t.ID), slog.String("tenant", t.Name))
	if t.Simple() {
		r := &reconcile{c: c, t: t, tenantID: t.ID, tenantName: t.Name, epoch: epoch, log: log}
		return settle(r.run(ctx))
	}
	// A tenant of several placements is each of them reconciled in turn,
	// as a tenant of one (tenant.View): what one placement's provider
	// does or fails at does not hold up the others, and the tenant's
	// status summarizes theirs as the store records them.
	c.workloads.remember(t)
	var out Result
	for _, p := range t.Placements {
		v, err := t.View(p.Name)
		if err != nil {
			return Result{}, err
		}
		plog := log.With(slog.String("placement", p.Name))
		if p.Move != nil {
			res, err := settle(c.reconcileMove(ctx, t, p.Name, epoch, plog))
			if err != nil || res.Requeue {
				return res, err
			}
			out = sooner(out, res)
			if t.DeletionRequestedAt != nil {
				// The move's other workload goes first: the placement is
				// destroyed once the move is over (reconcileMove asks for
				// the pass that does it).
				continue
			}
		}
		r := &reconcile{c: c, t: v, tenantID: t.ID, tenantName: t.Name, placement: p.Name, epoch: epoch,
			log: plog.With(slog.String("workload_id", p.WorkloadID))}
		res, err := settle(r.run(ctx))
		if err != nil || res.Requeue {
			return res, err
		}
		out = sooner(out, res)
		if r.full != nil && r.full.Status == tenant.StatusDeleted {
			c.workloads.remember(r.full) // forgets its workloads
		}
	}
	return out, nil
}

// settle is the result of a pass: one that met a newer desired state
// (ErrConflict) looks again with it at once.
func settle(res Result, err error) (Result, error) {
	if errors.Is(err, tenant.ErrConflict) {
		return Result{Requeue: true}, nil
	}
	return res, err
}

// sooner combines the results of two placements' passes: the tenant is
// looked at again when the sooner of them asks.
func sooner(a, b Result) Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	}
	return Result{RequeueAfter: min(a.RequeueAfter, b.RequeueAfter)}
}

// reconcile is one pass over one tenant, or over one placement of a tenant
// of several.
type reconcile struct {
	c *Controller
	// t is the tenant, or the view of the placement (tenant.View): its
	// ID and Name are then the placement's workload's.
	t *tenant.Tenant
	// tenantID and tenantName are the tenant's, and placement the
	// placement's name, "" for a tenant of one (tenant.Simple).
	tenantID, tenantName, placement string
	// other: t is the view of the placement's move's workload that does
	// not serve (tenant.OtherView), and full the tenant as last read or
	// written.
	other bool
	full  *tenant.Tenant
	epoch int64 // of the tenant's partition lease; fences every write
	log   *slog.Logger
	// repairing: this pass found drift and applies the spec again,
	// whatever the workload's generation says.
	repairing bool
}

func (r *reconcile) run(ctx context.Context) (Result, error) {
	t, now := r.t, r.c.opts.Now()
	switch {
	case t.Status == tenant.StatusDeleted:
		return Result{}, nil
	case t.DeletionRequestedAt != nil:
		// Deletion wins over a pause: a paused tenant could not be unpaused
		// once deleting.
		if t.Status == tenant.StatusFailed && t.ObservedGeneration == t.Generation {
			return Result{}, nil // gave up; asking again to delete retries
		}
		if done, err := r.checkProvider(ctx); done || err != nil {
			return Result{}, err
		}
		if wait := r.backingOff(now); wait > 0 {
			return Result{RequeueAfter: wait}, nil
		}
		return r.destroy(ctx)
	case t.Annotations[wire.PausedAnnotation] == "true":
		return Result{}, r.pause(ctx)
	case t.StatusMessage == pausedMessage:
		if err := r.resume(ctx); err != nil {
			return Result{}, err
		}
	}
	if t.Status != tenant.StatusFailed || t.ObservedGeneration != t.Generation {
		// A settled failure waits for a new desired state either way.
		if done, err := r.checkProvider(ctx); done || err != nil {
			return Result{}, err
		}
	}
	switch {
	case t.Status == tenant.StatusFailed && t.ObservedGeneration == t.Generation:
		// A settled failure waits for a new desired state, unless the
		// workload turns out to run after all (it started after the
		// progress deadline, say).
		return Result{}, r.recover(ctx)
	case t.ObservedGeneration != t.Generation || t.Status.InProgress():
		if wait := r.backingOff(now); wait > 0 {
			return Result{RequeueAfter: wait}, nil
		}
		return r.converge(ctx)
	default:
		return r.checkDrift(ctx)
	}
}

// backingOff returns how long is left before the next attempt.
func (r *reconcile) backingOff(now time.Time) time.Duration {
	if r.t.RetryAt == nil {
		return 0
	}
	return r.t.RetryAt.Sub(now)
}

// converge provisions or updates the workload to the current generation and
// waits for it to run.
func (r *reconcile) converge(ctx context.Context) (Result, error) {
	t := r.t
	op, working := "update", tenant.StatusUpdating
	if t.Status == tenant.StatusRequested || t.Status == tenant.StatusProvisioning {
		op, working = "provision", tenant.StatusProvisioning
	}
	spec, err := r.c.desiredSpec(ctx, t)
	if err != nil {
		return r.attemptFailed(ctx, op, t.Status, err)
	}
	if t.Status == working && !r.repairing {
		// An earlier pass (maybe of a controller that crashed) began this:
		// if the workload already runs this generation as declared, only
		// wait for it. A drifted one (a repair that failed) is applied.
		// Instances still starting (or restarting) are awaited, not
		// applied again.
		if in, err := r.c.compute.InspectTenant(ctx, t.ComputeRef(), spec); err == nil && !slices.ContainsFunc(in.Drift, notState) &&
			in.Status.Generation == t.Generation && (in.Status.State == provider.StateRunning || in.Status.State == provider.StatePending) {
			return r.await(ctx, working, in.Status)
		}
	}
	// A fenced write before changing anything on the platform: a replica
	// that no longer holds the tenant's partition stops here.
	if err := r.observe(ctx, r.keep(working, fmt.Sprintf("%s generation %d", verb(op), t.Generation))); err != nil {
		return Result{}, err
	}
	var ids map[string]string
	var endpoints []provider.Endpoint
	ctx = r.progress(ctx, working)
	switch op {
	case "provision":
		out, err := r.c.compute.ProvisionTenant(ctx, spec)
		if err != nil {
			return r.attemptFailed(ctx, op, working, err)
		}
		ids, endpoints = out.ResourceIDs, out.Endpoints
	default:
		out, err := r.c.compute.UpdateTenant(ctx, t.ID, spec)
		if errors.Is(err, provider.ErrTenantNotFound) {
			r.log.Info("workload missing at update; provisioning it")
			// What fails now is a provision, and is reported as one.
			op = "provision"
			var p *provider.ProvisionResult
			if p, err = r.c.compute.ProvisionTenant(ctx, spec); err == nil {
				ids, endpoints = p.ResourceIDs, p.Endpoints
			}
		} else if err == nil {
			ids, endpoints = out.ResourceIDs, out.Endpoints
		}
		if err != nil {
			return r.attemptFailed(ctx, op, working, err)
		}
	}
	// r.t, not t: the observe above replaced it with what the store holds,
	// and the next observe records these.
	r.t.ResourceIDs, r.t.Endpoints = ids, endpoints
	st, err := r.c.compute.GetTenantStatus(ctx, r.t.ComputeRef())
	if err != nil {
		return r.attemptFailed(ctx, op, working, fmt.Errorf("status after %s: %w", op, err))
	}
	return r.await(ctx, working, st)
}

// await settles a workload that has been applied: ready once it runs, a
// poll while it starts, failed past the progress deadline.
func (r *reconcile) await(ctx context.Context, working tenant.Status, st *provider.ComputeStatus) (Result, error) {
	t := r.t
	if len(st.Endpoints) > 0 {
		t.Endpoints = st.Endpoints
	}
	if st.State == provider.StateRunning && st.Health != provider.HealthUnhealthy && st.Health != provider.HealthStarting {
		ready := tenant.Observation{Status: tenant.StatusReady, Settles: true, Message: st.Message, Endpoints: nonNil(st.Endpoints)}
		if t.Drift.Open() && t.Drift.Policy == provider.DriftRepair {
			// A repair is done when the drift is gone, not when the
			// workload runs: one the provider cannot put back is a failed
			// attempt, not a ready tenant repaired again at every check.
			left, err := r.leftover(ctx)
			if err != nil {
				return r.attemptFailed(ctx, "repair", working, err)
			}
			if len(left) > 0 {
				return r.attemptFailed(ctx, "repair", working, fmt.Errorf("%w: the workload still differs from its spec after the repair: %s", provider.ErrUpdateFailed, provider.Summarize(left)))
			}
			ready.Drift = t.Drift.Resolved(r.c.opts.Now())
		}
		return Result{}, r.observe(ctx, ready)
	}
	// The deadline counts from the later of the status change and the
	// workload's last change, so that time spent retrying is not counted.
	since := r.c.opts.Now().Sub(latest(t.StatusChangedAt, st.LastUpdated))
	if since > r.c.opts.ProgressDeadline {
		msg := fmt.Sprintf("the workload is not running %s after %s began (state %s, health %s): %s",
			r.c.opts.ProgressDeadline, working, st.State, st.Health, cmp.Or(st.Message, "no message from the provider"))
		return Result{}, r.observe(ctx, tenant.Observation{Status: tenant.StatusFailed, Settles: true, Message: msg, Attempts: t.Attempts})
	}
	msg := fmt.Sprintf("waiting for the workload to run (state %s, health %s)", st.State, st.Health)
	if st.Message != "" {
		msg += ": " + st.Message
	}
	if msg != t.StatusMessage {
		if err := r.observe(ctx, tenant.Observation{Status: working, Message: msg, Attempts: t.Attempts}); err != nil {
			return Result{}, err
		}
	}
	return Result{RequeueAfter: r.c.opts.PollInterval}, nil
}

// destroy removes the workload of a tenant whose deletion was asked for.
func (r *reconcile) destroy(ctx context.Context) (Result, error) {
	if err := r.observe(ctx, r.keep(tenant.StatusDeleting, "destroying the workload")); err != nil {
		return Result{}, err
	}
	if err := r.c.compute.DestroyTenant(ctx, r.t.ComputeRef()); err != nil {
		return r.attemptFailed(ctx, "destroy", tenant.StatusDeleting, err)
	}
	r.c.specs.forget(r.t.ID)
	return Result{}, r.observe(ctx, tenant.Observation{Status: tenant.StatusDeleted, Message: "workload destroyed"})
}

// attemptFailed records a failed attempt: an event, then either a retry
// after backoff or, for a terminal error or the last allowed attempt, failed.
func (r *reconcile) attemptFailed(ctx context.Context, op string, status tenant.Status, cause error) (Result, error) {
	if errors.Is(cause, tenant.ErrConflict) || errors.Is(cause, tenant.ErrFenced) {
		return Result{}, cause
	}
	t := r.t
	if errors.Is(cause, provider.ErrProviderUnavailable) {
		return r.waitForProvider(ctx, op, status, cause)
	}
	attempt := t.Attempts + 1
	terminal := provider.IsTerminal(cause)
	maxAttempts := r.c.opts.MaxRetries + 1 // the first try and MaxRetries retries
	msg := fmt.Sprintf("%s attempt %d of %d failed: %v", op, attempt, maxAttempts, cause)
	if err := r.event(ctx, tenant.EventAttempt, msg); err != nil {
		return Result{}, err
	}
	// The status message says the cause first, so that what is cut to fit
	// a line (landlord list, the --wait progress line) is the account of
	// the attempts, not why they fail.
	said := withoutOwnID(cause.Error(), t.ID)
	if terminal || attempt >= maxAttempts {
		why := fmt.Sprintf("%s failed %d times, all the attempts allowed; landlord stopped retrying", op, attempt)
		if terminal {
			why = op + " failed with a permanent error, which retrying cannot cure"
		}
		// The CLI's verb, which does what the console's Retry does.
		next := "run landlord retry " + r.tenantName + ", or change the tenant, to try again"
		if terminal {
			next = "change the tenant, or fix the cause and run landlord retry " + r.tenantName + ", to try again"
		}
		switch {
		case r.other && r.full != nil && r.full.Placement(r.placement) != nil && r.full.Placement(r.placement).Move != nil &&
			r.full.Placement(r.placement).Move.Step == tenant.MoveCancelling:
			next = "run landlord move " + r.tenantName + " --cancel again to try again"
		case r.other && r.t.DeletionRequestedAt != nil && r.full != nil && r.full.DeletionRequestedAt != nil:
			next = "delete the tenant again to try again"
		case r.other:
			next = "run landlord move " + r.tenantName + " --approve to try again, or --cancel to undo the move"
		case op == "destroy" && r.full != nil && r.full.DeletionRequestedAt == nil:
			next = "run landlord retry " + r.tenantName + " to try the placement's removal again"
		case op == "destroy":
			next = "delete it again to try again"
		}
		r.log.Error("tenant failed", slog.String("operation", op), slog.Int("attempt", attempt), slog.Any("error", cause))
		return Result{}, r.observe(ctx, tenant.Observation{
			Status:   tenant.StatusFailed,
			Settles:  true,
			Message:  fmt.Sprintf("%s (%s: %s)", said, why, next),
			Attempts: attempt,
		})
	}
	wait := backoff(attempt, r.c.opts.BaseBackoff, r.c.opts.MaxBackoff)
	retryAt := r.c.opts.Now().Add(wait)
	r.log.Warn("attempt failed; retrying", slog.String("operation", op), slog.Int("attempt", attempt), slog.Duration("retry_in", wait), slog.Any("error", cause))
	err := r.observe(ctx, tenant.Observation{
		Status:   status,
		Message:  fmt.Sprintf("%s (%s attempt %d of %d failed; retrying in %s)", said, op, attempt, maxAttempts, wait.Round(time.Millisecond)),
		Attempts: attempt,
		RetryAt:  &retryAt,
	})
	return Result{RequeueAfter: wait}, err
}

// waitForProvider waits for a provider that cannot be reached (a plugin
// being restarted): that is no attempt of the tenant's, so it neither
// counts toward failed nor records an event; the tenant keeps its status,
// says what it waits for, and is looked at again after the poll interval.
func (r *reconcile) waitForProvider(ctx context.Context, op string, status tenant.Status, cause error) (Result, error) {
	r.log.Warn("the provider is unavailable; waiting for it", slog.String("operation", op), slog.Any("error", cause))
	msg := fmt.Sprintf("%s waits: compute provider %s is unavailable (%s)", op, r.t.Provider, withoutOwnID(cause.Error(), r.t.ID))
	if r.t.StatusMessage == msg {
		return Result{RequeueAfter: r.c.opts.PollInterval}, nil
	}
	return Result{RequeueAfter: r.c.opts.PollInterval}, r.observe(ctx, tenant.Observation{Status: status, Message: msg, Attempts: r.t.Attempts})
}

// checkProvider reports done when the tenant's provider is not enabled:
// the tenant then says so once, in its status message, and is left alone.
// When the provider is enabled again, that message is cleared.
func (r *reconcile) checkProvider(ctx context.Context) (done bool, err error) {
	t := r.t
	msg := tenant.ProviderMissing(&tenant.Tenant{Name: r.tenantName, Provider: t.Provider, DeletionRequestedAt: t.DeletionRequestedAt})
	if _, err := r.c.compute.Registry().Get(t.Provider); err != nil {
		if t.StatusMessage == msg {
			return true, nil
		}
		r.log.Warn("the tenant's compute provider is not enabled: leaving the tenant as it is", slog.String("provider", t.Provider))
		return true, r.observe(ctx, r.keep(t.Status, msg))
	}
	if t.StatusMessage == msg {
		r.log.Info("the tenant's compute provider is enabled again", slog.String("provider", t.Provider))
		return false, r.observe(ctx, r.keep(t.Status, ""))
	}
	return false, nil
}

// withoutOwnID is an error's text for the status message of the tenant
// with that id: the ": "-separated part that only names the tenant
// ("tenant <id>", as providers begin their errors) is left out, and
// "provision tenant <id>" says "provision", so that what a narrow line
// shows is the cause rather than the tenant's id. The attempt events keep
// the whole text.
func withoutOwnID(msg, id string) string {
	parts := strings.Split(msg, ": ")
	out := parts[:0]
	for _, p := range parts {
		switch {
		case p == "tenant "+id:
			continue
		case strings.HasSuffix(p, " tenant "+id):
			p = strings.TrimSuffix(p, " tenant "+id)
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// pause records once that the tenant is paused.
func (r *reconcile) pause(ctx context.Context) error {
	if r.t.StatusMessage == pausedMessage {
		return nil
	}
	r.log.Info("reconciliation paused")
	if err := r.event(ctx, tenant.EventPaused, pausedMessage); err != nil {
		return err
	}
	return r.observe(ctx, r.keep(r.t.Status, pausedMessage))
}

// resume records that a paused tenant is reconciled again.
func (r *reconcile) resume(ctx context.Context) error {
	r.log.Info("reconciliation resumed")
	if err := r.event(ctx, tenant.EventResumed, "the "+wire.PausedAnnotation+" annotation was removed"); err != nil {
		return err
	}
	return r.observe(ctx, r.keep(r.t.Status, ""))
}

// observe writes an observation for the generation this pass read, fenced
// by the epoch of the tenant's partition lease, and keeps r.t up to date.
func (r *reconcile) observe(ctx context.Context, obs tenant.Observation) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	obs.Generation = r.t.Generation
	obs.Epoch = r.epoch
	obs.Actor = r.c.opts.Identity
	if obs.ResourceIDs == nil {
		obs.ResourceIDs = r.t.ResourceIDs
	}
	if obs.Endpoints == nil {
		obs.Endpoints = r.t.Endpoints
	}
	obs.Placement, obs.Other = r.placement, r.other
	next, err := r.c.store.UpdateObserved(ctx, r.tenantID, obs)
	if err != nil {
		return fmt.Errorf("controller: record %s for tenant %s%s: %w", obs.Status, r.tenantID, r.of(), err)
	}
	r.full = next
	if r.placement != "" {
		view := next.View
		if r.other {
			view = next.OtherView
		}
		v, err := view(r.placement)
		if err != nil {
			// A removed placement goes once it is deleted, and a move's
			// other workload with its move: this pass is done with it.
			gone := *r.t
			gone.Status = tenant.StatusDeleted
			v = &gone
		}
		next = v
	}
	if next.Status != r.t.Status {
		r.log.Info("tenant status changed", slog.String("from", string(r.t.Status)), slog.String("to", string(next.Status)), slog.Int64("generation", next.Generation))
	}
	r.t = next
	return nil
}

// of names the placement of a pass, for an error's text.
func (r *reconcile) of() string {
	if r.placement == "" {
		return ""
	}
	return " placement " + r.placement
}

func (r *reconcile) event(ctx context.Context, typ tenant.EventType, msg string) error {
	ctx, cancel := writeContext(ctx)
	defer cancel()
	err := r.c.store.AppendEvent(ctx, tenant.Event{TenantID: r.tenantID, Placement: r.placement, Type: typ, Generation: r.t.Generation, Message: msg, Actor: r.c.opts.Identity, Epoch: r.epoch})
	if err != nil {
		return fmt.Errorf("controller: record %s event for tenant %s%s: %w", typ, r.tenantID, r.of(), err)
	}
	return nil
}

// keep is an observation that changes only the status and message, keeping
// the attempt count and retry time.
func (r *reconcile) keep(status tenant.Status, msg string) tenant.Observation {
	return tenant.Observation{Status: status, Message: msg, Attempts: r.t.Attempts, RetryAt: r.t.RetryAt}
}

// progressInterval is the least time between two progress messages
// recorded for one tenant.
const progressInterval = time.Second

// progress returns ctx with a hook (provider.WithProgress) that records what a
// provider reports during a long step (an image pull, say) as the tenant's
// status message, at most once per progressInterval. Progress is
// informational: a write that fails is logged and the operation goes on.
func (r *reconcile) progress(ctx context.Context, working tenant.Status) context.Context {
	var mu sync.Mutex
	var last time.Time
	return provider.WithProgress(ctx, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		now := r.c.opts.Now()
		if msg == r.t.StatusMessage || now.Sub(last) < progressInterval {
			return
		}
		last = now
		if err := r.observe(ctx, r.keep(working, msg)); err != nil {
			r.log.Warn("recording progress failed", slog.Any("error", err))
		}
	})
}

// recover makes a failed tenant ready when its workload runs the current
// generation after all.
func (r *reconcile) recover(ctx context.Context) error {
	spec, err := r.c.desiredSpec(ctx, r.t)
	if err != nil {
		return nil
	}
	in, err := r.c.compute.InspectTenant(ctx, r.t.ComputeRef(), spec)
	if err != nil || len(in.Drift) > 0 {
		return nil // not running as declared (a repair that failed, say)
	}
	st := in.Status
	if st.Generation != r.t.Generation || st.State != provider.StateRunning ||
		st.Health == provider.HealthUnhealthy || st.Health == provider.HealthStarting {
		return nil
	}
	r.log.Info("the workload of a failed tenant runs; marking it ready")
	return r.observe(ctx, tenant.Observation{Status: tenant.StatusReady, Settles: true, Message: "the workload runs after all"})
}

// writeTimeout bounds a write of the controller's results.
const writeTimeout = 10 * time.Second

// writeContext is the context of a store write that records what happened:
// it outlives the operation's own context (a timed-out operation must still
// be recorded as a failed attempt), but not by long.
func writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func verb(op string) string {
	switch op {
	case "provision":
		return "provisioning"
	case "update":
		return "updating to"
	default:
		return op
	}
}
