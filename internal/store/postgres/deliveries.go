package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Deliveries of the outbox's events to subscriptions, and their attempts
// (events.Store). The dispatcher's writes, FanOut and RecordAttempt, are
// fenced by its lease.

const (
	// eventsFence finds the dispatcher's lease ($1) held by $2 at epoch $3
	// and live by the database's clock, and holds its row FOR KEY SHARE
	// until the write's transaction ends: an AcquireLease that would take
	// the lease over (FOR UPDATE) waits for the write to commit, and a
	// write waits for an AcquireLease in progress, then finds the lease
	// changed (READ COMMITTED checks the condition again on the row it
	// waited for). The fence is therefore linearizable, as tenants' is
	// (fenceEpoch). A renewal (FOR NO KEY UPDATE) does not wait.
	eventsFence = `SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp() FOR KEY SHARE`

	// moveCursor moves subscription $1's cursor from $2 to $3.
	moveCursor = `UPDATE subscriptions SET cursor = $3 WHERE id = $1 AND cursor = $2`
	// fanOut records for subscription $1 a pending delivery, due at $4,
	// of each event at a position of $2 and key of $3; those it has
	// already stay as they are.
	fanOut = `INSERT INTO deliveries (subscription_id, position, key, state, next_attempt_at, created_at, updated_at)
SELECT $1, d.position, d.key, 'pending', $4, $4, $4 FROM unnest($2::bigint[], $3::text[]) AS d (position, key)
ON CONFLICT (subscription_id, position) DO NOTHING`

	deliveryColumns = `d.subscription_id, d.position, o.id, o.type, o.subject, d.key, d.state, d.attempts, d.tries, d.next_attempt_at,
	d.last_status, d.last_error, d.created_at, d.updated_at`
	selectDelivery = `SELECT ` + deliveryColumns + ` FROM deliveries d JOIN outbox o ON o.position = d.position`

	// dueDeliveries are the pending deliveries due at $1 of enabled
	// subscriptions, each the first pending of its subscription's key,
	// at most $2, the longest due first. The first of each key is found
	// in one pass of the pending deliveries (DISTINCT ON), a first that is
	// not due yet holding its key back; the events of the few chosen are
	// then looked up by position, one index probe each, whatever the
	// planner believes of the tables' sizes (a young outbox has no
	// statistics, and a join planned for an empty one scans it per row).
	dueDeliveries = `WITH heads AS MATERIALIZED (
	SELECT DISTINCT ON (subscription_id, key) * FROM deliveries WHERE state = 'pending' ORDER BY subscription_id, key, position),
d AS MATERIALIZED (SELECT h.* FROM heads h WHERE h.next_attempt_at <= $1
	AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = h.subscription_id AND s.enabled)
	ORDER BY h.next_attempt_at, h.position LIMIT $2)
SELECT ` + deliveryColumns + ` FROM d CROSS JOIN LATERAL (SELECT id, type, subject FROM outbox WHERE position = d.position) o
ORDER BY d.next_attempt_at, d.position`

	// recordAttempt writes, in one statement, the state of subscription
	// $1's delivery of the event at position $2 after an attempt ($3 to
	// $7), the attempt, numbered with the delivery's tries ($8 to $10),
	// and, when $11 is not '', the subscription's disabling with that
	// reason. A delivery that is gone (its subscription or its event
	// deleted meanwhile) matches no row, and the statement then writes
	// nothing.
	recordAttempt = `WITH f AS (SELECT 1 FROM leases WHERE name = $12 AND holder = $13 AND epoch = $14 AND expires_at > clock_timestamp() FOR KEY SHARE),
d AS (UPDATE deliveries SET state = $3, attempts = attempts + 1, tries = tries + 1, next_attempt_at = $4,
		last_status = $5, last_error = $6, updated_at = $7
	WHERE subscription_id = $1 AND position = $2 AND EXISTS (SELECT 1 FROM f) RETURNING tries),
a AS (INSERT INTO delivery_attempts (subscription_id, position, number, time, status, latency_us, error, response)
	SELECT $1, $2, d.tries, $8, $5, $9, $6, $10 FROM d),
off AS (UPDATE subscriptions SET enabled = false, disabled_reason = $11, version = version + 1, updated_at = $7
	WHERE id = $1 AND $11 <> '' AND EXISTS (SELECT 1 FROM d))
SELECT (SELECT count(*) FROM f), (SELECT count(*) FROM d)`

	// listDeliveries pages subscription $1's deliveries before position
	// $2, of state $3 unless it is '', newest first.
	listDeliveries = selectDelivery + ` WHERE d.subscription_id = $1 AND d.position < $2 AND ($3 = '' OR d.state = $3)
ORDER BY d.position DESC LIMIT $4`
	selectAttempts = `SELECT number, time, status, latency_us, error, response FROM delivery_attempts
WHERE subscription_id = $1 AND position = $2 ORDER BY number`

	// redeliver makes subscription $1's deliveries of the events at the
	// positions $2 (of keys $3) pending and due at $4, creating those it
	// lacks; attempts start again from 0, tries go on counting.
	redeliver = `INSERT INTO deliveries (subscription_id, position, key, state, next_attempt_at, created_at, updated_at)
SELECT $1, r.position, r.key, 'pending', $4, $4, $4 FROM unnest($2::bigint[], $3::text[]) AS r (position, key)
ON CONFLICT (subscription_id, position) DO UPDATE SET state = 'pending', attempts = 0,
	next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at`

	deliveryStats = `SELECT count(*), min(o.time) FROM deliveries d JOIN outbox o ON o.position = d.position WHERE d.state = 'pending'`
)

// checkEventsFence returns events.ErrFenced unless f's lease is held by
// f.Holder at f.Epoch and live, holding it until tx ends (eventsFence).
func checkEventsFence(ctx context.Context, tx pgx.Tx, f events.Fence) error {
	var one int
	err := tx.QueryRow(ctx, eventsFence, f.Lease, f.Holder, f.Epoch).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w (epoch %d of %s)", events.ErrFenced, f.Epoch, f.Lease)
	}
	if err != nil {
		return fmt.Errorf("postgres: read the %s lease: %w", f.Lease, err)
	}
	return nil
}

// FanOut implements events.Store: in one transaction it checks the fence,
// moves the cursor (a cursor that moved meanwhile is events.ErrConflict)
// and records the deliveries.
func (s *Store) FanOut(ctx context.Context, f events.Fence, subscription string, from, to int64, ds []events.NewDelivery) error {
	now := tenant.Timestamp(s.now())
	positions, keys := make([]int64, len(ds)), make([]string, len(ds))
	for i, d := range ds {
		positions[i], keys[i] = d.Position, d.Key
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := checkEventsFence(ctx, tx, f); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, moveCursor, subscription, from, to)
		if err != nil {
			return fmt.Errorf("postgres: fan out to subscription %s: %w", subscription, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: subscription %s is gone or its cursor moved from %d", events.ErrConflict, subscription, from)
		}
		if len(ds) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, fanOut, subscription, positions, keys, now); err != nil {
			return fmt.Errorf("postgres: fan out %d events to subscription %s: %w", len(ds), subscription, err)
		}
		return nil
	})
}

func scanDelivery(row pgx.Row) (events.Delivery, error) {
	var d events.Delivery
	err := row.Scan(&d.Subscription, &d.Position, &d.EventID, &d.Type, &d.Subject, &d.Key, &d.State, &d.Attempts, &d.Tries, &d.NextAttemptAt,
		&d.LastStatus, &d.LastError, &d.CreatedAt, &d.UpdatedAt)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = d.NextAttemptAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, err
}

// DueDeliveries implements events.Store. A busy key leaves out at most one
// row (its first pending delivery), so reading limit+len(busy) rows finds
// limit that are not busy whenever there are.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, limit int, busy map[string]bool) ([]events.Delivery, error) {
	rows, err := s.pool.Query(ctx, dueDeliveries, tenant.Timestamp(now), max(limit, 0)+len(busy))
	if err != nil {
		return nil, fmt.Errorf("postgres: read due deliveries: %w", unavailable(err))
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Delivery, error) { return scanDelivery(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: read due deliveries: %w", unavailable(err))
	}
	var out []events.Delivery
	for _, d := range all {
		if len(out) < limit && !busy[d.Subscription+"\x00"+d.Key] {
			out = append(out, d)
		}
	}
	return out, nil
}

// RecordAttempt implements events.Store: the fence and the writes in one
// statement (recordAttempt), one round trip: the lease's row is held FOR
// KEY SHARE until it commits, so that the lease cannot change hands
// between the check and the write. A delivery that is gone (its
// subscription or its event deleted meanwhile) records nothing and is no
// error.
func (s *Store) RecordAttempt(ctx context.Context, f events.Fence, a events.Attempt, next events.DeliveryUpdate, disable string) error {
	now := tenant.Timestamp(s.now())
	var fenced, written int
	err := s.pool.QueryRow(ctx, recordAttempt, a.Subscription, a.Position, string(next.State), tenant.Timestamp(next.NextAttemptAt),
		a.Status, a.Error, now, tenant.Timestamp(a.Time), a.Latency.Microseconds(), a.Response, disable,
		f.Lease, f.Holder, f.Epoch).Scan(&fenced, &written)
	if err != nil {
		return fmt.Errorf("postgres: record attempt at event %d to subscription %s: %w", a.Position, a.Subscription, unavailable(err))
	}
	if fenced == 0 {
		return fmt.Errorf("%w (epoch %d of %s)", events.ErrFenced, f.Epoch, f.Lease)
	}
	return nil
}

// Deliveries implements events.Store. The page token is the position of
// the last delivery of the page before.
func (s *Store) Deliveries(ctx context.Context, subscription string, opts events.DeliveryListOptions) (*events.DeliveryPage, error) {
	before, err := events.DeliveryPageStart(opts.PageToken)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	size := tenant.ClampPageSize(opts.PageSize)
	rows, err := s.pool.Query(ctx, listDeliveries, subscription, before, string(opts.State), size+1)
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", unavailable(err))
	}
	ds, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Delivery, error) { return scanDelivery(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list deliveries: %w", unavailable(err))
	}
	return events.Page(ds, size), nil
}

// Delivery implements events.Store: events.ErrNotFound when the
// subscription has no delivery of the event.
func (s *Store) Delivery(ctx context.Context, subscription, eventID string) (*events.Delivery, []events.Attempt, error) {
	d, err := scanDelivery(s.pool.QueryRow(ctx, selectDelivery+` WHERE d.subscription_id = $1 AND o.id = $2`, subscription, eventID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("%w: subscription %s has no delivery of event %q", events.ErrNotFound, subscription, eventID)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: read delivery: %w", unavailable(err))
	}
	rows, err := s.pool.Query(ctx, selectAttempts, subscription, d.Position)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: read attempts: %w", unavailable(err))
	}
	attempts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Attempt, error) {
		a := events.Attempt{Subscription: subscription, Position: d.Position}
		var latency int64
		err := row.Scan(&a.Number, &a.Time, &a.Status, &latency, &a.Error, &a.Response)
		a.Time, a.Latency = a.Time.UTC(), time.Duration(latency)*time.Microsecond
		return a, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: read attempts: %w", unavailable(err))
	}
	return &d, attempts, nil
}

// Redeliver implements events.Store. The events of a time range are those
// that pass the subscription's filters (events.Subscription.Matches); one
// named by id is sent whatever they say.
func (s *Store) Redeliver(ctx context.Context, subscription string, sel events.Redelivery) (int, error) {
	sub, err := s.Subscription(ctx, subscription)
	if err != nil {
		return 0, err
	}
	recs, err := events.Selected(ctx, sub, sel, s.OutboxEvent, s.outboxBetween)
	if err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, nil
	}
	positions, keys := make([]int64, len(recs)), make([]string, len(recs))
	for i, r := range recs {
		positions[i], keys[i] = r.Position, r.Key
	}
	if _, err := s.pool.Exec(ctx, redeliver, sub.ID, positions, keys, tenant.Timestamp(s.now())); err != nil {
		return 0, fmt.Errorf("postgres: redeliver %d events to subscription %s: %w", len(recs), sub.ID, unavailable(err))
	}
	return len(recs), nil
}

// outboxBetween reads the positioned events written in [since, until), in
// position order.
func (s *Store) outboxBetween(ctx context.Context, since, until time.Time) ([]events.Record, error) {
	rows, err := s.pool.Query(ctx, selectRecord+` WHERE position IS NOT NULL AND time >= $1 AND time < $2 ORDER BY position`,
		tenant.Timestamp(since), tenant.Timestamp(until))
	if err != nil {
		return nil, fmt.Errorf("postgres: read the outbox: %w", unavailable(err))
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Record, error) { return scanRecord(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: read the outbox: %w", unavailable(err))
	}
	return recs, nil
}

// DeliveryStats implements events.Store.
func (s *Store) DeliveryStats(ctx context.Context) (int, time.Time, error) {
	var (
		n      int
		oldest *time.Time
	)
	if err := s.pool.QueryRow(ctx, deliveryStats).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("postgres: count deliveries: %w", unavailable(err))
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, oldest.UTC(), nil
}
