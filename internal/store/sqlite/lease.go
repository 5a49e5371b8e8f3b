package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	selectLease = `SELECT holder, epoch, expires_at FROM leases WHERE name = ?`
	upsertLease = `INSERT INTO leases (name, holder, epoch, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, expires_at = excluded.expires_at`
	renewLease   = `UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > ?`
	releaseLease = `UPDATE leases SET expires_at = min(expires_at, ?) WHERE name = ? AND holder = ? AND epoch = ?`
)

// AcquireLease takes or extends a lease; see tenant.LeaseStore. Processes on
// one host share one clock, which is what SQLite's leases rely on.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (tenant.Lease, error) {
	var out tenant.Lease
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, err := s.readLease(ctx, tx, name)
		if err != nil {
			return err
		}
		next, err := tenant.ApplyLease(cur, name, holder, ttl, s.now())
		out = next
		if err != nil {
			return err
		}
		upsert, err := s.txStmt(ctx, tx, upsertLease)
		if err != nil {
			return err
		}
		if _, err := upsert.ExecContext(ctx, name, next.Holder, next.Epoch, micros(next.ExpiresAt)); err != nil {
			return fmt.Errorf("sqlite: acquire lease %q: %w", name, err)
		}
		return nil
	})
	return out, err
}

// readLease returns the named lease, or nil when it was never held.
func (s *Store) readLease(ctx context.Context, tx *sql.Tx, name string) (*tenant.Lease, error) {
	read, err := s.txStmt(ctx, tx, selectLease)
	if err != nil {
		return nil, err
	}
	l := tenant.Lease{Name: name}
	var expires int64
	err = read.QueryRowContext(ctx, name).Scan(&l.Holder, &l.Epoch, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: read lease %q: %w", name, err)
	}
	l.ExpiresAt = fromMicros(expires)
	return &l, nil
}

// RenewLease extends a held lease; see tenant.LeaseStore.
func (s *Store) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (tenant.Lease, error) {
	now := s.now()
	expires, err := tenant.LeaseExpiry(now, ttl)
	if err != nil {
		return tenant.Lease{}, err
	}
	l := tenant.Lease{Name: name, Holder: holder, Epoch: epoch, ExpiresAt: expires}
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		renew, err := s.txStmt(ctx, tx, renewLease)
		if err != nil {
			return err
		}
		res, err := renew.ExecContext(ctx, micros(l.ExpiresAt), name, holder, epoch, micros(tenant.Timestamp(now)))
		if err != nil {
			return fmt.Errorf("sqlite: renew lease %q: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %s no longer holds %q at epoch %d", tenant.ErrLeaseLost, holder, name, epoch)
		}
		return nil
	})
	return l, err
}

// ReleaseLease gives a lease up; see tenant.LeaseStore.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		release, err := s.txStmt(ctx, tx, releaseLease)
		if err != nil {
			return err
		}
		// Expired now: the next AcquireLease takes it with a new epoch.
		if _, err := release.ExecContext(ctx, micros(tenant.Timestamp(s.now())), name, holder, epoch); err != nil {
			return fmt.Errorf("sqlite: release lease %q: %w", name, err)
		}
		return nil
	})
}

// fenceEpoch is the epoch of the lease that fences writes to the tenant
// (tenant.FenceLease), 0 when never held.
func (s *Store) fenceEpoch(ctx context.Context, tx *sql.Tx, tenantID string) (int64, error) {
	l, err := s.readLease(ctx, tx, tenant.FenceLease(tenantID))
	if l == nil || err != nil {
		return 0, err
	}
	return l.Epoch, nil
}

var _ tenant.LeaseStore = (*Store)(nil)
