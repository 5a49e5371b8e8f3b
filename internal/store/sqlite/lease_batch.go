package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// listLeases reads the leases whose names begin with ?1 (substr, not LIKE,
// so that no character of the prefix is a pattern).
const listLeases = `SELECT name, holder, epoch, expires_at FROM leases WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name`

// ListLeases returns the leases whose names begin with prefix; see
// tenant.LeaseStore. Processes on one host share one clock, which judges
// their expiry.
func (s *Store) ListLeases(ctx context.Context, prefix string) ([]tenant.Lease, time.Time, error) {
	now := tenant.Timestamp(s.now())
	rows, err := s.query(ctx, listLeases, prefix)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("sqlite: list leases %q: %w", prefix, err)
	}
	defer rows.Close()
	var out []tenant.Lease
	for rows.Next() {
		var l tenant.Lease
		var expires int64
		if err := rows.Scan(&l.Name, &l.Holder, &l.Epoch, &expires); err != nil {
			return nil, time.Time{}, fmt.Errorf("sqlite: list leases %q: %w", prefix, err)
		}
		l.ExpiresAt = fromMicros(expires)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("sqlite: list leases %q: %w", prefix, err)
	}
	return out, now, nil
}

// RenewLeases extends the held leases holder still has, in one
// transaction; see tenant.LeaseStore.
func (s *Store) RenewLeases(ctx context.Context, holder string, held []tenant.Lease, ttl time.Duration) ([]tenant.Lease, error) {
	now := s.now()
	expires, err := tenant.LeaseExpiry(now, ttl)
	if err != nil {
		return nil, fmt.Errorf("sqlite: renew leases: %w", err)
	}
	if len(held) == 0 {
		return nil, nil
	}
	var lost []tenant.Lease
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		lost = lost[:0]
		renew, err := s.txStmt(ctx, tx, renewLease)
		if err != nil {
			return err
		}
		for _, l := range held {
			res, err := renew.ExecContext(ctx, micros(expires), l.Name, holder, l.Epoch, micros(tenant.Timestamp(now)))
			if err != nil {
				return fmt.Errorf("sqlite: renew lease %q: %w", l.Name, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				lost = append(lost, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return lost, nil
}
