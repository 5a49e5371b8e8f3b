// Package leader holds a named lease for work that one replica at a time
// does (the rollout driver, the webhook dispatcher): acquired when free,
// renewed while held, given up on the way out.
package leader

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Lease is one replica's hold of a named lease. Its zero value needs Leases,
// Name, Identity, TTL and Log set. Without Leases, Lead always says yes
// (a store without leases: one process). A Lease is used by one goroutine.
type Lease struct {
	Leases   tenant.LeaseStore
	Name     string        // the lease's name
	Identity string        // this replica, the holder
	TTL      time.Duration // how long a renewal holds it
	// Doing says what the holder does, for the log: "driving the
	// rollouts"; Others what another replica does once it holds it:
	// "another replica drives them".
	Doing, Others string
	Log           *slog.Logger
	// Now is the clock by which renewals are spaced; nil is time.Now.
	Now func() time.Time

	held    *tenant.Lease
	renewed time.Time
}

// Lead reports whether this replica holds the lease, acquiring it when it
// is free and renewing it once a third of its TTL has passed since it was
// last renewed.
func (l *Lease) Lead(ctx context.Context) bool {
	if l.Leases == nil {
		return true
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	if l.held != nil && now().Sub(l.renewed) < l.TTL/3 {
		return true
	}
	var (
		next tenant.Lease
		err  error
	)
	if l.held != nil {
		next, err = l.Leases.RenewLease(ctx, l.Name, l.Identity, l.held.Epoch, l.TTL)
	} else {
		next, err = l.Leases.AcquireLease(ctx, l.Name, l.Identity, l.TTL)
	}
	switch {
	case err == nil:
		if l.held == nil {
			l.Log.Info(l.Doing, slog.Int64("epoch", next.Epoch))
		}
		l.held, l.renewed = &next, now()
		return true
	case errors.Is(err, tenant.ErrLeaseHeld):
	case errors.Is(err, tenant.ErrLeaseLost):
		l.Log.Warn("lost the " + l.Name + " lease; " + l.Others)
	default:
		if ctx.Err() == nil {
			l.Log.Warn("cannot read the "+l.Name+" lease", slog.Any("error", err))
		}
	}
	l.held = nil
	return false
}

// Epoch is the epoch of the lease held, 0 when none is.
func (l *Lease) Epoch() int64 {
	if l.held == nil {
		return 0
	}
	return l.held.Epoch
}

// Release gives the lease up, if held, so that another replica need not
// wait for it to expire.
func (l *Lease) Release() {
	if l.held == nil || l.Leases == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Leases.ReleaseLease(ctx, l.Name, l.Identity, l.held.Epoch); err != nil {
		l.Log.Warn("cannot release the "+l.Name+" lease; it expires", slog.Any("error", err))
	}
	l.held = nil
}
