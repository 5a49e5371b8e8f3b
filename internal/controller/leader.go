package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// ElectorOptions configure an Elector.
type ElectorOptions struct {
	// Lease names the lease; default tenant.ControllerLease.
	Lease string
	// Identity names this process as the lease holder; required.
	Identity string
	// TTL is how long the lease lasts without renewal: how long the others
	// wait for a leader that died. It is renewed every TTL/3. Default 15s.
	TTL time.Duration
	// Logger receives election lines; nil discards them.
	Logger *slog.Logger
}

// Elector runs a function while this process holds a lease, so that one
// process among those sharing a database leads.
type Elector struct {
	leases tenant.LeaseStore
	opts   ElectorOptions
	log    *slog.Logger
}

// NewElector returns an Elector over leases.
func NewElector(leases tenant.LeaseStore, opts ElectorOptions) (*Elector, error) {
	if opts.Identity == "" {
		return nil, errors.New("controller: an elector needs an identity")
	}
	if opts.Lease == "" {
		opts.Lease = tenant.ControllerLease
	}
	if opts.TTL <= 0 {
		opts.TTL = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Elector{leases: leases, opts: opts, log: opts.Logger.With(slog.String("lease", opts.Lease), slog.String("identity", opts.Identity))}, nil
}

// Run campaigns for the lease until ctx ends. Whenever it holds the lease it
// calls lead with a context that ends when the lease is lost (or ctx ends)
// and the lease's epoch; when lead returns it releases the lease, so that a
// successor takes over at once, and campaigns again.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context, epoch int64) error) error {
	retry := e.opts.TTL / 3
	for {
		lease, err := e.leases.AcquireLease(ctx, e.opts.Lease, e.opts.Identity, e.opts.TTL)
		switch {
		case err == nil:
			e.log.Info("elected leader", slog.Int64("epoch", lease.Epoch))
			if err := e.lead(ctx, lease, lead); err != nil {
				return err
			}
		case errors.Is(err, tenant.ErrLeaseHeld):
			e.log.Debug("another process leads", slog.String("leader", lease.Holder), slog.Int64("epoch", lease.Epoch))
		case ctx.Err() == nil:
			e.log.Warn("cannot campaign for the lease", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jitter(retry)):
		}
	}
}

// lead runs lead while renewing the lease every TTL/3.
func (e *Elector) lead(ctx context.Context, lease tenant.Lease, lead func(context.Context, int64) error) error {
	leadCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- lead(leadCtx, lease.Epoch) }()

	ticker := time.NewTicker(e.opts.TTL / 3)
	defer ticker.Stop()
	var result error
loop:
	for {
		select {
		case result = <-done:
			break loop
		case <-ticker.C:
			renewed, err := e.leases.RenewLease(ctx, e.opts.Lease, e.opts.Identity, lease.Epoch, e.opts.TTL)
			switch {
			case err == nil:
				lease = renewed
			case errors.Is(err, tenant.ErrLeaseLost):
				e.log.Warn("lease lost; stepping down", slog.Int64("epoch", lease.Epoch))
				stop()
			case time.Now().After(lease.ExpiresAt):
				// Could not renew in time: another process may lead by now.
				e.log.Warn("lease expired without renewal; stepping down", slog.Any("error", err))
				stop()
			default:
				e.log.Warn("lease renewal failed; retrying", slog.Any("error", err))
			}
		}
	}
	// Give the lease up whatever happened, with a context of its own: ctx
	// may be over, and a successor should not wait out the TTL.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.leases.ReleaseLease(rctx, e.opts.Lease, e.opts.Identity, lease.Epoch); err != nil {
		e.log.Warn("cannot release the lease; the next leader waits for it to expire", slog.Any("error", err))
	} else {
		e.log.Info("lease released", slog.Int64("epoch", lease.Epoch))
	}
	if result != nil && ctx.Err() == nil {
		return fmt.Errorf("controller: leading under epoch %d: %w", lease.Epoch, result)
	}
	return nil
}
