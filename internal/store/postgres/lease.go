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
	selectLease = `SELECT name, holder, epoch, expires_at FROM leases WHERE name = $1`
	// dbNow is the database's clock, to the microsecond (timestamptz's
	// precision), by which lease expiry is judged: replicas on different
	// hosts must not judge it by clocks of their own.
	dbNow = `SELECT clock_timestamp()`
	// insertLease creates a lease that was never held. A concurrent first
	// acquisition makes it insert nothing (after waiting for the other to
	// commit), and the caller reads the other's row instead.
	insertLease = `INSERT INTO leases (name, holder, epoch, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO NOTHING`
	updateLease = `UPDATE leases SET holder = $2, epoch = $3, expires_at = $4 WHERE name = $1`
	// releaseLease expires the lease now, by the database's clock; never
	// later than it would have.
	releaseLease = `UPDATE leases SET expires_at = LEAST(expires_at, clock_timestamp()) WHERE name = $1 AND holder = $2 AND epoch = $3`
	// fenceEpoch reads the epoch of a tenant's fencing lease and holds it, FOR KEY SHARE,
	// until the observation's transaction ends: an AcquireLease that would
	// change hands (FOR UPDATE) waits for the observation to commit, and an
	// observation waits for an AcquireLease in progress, then sees its
	// epoch. The fence is therefore linearizable.
	fenceEpoch = `SELECT epoch FROM leases WHERE name = $1 FOR KEY SHARE`
)

// lockLease locks the named lease's row in tx (lock is a locking clause)
// and then reads the database's clock, in one round trip: the clock is read
// once the row is locked, so that waiting for the lock does not make the
// lease look younger than it is. The lease is nil when it was never held.
func lockLease(ctx context.Context, tx pgx.Tx, name, lock string) (*tenant.Lease, time.Time, error) {
	b := &pgx.Batch{}
	b.Queue(selectLease+" "+lock, name)
	b.Queue(dbNow)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	cur, err := scanLease(br.QueryRow())
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		cur = nil
	case err != nil:
		return nil, time.Time{}, err
	}
	var now time.Time
	if err := br.QueryRow().Scan(&now); err != nil {
		return nil, time.Time{}, fmt.Errorf("read the database clock: %w", err)
	}
	return cur, now.UTC(), br.Close()
}

// AcquireLease implements tenant.LeaseStore with tenant.ApplyLease, in one
// transaction that locks the lease's row, judging expiry by the database's
// clock. When another holder has the lease, it returns that lease with an
// error wrapping tenant.ErrLeaseHeld.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (tenant.Lease, error) {
	var out tenant.Lease
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		for range 3 { // leases are never deleted: twice is enough
			cur, now, err := lockLease(ctx, tx, name, "FOR UPDATE")
			if err != nil {
				return fmt.Errorf("postgres: acquire lease %q: %w", name, err)
			}
			next, err := tenant.ApplyLease(cur, name, holder, ttl, now)
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

// RenewLease implements tenant.LeaseStore, judging expiry by the database's
// clock. It returns an error wrapping tenant.ErrLeaseLost when holder no
// longer has the lease at epoch. The row is locked FOR NO KEY UPDATE, which
// fenced writes (FOR KEY SHARE) do not wait for.
func (s *Store) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (tenant.Lease, error) {
	var out tenant.Lease
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		cur, now, err := lockLease(ctx, tx, name, "FOR NO KEY UPDATE")
		if err != nil {
			return fmt.Errorf("postgres: renew lease %q: %w", name, err)
		}
		if cur == nil || cur.Holder != holder || cur.Epoch != epoch || !cur.ExpiresAt.After(now) {
			return fmt.Errorf("postgres: renew lease %q: %w: %s no longer holds it at epoch %d", name, tenant.ErrLeaseLost, holder, epoch)
		}
		expires, err := tenant.LeaseExpiry(now, ttl)
		if err != nil {
			return fmt.Errorf("postgres: renew lease %q: %w", name, err)
		}
		if _, err := tx.Exec(ctx, updateLease, name, holder, epoch, expires); err != nil {
			return fmt.Errorf("postgres: renew lease %q: %w", name, err)
		}
		out = tenant.Lease{Name: name, Holder: holder, Epoch: epoch, ExpiresAt: expires}
		return nil
	})
	if err != nil {
		return tenant.Lease{}, err
	}
	return out, nil
}

// ReleaseLease implements tenant.LeaseStore: it makes holder's lease at
// epoch expire now, by the database's clock, so that the next AcquireLease
// takes it over. A lease that has changed hands is left alone.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	if _, err := s.pool.Exec(ctx, releaseLease, name, holder, epoch); err != nil {
		return fmt.Errorf("postgres: release lease %q: %w", name, err)
	}
	return nil
}

// checkFence refuses, in tx, a write to the tenant whose epoch (an
// observation's or an event's) is not the epoch of its partition lease
// (tenant.FenceLease; 0 when it was never held), and keeps the lease from
// changing hands until tx ends.
func checkFence(ctx context.Context, tx pgx.Tx, tenantID string, epoch int64) error {
	return fenceResult(tx.QueryRow(ctx, fenceEpoch, tenant.FenceLease(tenantID)), epoch)
}

// fenceResult checks epoch against row, the answer to fenceEpoch.
func fenceResult(row pgx.Row, epoch int64) error {
	var leaseEpoch int64
	err := row.Scan(&leaseEpoch)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read the partition lease: %w", err)
	}
	return tenant.CheckFence(epoch, leaseEpoch)
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
