package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	// listLeases reads the leases whose names begin with $1.
	listLeases = `SELECT name, holder, epoch, expires_at FROM leases WHERE starts_with(name, $1) ORDER BY name`
	// renewLeases extends, in one statement, each lease named in $2 that
	// $1 holds at the epoch beside its name in $3 and that has not expired
	// by the database's clock, until $4 microseconds from now. It locks the
	// rows FOR NO KEY UPDATE, as RenewLease does, which fenced writes (FOR
	// KEY SHARE) do not wait for.
	renewLeases = `UPDATE leases SET expires_at = date_trunc('microseconds', clock_timestamp()) + $4 * interval '1 microsecond'
FROM unnest($2::text[], $3::bigint[]) AS held(name, epoch)
WHERE leases.name = held.name AND leases.epoch = held.epoch AND leases.holder = $1 AND leases.expires_at > clock_timestamp()
RETURNING leases.name`
)

// ListLeases implements tenant.LeaseStore in one round trip. The clock is
// read before the leases, so that a renewal committed before it is seen:
// a lease is never judged expired by a clock later than the reading.
func (s *Store) ListLeases(ctx context.Context, prefix string) ([]tenant.Lease, time.Time, error) {
	var out []tenant.Lease
	var now time.Time
	err := s.retry(ctx, func() error {
		out = out[:0]
		b := &pgx.Batch{}
		b.Queue(dbNow)
		b.Queue(listLeases, prefix)
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		if err := br.QueryRow().Scan(&now); err != nil {
			return fmt.Errorf("read the database clock: %w", err)
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		for rows.Next() {
			l, err := scanLease(rows)
			if err != nil {
				return err
			}
			out = append(out, *l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return br.Close()
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: list leases %q: %w", prefix, err)
	}
	return out, now.UTC(), nil
}

// RenewLeases implements tenant.LeaseStore in one statement (one round
// trip, its own transaction), judging expiry by the database's clock.
func (s *Store) RenewLeases(ctx context.Context, holder string, held []tenant.Lease, ttl time.Duration) ([]tenant.Lease, error) {
	if _, err := tenant.LeaseExpiry(time.Time{}, ttl); err != nil {
		return nil, fmt.Errorf("postgres: renew leases: %w", err)
	}
	if len(held) == 0 {
		return nil, nil
	}
	names := make([]string, len(held))
	epochs := make([]int64, len(held))
	for i, l := range held {
		names[i], epochs[i] = l.Name, l.Epoch
	}
	renewed := map[string]bool{}
	err := s.retry(ctx, func() error {
		clear(renewed)
		rows, err := s.pool.Query(ctx, renewLeases, holder, names, epochs, ttl.Microseconds())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				return err
			}
			renewed[name] = true
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: renew %d leases of %s: %w", len(held), holder, err)
	}
	var lost []tenant.Lease
	for _, l := range held {
		if !renewed[l.Name] {
			lost = append(lost, l)
		}
	}
	return lost, nil
}
