package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// ElectorOptions configure an Elector.
type ElectorOptions struct {
	// Identity names this process as the lease holder; required.
	Identity string
	// TTL is how long the lease lasts without renewal: how long the others
	// wait for a leader that died. A leader that has not renewed for
	// TTL·4/5 steps down, before anyone may take over. Default 15s; at
	// least MinLeaseTTL.
	TTL time.Duration
	// RenewEvery is how often the leader renews the lease, and how often
	// the others try to take it (with jitter). Default TTL/3; at most
	// TTL·2/5, so that a failed renewal is tried again before the leader
	// steps down.
	RenewEvery time.Duration
	// Logger receives election lines; nil discards them.
	Logger *slog.Logger
}

// Bounds and default of the lease's timing.
const (
	DefaultLeaseTTL = 15 * time.Second
	MinLeaseTTL     = time.Second
	MaxLeaseTTL     = 5 * time.Minute
	MinLeaseRenew   = 100 * time.Millisecond
)

// CheckLease reports lease timings outside their bounds: a TTL of
// MinLeaseTTL to MaxLeaseTTL, renewed at least every MinLeaseRenew and at
// most every TTL·2/5.
func CheckLease(ttl, renewEvery time.Duration) error {
	switch {
	case ttl < MinLeaseTTL || ttl > MaxLeaseTTL:
		return fmt.Errorf("controller: the lease TTL %v is not between %v and %v", ttl, MinLeaseTTL, MaxLeaseTTL)
	case renewEvery < MinLeaseRenew || renewEvery > ttl*2/5:
		return fmt.Errorf("controller: renewing the lease every %v does not fit a TTL of %v: renew every %v to %v (two renewals before a leader that cannot renew steps down at 4/5 of the TTL)",
			renewEvery, ttl, MinLeaseRenew, ttl*2/5)
	}
	return nil
}

// Elector runs a function while this process holds the controller lease
// (tenant.ControllerLease), so that one process among those sharing a
// database leads.
type Elector struct {
	leases tenant.LeaseStore
	opts   ElectorOptions
	log    *slog.Logger
	seen   atomic.Pointer[seenLeader] // the last leader this process saw
}

type seenLeader struct {
	holder  string
	epoch   int64
	expires time.Time
	// renewed is when this process first saw the lease as it is: a
	// leader that renews moves its expiry on every renewal.
	renewed time.Time
}

// Leader returns the leader this process last saw, and whether that leader
// is seen renewing its lease: a leader whose lease has not moved for
// 2.5 renewal intervals has missed a renewal (it died or lost the
// database), and until its lease expires and another takes over there is
// no leader to trust.
func (e *Elector) Leader() (string, bool) {
	s := e.seen.Load()
	if s == nil || time.Since(s.renewed) > e.opts.RenewEvery*5/2 {
		return "", false
	}
	return s.holder, true
}

// saw records the lease as this process found it.
func (e *Elector) saw(lease tenant.Lease) {
	now := time.Now()
	next := &seenLeader{holder: lease.Holder, epoch: lease.Epoch, expires: lease.ExpiresAt, renewed: now}
	if prev := e.seen.Load(); prev != nil && prev.holder == next.holder && prev.epoch == next.epoch && prev.expires.Equal(next.expires) {
		next.renewed = prev.renewed
	}
	e.seen.Store(next)
}

// NewElector returns an Elector over leases.
func NewElector(leases tenant.LeaseStore, opts ElectorOptions) (*Elector, error) {
	if opts.Identity == "" {
		return nil, errors.New("controller: an elector needs an identity")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultLeaseTTL
	}
	if opts.RenewEvery <= 0 {
		opts.RenewEvery = opts.TTL / 3
	}
	if err := CheckLease(opts.TTL, opts.RenewEvery); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{leases: leases, opts: opts, log: opts.Logger.With(slog.String("identity", opts.Identity))}, nil
}

// Run campaigns for the lease until ctx ends. Whenever it holds the lease it
// calls lead with the lease's epoch and a context that ends when ctx ends
// (stop gracefully) or, with cause tenant.ErrLeaseLost, when the lease is
// lost or cannot be renewed in time (stop at once). It keeps renewing while
// lead finishes, then releases the lease, so that a successor takes over at
// once, and campaigns again unless ctx has ended.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, epoch int64) error) error {
	for {
		lease, err := e.leases.AcquireLease(ctx, tenant.ControllerLease, e.opts.Identity, e.opts.TTL)
		switch {
		case err == nil:
			e.saw(lease)
			e.log.Info("elected leader", slog.Int64("epoch", lease.Epoch))
			if err := e.lead(ctx, lease, lead); err != nil {
				e.log.Error("leading failed", slog.Any("error", err))
			}
		case errors.Is(err, tenant.ErrLeaseHeld):
			e.saw(lease)
			e.log.Debug("another process leads", slog.String("leader", lease.Holder), slog.Int64("epoch", lease.Epoch))
		case ctx.Err() == nil:
			e.log.Warn("cannot campaign for the lease", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jitter(e.opts.RenewEvery)):
		}
	}
}

// lead runs lead while renewing the lease, then releases it.
func (e *Elector) lead(ctx context.Context, lease tenant.Lease, lead func(context.Context, int64) error) error {
	leadCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	done := make(chan error, 1)
	go func() { done <- lead(leadCtx, lease.Epoch) }()

	// Renewals outlive ctx: a leader that is stopping keeps its lease until
	// its in-flight work is done. Time is this process's own monotonic
	// clock, counted from the last renewal it saw succeed.
	bg := context.WithoutCancel(ctx)
	renewEvery := e.opts.RenewEvery
	stepDownAfter := e.opts.TTL * 4 / 5
	renewed := time.Now()
	ticker := time.NewTicker(renewEvery)
	defer ticker.Stop()
	var result error
loop:
	for {
		select {
		case result = <-done:
			break loop
		case <-ticker.C:
			deadline := renewed.Add(stepDownAfter)
			rctx, cancel := context.WithDeadline(bg, deadline)
			next, err := e.leases.RenewLease(rctx, tenant.ControllerLease, e.opts.Identity, lease.Epoch, e.opts.TTL)
			cancel()
			switch {
			case err == nil:
				lease, renewed = next, time.Now()
				e.saw(lease)
			case errors.Is(err, tenant.ErrLeaseLost):
				e.log.Warn("lease lost; stepping down", slog.Int64("epoch", lease.Epoch))
				stop(tenant.ErrLeaseLost)
			case !time.Now().Before(deadline):
				e.log.Warn("lease not renewed in time; stepping down before it can expire", slog.Int64("epoch", lease.Epoch), slog.Any("error", err))
				stop(fmt.Errorf("%w: not renewed in time: %w", tenant.ErrLeaseLost, err))
			default:
				e.log.Warn("lease renewal failed; retrying", slog.Any("error", err))
			}
		}
	}
	rctx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if err := e.leases.ReleaseLease(rctx, tenant.ControllerLease, e.opts.Identity, lease.Epoch); err != nil {
		e.log.Warn("cannot release the lease; the next leader waits for it to expire", slog.Any("error", err))
	} else {
		e.log.Info("lease released", slog.Int64("epoch", lease.Epoch))
	}
	if result != nil {
		return fmt.Errorf("controller: leading under epoch %d: %w", lease.Epoch, result)
	}
	return nil
}
