package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	selectLeaseForUpdate = `SELECT name, holder, epoch, expires_at FROM leases WHERE name = $1 FOR UPDATE`
	// insertLease creates a lease that was never held. A concurrent first
	// acquisition makes it insert nothing (after waiting for the other to
	// commit), and the caller reads the other's row instead.
	insertLease = `INSERT INTO leases (name, holder, epoch, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO NOTHING`
	updateLease = `UPDATE leases SET holder = $2, epoch = $3, expires_at = $4 WHERE name = $1`
	renewLease  = `UPDATE leases SET expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > $5
RETURNING name, holder, epoch, expires_at`
	// releaseLease expires the lease now; never later than it would have.
	releaseLease = `UPDATE leases SET expires_at = LEAST(expires_at, $4) WHERE name = $1 AND holder = $2 AND epoch = $3`
	// fenceEpoch reads the controller lease's epoch and holds it, FOR KEY SHARE,
	// until the observation's transaction ends: an AcquireLease that would
	// change hands (FOR UPDATE) waits for the observation to commit, and an
	// observation waits for an AcquireLease in progress, then sees its
	// epoch. The fence is therefore linearizable.
	fenceEpoch = `SELECT epoch FROM leases WHERE name = $1 FOR KEY SHARE`
)

// AcquireLease implements tenant.LeaseStore with tenant.ApplyLease, in one
// transaction that locks the lease's row. When another holder has the lease,
// it returns that lease with an error wrapping tenant.ErrLeaseHeld.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (tenant.Lease, error) {
	var out tenant.Lease
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for range 3 { // leases are never deleted: twice is enough
			cur, err := scanLease(tx.QueryRow(ctx, selectLeaseForUpdate, name))
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				cur = nil
			case err != nil:
				return fmt.Errorf("postgres: acquire lease %q: %w", name, err)
			}
			// The clock is read once the row is locked: waiting for the lock
			// must not make the lease look younger than it is.
			next, err := tenant.ApplyLease(cur, name, holder, ttl, s.now())
			out = next
			if err != nil {
				return fmt.Errorf("postgres: acquire lease %q: %w", name, err)
			}
			if cur != nil {
				if _, err := tx.Exec(ctx, updateLease, next.Name, next.Holder, next.Epoch, next.ExpiresAt); err != nil {
					return fmt.Errorf("postgres: acquire lease %q: %w", name, err)
				}
				return nil
			}
			tag, err := tx.Exec(ctx, insertLease, next.Name, next.Holder, next.Epoch, next.ExpiresAt)
			if err != nil {
				return fmt.Errorf("postgres: acquire lease %q: %w", name, err)
			}
			if tag.RowsAffected() == 1 {
				return nil
			}
			// Someone else created the lease meanwhile: start again from
			// their row, which the next statement's snapshot sees.
		}
		return fmt.Errorf("postgres: acquire lease %q: the lease keeps disappearing", name)
	})
	if err != nil && !errors.Is(err, tenant.ErrLeaseHeld) {
		return tenant.Lease{}, err
	}
	return out, err
}

// RenewLease implements tenant.LeaseStore. It returns an error wrapping
// tenant.ErrLeaseLost when holder no longer has the lease at epoch.
func (s *Store) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (tenant.Lease, error) {
	now := s.now()
	expires, err := tenant.LeaseExpiry(now, ttl)
	if err != nil {
		return tenant.Lease{}, err
	}
	l, err := scanLease(s.pool.QueryRow(ctx, renewLease, name, holder, epoch, expires, tenant.Timestamp(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return tenant.Lease{}, fmt.Errorf("postgres: renew lease %q: %w: %s no longer holds it at epoch %d", name, tenant.ErrLeaseLost, holder, epoch)
	}
	if err != nil {
		return tenant.Lease{}, fmt.Errorf("postgres: renew lease %q: %w", name, err)
	}
	return *l, nil
}

// ReleaseLease implements tenant.LeaseStore: it makes holder's lease at
// epoch expire now, so that the next AcquireLease takes it over. A lease
// that has changed hands is left alone.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	now := tenant.Timestamp(s.now())
	if _, err := s.pool.Exec(ctx, releaseLease, name, holder, epoch, now); err != nil {
		return fmt.Errorf("postgres: release lease %q: %w", name, err)
	}
	return nil
}

// checkFence refuses, in tx, an observation whose epoch is not the
// controller lease's (0 when it was never held), and keeps the lease from
// changing hands until tx ends.
func (s *Store) checkFence(ctx context.Context, tx pgx.Tx, obs tenant.Observation) error {
	var epoch int64
	err := tx.QueryRow(ctx, fenceEpoch, tenant.ControllerLease).Scan(&epoch)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read the controller lease: %w", err)
	}
	return tenant.CheckFence(obs, epoch)
}

func scanLease(row pgx.Row) (*tenant.Lease, error) {
	var l tenant.Lease
	if err := row.Scan(&l.Name, &l.Holder, &l.Epoch, &l.ExpiresAt); err != nil {
		return nil, err
	}
	l.ExpiresAt = l.ExpiresAt.UTC()
	return &l, nil
}

var _ tenant.LeaseStore = (*Store)(nil)
