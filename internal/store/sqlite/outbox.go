package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/store/jsonrow"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The outbox is written by the triggers of migration 00011, in the
// transactions of the changes its events report; this file reads it and
// keeps the subscriptions and their deliveries (events.Store).

const outboxColumns = `position, id, type, subject, key, time, data, tenant`

// SequenceOutbox implements events.Store: SQLite commits one transaction
// at a time, so an event's position, given as it is written, is its
// commit order already.
func (s *Store) SequenceOutbox(context.Context, int) (int, error) { return 0, nil }

// ReadOutbox implements events.Store.
func (s *Store) ReadOutbox(ctx context.Context, after int64, limit int, types []events.Type) ([]events.Record, error) {
	q := `SELECT ` + outboxColumns + ` FROM outbox WHERE position > ?`
	args := []any{after}
	if len(types) > 0 {
		q += ` AND type IN (?` + strings.Repeat(", ?", len(types)-1) + `)`
		for _, t := range types {
			args = append(args, string(t))
		}
	}
	q += ` ORDER BY position LIMIT ?`
	args = append(args, limit)
	rows, err := s.read.QueryContext(ctx, q, args...)
	return collectRecords(rows, err)
}

// collectRecords reads the records of a query of outboxColumns (err its
// error) and closes it.
func collectRecords(rows *sql.Rows, err error) ([]events.Record, error) {
	if err != nil {
		return nil, fmt.Errorf("sqlite: read the outbox: %w", unavailable(err))
	}
	defer rows.Close()
	var out []events.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read the outbox: %w", unavailable(err))
	}
	return out, nil
}

// OutboxEvent implements events.Store: by the position its id holds
// (events.IDKey).
func (s *Store) OutboxEvent(ctx context.Context, id string) (events.Record, error) {
	notFound := fmt.Errorf("%w: event %q (events are kept for events.retention)", events.ErrNotFound, id)
	position, ok := events.IDKey(id)
	if !ok {
		return events.Record{}, notFound
	}
	row, err := s.queryRow(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE position = ? AND id = ?`, position, id)
	if err != nil {
		return events.Record{}, err
	}
	r, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound
	}
	return r, err
}

// OutboxHead implements events.Store.
func (s *Store) OutboxHead(ctx context.Context) (int64, error) {
	row, err := s.queryRow(ctx, `SELECT coalesce(max(position), 0) FROM outbox`)
	if err != nil {
		return 0, err
	}
	var head int64
	if err := row.Scan(&head); err != nil {
		return 0, fmt.Errorf("sqlite: read the outbox: %w", unavailable(err))
	}
	return head, nil
}

// PruneOutbox implements events.Store. It deletes at most 1,000 events a
// call, and keeps the newest event whatever its age: OutboxHead reads the
// head from it, and must not go back (to 0 once every event was pruned),
// as the PostgreSQL store's, which counts the next positions from it,
// must not either.
func (s *Store) PruneOutbox(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM outbox WHERE position IN (SELECT position FROM outbox WHERE time < ?
			AND position < (SELECT max(position) FROM outbox)
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.position = outbox.position AND d.state = 'pending') ORDER BY position LIMIT 1000)`, micros(before))
		if err != nil {
			return fmt.Errorf("sqlite: prune the outbox: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// scanRecord reads a row of outboxColumns.
func scanRecord(row scanner) (events.Record, error) {
	var (
		r          events.Record
		at         int64
		data       string
		tenantText sql.NullString
	)
	if err := row.Scan(&r.Position, &r.ID, &r.Type, &r.Subject, &r.Key, &at, &data, &tenantText); err != nil {
		return r, err
	}
	r.Time = fromMicros(at)
	if !tenantText.Valid {
		r.Data = json.RawMessage(data)
		return r, nil
	}
	h := &tenant.Event{}
	if err := json.Unmarshal([]byte(data), h); err != nil {
		return r, fmt.Errorf("sqlite: event %s: decode its history entry: %w", r.ID, err)
	}
	h.Time = r.Time
	if len(h.Changed) == 0 {
		h.Changed = nil
	}
	r.History = h
	cols, err := jsonrow.Parse([]byte(tenantText.String))
	if err == nil {
		r.Tenant, err = scanTenant(cols)
	}
	if err != nil {
		return r, fmt.Errorf("sqlite: event %s: decode its tenant: %w", r.ID, err)
	}
	return r, nil
}

const subscriptionColumns = `id, name, url, types, labels, secrets, description, enabled, disabled_reason, cursor, version, created_at, updated_at, created_by`

// selectSubscription reads what scanSubscription does: the columns and the
// count of pending deliveries (from deliveries_key, which holds only those).
const selectSubscription = `SELECT ` + subscriptionColumns + `,
	(SELECT count(*) FROM deliveries d WHERE d.subscription_id = subscriptions.id AND d.state = 'pending') FROM subscriptions`

func scanSubscription(row scanner) (*events.Subscription, error) {
	var (
		sub                    events.Subscription
		types, labels, secrets string
		created, updated       int64
	)
	err := row.Scan(&sub.ID, &sub.Name, &sub.URL, &types, &labels, &secrets, &sub.Description, &sub.Enabled, &sub.DisabledReason,
		&sub.Cursor, &sub.Version, &created, &updated, &sub.CreatedBy, &sub.Pending)
	if err != nil {
		return nil, err
	}
	sub.CreatedAt, sub.UpdatedAt = fromMicros(created), fromMicros(updated)
	for _, f := range []struct {
		raw string
		dst any
	}{{types, &sub.Types}, {labels, &sub.Labels}, {secrets, &sub.Secrets}} {
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return nil, fmt.Errorf("sqlite: subscription %s: decode column: %w", sub.ID, err)
		}
	}
	if len(sub.Labels) == 0 {
		sub.Labels = nil
	}
	if len(sub.Types) == 0 {
		sub.Types = nil
	}
	return &sub, nil
}

// CreateSubscription implements events.Store.
func (s *Store) CreateSubscription(ctx context.Context, in *events.Subscription) (*events.Subscription, error) {
	sub := *in
	now := tenant.Timestamp(s.now())
	sub.Version, sub.CreatedAt, sub.UpdatedAt = 1, now, now
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(position), 0) FROM outbox`).Scan(&sub.Cursor); err != nil {
			return fmt.Errorf("sqlite: create subscription %s: %w", sub.Name, err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sub.ID, sub.Name, sub.URL, jsonText(sub.Types, "[]"), jsonText(sub.Labels, "{}"), jsonText(sub.Secrets, "[]"), sub.Description,
			sub.Enabled, sub.DisabledReason, sub.Cursor, sub.Version, micros(sub.CreatedAt), micros(sub.UpdatedAt), sub.CreatedBy)
		if isPrimaryKeyViolation(err) {
			return fmt.Errorf("%w: subscription id %s is already used", events.ErrConflict, sub.ID)
		}
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: a subscription is called %q already; choose another name", events.ErrNameTaken, sub.Name)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create subscription %s: %w", sub.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &sub, nil
}

// Subscription implements events.Store.
func (s *Store) Subscription(ctx context.Context, idOrName string) (*events.Subscription, error) {
	row, err := s.queryRow(ctx, selectSubscription+` WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1`, idOrName)
	if err != nil {
		return nil, err
	}
	sub, err := scanSubscription(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no subscription %q; list them with GET /v1/subscriptions", events.ErrNotFound, idOrName)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: read subscription %q: %w", idOrName, unavailable(err))
	}
	return sub, nil
}

// Subscriptions implements events.Store.
func (s *Store) Subscriptions(ctx context.Context) ([]*events.Subscription, error) {
	rows, err := s.query(ctx, selectSubscription+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list subscriptions: %w", unavailable(err))
	}
	defer rows.Close()
	var out []*events.Subscription
	for rows.Next() {
		sub, err := scanSubscription(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list subscriptions: %w", err)
		}
		out = append(out, sub)
	}
	return out, unavailable(rows.Err())
}

// UpdateSubscription implements events.Store.
func (s *Store) UpdateSubscription(ctx context.Context, in *events.Subscription) (*events.Subscription, error) {
	sub := *in
	sub.UpdatedAt = tenant.Timestamp(s.now())
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE subscriptions SET name = ?, url = ?, types = ?, labels = ?, secrets = ?, description = ?,
			enabled = ?, disabled_reason = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ?`,
			sub.Name, sub.URL, jsonText(sub.Types, "[]"), jsonText(sub.Labels, "{}"), jsonText(sub.Secrets, "[]"), sub.Description,
			sub.Enabled, sub.DisabledReason, micros(sub.UpdatedAt), sub.ID, sub.Version)
		if isUniqueViolation(err) {
			return fmt.Errorf("%w: a subscription is called %q already; choose another name", events.ErrNameTaken, sub.Name)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update subscription %s: %w", sub.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return s.missingOrChanged(ctx, tx, sub.ID, sub.Version)
		}
		return tx.QueryRowContext(ctx, `SELECT cursor, version FROM subscriptions WHERE id = ?`, sub.ID).Scan(&sub.Cursor, &sub.Version)
	})
	if err != nil {
		return nil, err
	}
	return &sub, nil
}

// missingOrChanged is the error of a write to subscription id at version
// that matched no row.
func (s *Store) missingOrChanged(ctx context.Context, tx *sql.Tx, id string, version int64) error {
	var cur int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM subscriptions WHERE id = ?`, id).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: no subscription %q", events.ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: read subscription %s: %w", id, err)
	}
	return fmt.Errorf("%w: subscription %s is at version %d, not %d: read it again", events.ErrConflict, id, cur, version)
}

// DeleteSubscription implements events.Store.
func (s *Store) DeleteSubscription(ctx context.Context, id string) error {
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM subscriptions WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("sqlite: delete subscription %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: no subscription %q", events.ErrNotFound, id)
		}
		return nil
	})
}

// checkEventsFence returns events.ErrFenced unless f's lease is held, at
// its epoch, and live.
func (s *Store) checkEventsFence(ctx context.Context, tx *sql.Tx, f events.Fence) error {
	var ok bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM leases WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > ?)`,
		f.Lease, f.Holder, f.Epoch, micros(s.now())).Scan(&ok)
	if err != nil {
		return fmt.Errorf("sqlite: read the %s lease: %w", f.Lease, err)
	}
	if !ok {
		return fmt.Errorf("%w (epoch %d of %s)", events.ErrFenced, f.Epoch, f.Lease)
	}
	return nil
}

// FanOut implements events.Store.
func (s *Store) FanOut(ctx context.Context, f events.Fence, subscription string, from, to int64, ds []events.NewDelivery) error {
	now := micros(s.now())
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.checkEventsFence(ctx, tx, f); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE subscriptions SET cursor = ? WHERE id = ? AND cursor = ?`, to, subscription, from)
		if err != nil {
			return fmt.Errorf("sqlite: fan out to subscription %s: %w", subscription, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: subscription %s is gone or its cursor moved from %d", events.ErrConflict, subscription, from)
		}
		for _, d := range ds {
			_, err := tx.ExecContext(ctx, `INSERT INTO deliveries (subscription_id, position, key, state, next_attempt_at, created_at, updated_at)
				VALUES (?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT DO NOTHING`, subscription, d.Position, d.Key, now, now, now)
			if err != nil {
				return fmt.Errorf("sqlite: fan out event %s to subscription %s: %w", d.EventID, subscription, err)
			}
		}
		return nil
	})
}

const deliveryColumns = `d.subscription_id, d.position, o.id, o.type, o.subject, d.key, d.state, d.attempts, d.tries, d.next_attempt_at,
	d.last_status, d.last_error, d.created_at, d.updated_at`

func scanDelivery(row scanner) (events.Delivery, error) {
	var (
		d                      events.Delivery
		next, created, updated int64
	)
	err := row.Scan(&d.Subscription, &d.Position, &d.EventID, &d.Type, &d.Subject, &d.Key, &d.State, &d.Attempts, &d.Tries, &next,
		&d.LastStatus, &d.LastError, &created, &updated)
	d.NextAttemptAt, d.CreatedAt, d.UpdatedAt = fromMicros(next), fromMicros(created), fromMicros(updated)
	return d, err
}

// DueDeliveries implements events.Store.
func (s *Store) DueDeliveries(ctx context.Context, now time.Time, limit int, busy map[string]bool) ([]events.Delivery, error) {
	rows, err := s.query(ctx, `SELECT `+deliveryColumns+` FROM deliveries d JOIN outbox o ON o.position = d.position
		WHERE d.state = 'pending' AND d.next_attempt_at <= ?
		AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.subscription_id = d.subscription_id AND e.key = d.key
			AND e.state = 'pending' AND e.position < d.position)
		AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = d.subscription_id AND s.enabled)
		ORDER BY d.next_attempt_at, d.position LIMIT ?`, micros(now), limit+len(busy))
	if err != nil {
		return nil, fmt.Errorf("sqlite: read due deliveries: %w", unavailable(err))
	}
	defer rows.Close()
	var out []events.Delivery
	for rows.Next() && len(out) < limit {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: read due deliveries: %w", err)
		}
		if !busy[d.Subscription+"\x00"+d.Key] {
			out = append(out, d)
		}
	}
	return out, unavailable(rows.Err())
}

// RecordAttempt implements events.Store.
func (s *Store) RecordAttempt(ctx context.Context, f events.Fence, a events.Attempt, next events.DeliveryUpdate, disable string) error {
	now := micros(s.now())
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := s.checkEventsFence(ctx, tx, f); err != nil {
			return err
		}
		var tries int
		err := tx.QueryRowContext(ctx, `UPDATE deliveries SET state = ?, attempts = attempts + 1, tries = tries + 1, next_attempt_at = ?,
			last_status = ?, last_error = ?, updated_at = ? WHERE subscription_id = ? AND position = ? RETURNING tries`,
			string(next.State), micros(next.NextAttemptAt), a.Status, a.Error, now, a.Subscription, a.Position).Scan(&tries)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the subscription, or the event, was deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("sqlite: record delivery of event %d to subscription %s: %w", a.Position, a.Subscription, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO delivery_attempts (subscription_id, position, number, time, status, latency_us, error, response)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.Subscription, a.Position, tries, micros(a.Time), a.Status, a.Latency.Microseconds(), a.Error, a.Response)
		if err != nil {
			return fmt.Errorf("sqlite: record attempt at event %d to subscription %s: %w", a.Position, a.Subscription, err)
		}
		if disable != "" {
			_, err = tx.ExecContext(ctx, `UPDATE subscriptions SET enabled = 0, disabled_reason = ?, version = version + 1, updated_at = ? WHERE id = ?`,
				disable, now, a.Subscription)
			if err != nil {
				return fmt.Errorf("sqlite: disable subscription %s: %w", a.Subscription, err)
			}
		}
		return nil
	})
}

// Deliveries implements events.Store.
func (s *Store) Deliveries(ctx context.Context, subscription string, opts events.DeliveryListOptions) (*events.DeliveryPage, error) {
	before, err := events.DeliveryPageStart(opts.PageToken)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	size := tenant.ClampPageSize(opts.PageSize)
	rows, err := s.query(ctx, `SELECT `+deliveryColumns+` FROM deliveries d JOIN outbox o ON o.position = d.position
		WHERE d.subscription_id = ? AND d.position < ? AND (?3 = '' OR d.state = ?3) ORDER BY d.position DESC LIMIT ?`,
		subscription, before, string(opts.State), size+1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list deliveries: %w", unavailable(err))
	}
	defer rows.Close()
	var ds []events.Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list deliveries: %w", err)
		}
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list deliveries: %w", unavailable(err))
	}
	return events.Page(ds, size), nil
}

// Delivery implements events.Store.
func (s *Store) Delivery(ctx context.Context, subscription, eventID string) (*events.Delivery, []events.Attempt, error) {
	row, err := s.queryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries d JOIN outbox o ON o.position = d.position
		WHERE d.subscription_id = ? AND o.id = ?`, subscription, eventID)
	if err != nil {
		return nil, nil, err
	}
	d, err := scanDelivery(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("%w: subscription %s has no delivery of event %q", events.ErrNotFound, subscription, eventID)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: read delivery: %w", unavailable(err))
	}
	rows, err := s.query(ctx, `SELECT number, time, status, latency_us, error, response FROM delivery_attempts
		WHERE subscription_id = ? AND position = ? ORDER BY number`, subscription, d.Position)
	if err != nil {
		return nil, nil, fmt.Errorf("sqlite: read attempts: %w", unavailable(err))
	}
	defer rows.Close()
	var attempts []events.Attempt
	for rows.Next() {
		a := events.Attempt{Subscription: subscription, Position: d.Position}
		var at, latency int64
		if err := rows.Scan(&a.Number, &at, &a.Status, &latency, &a.Error, &a.Response); err != nil {
			return nil, nil, fmt.Errorf("sqlite: read attempts: %w", err)
		}
		a.Time, a.Latency = fromMicros(at), time.Duration(latency)*time.Microsecond
		attempts = append(attempts, a)
	}
	return &d, attempts, unavailable(rows.Err())
}

// Redeliver implements events.Store.
func (s *Store) Redeliver(ctx context.Context, subscription string, sel events.Redelivery) (int, error) {
	sub, err := s.Subscription(ctx, subscription)
	if err != nil {
		return 0, err
	}
	recs, err := events.Selected(ctx, sub, sel, s.OutboxEvent, s.outboxBetween)
	if err != nil {
		return 0, err
	}
	now := micros(s.now())
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, r := range recs {
			_, err := tx.ExecContext(ctx, `INSERT INTO deliveries (subscription_id, position, key, state, next_attempt_at, created_at, updated_at)
				VALUES (?1, ?2, ?3, 'pending', ?4, ?4, ?4)
				ON CONFLICT (subscription_id, position) DO UPDATE SET state = 'pending', attempts = 0, next_attempt_at = ?4, updated_at = ?4`,
				sub.ID, r.Position, r.Key, now)
			if err != nil {
				return fmt.Errorf("sqlite: redeliver event %s to subscription %s: %w", r.ID, sub.ID, err)
			}
		}
		return nil
	})
	return len(recs), err
}

// outboxBetween reads the events written in [since, until), in position
// order.
func (s *Store) outboxBetween(ctx context.Context, since, until time.Time) ([]events.Record, error) {
	return collectRecords(s.query(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE time >= ? AND time < ? ORDER BY position`, micros(since), micros(until)))
}

// DeliveryStats implements events.Store.
func (s *Store) DeliveryStats(ctx context.Context) (int, time.Time, error) {
	row, err := s.queryRow(ctx, `SELECT count(*), min(o.time) FROM deliveries d JOIN outbox o ON o.position = d.position WHERE d.state = 'pending'`)
	if err != nil {
		return 0, time.Time{}, err
	}
	var (
		n      int
		oldest sql.NullInt64
	)
	if err := row.Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("sqlite: count deliveries: %w", unavailable(err))
	}
	if !oldest.Valid {
		return n, time.Time{}, nil
	}
	return n, fromMicros(oldest.Int64), nil
}

var _ events.Store = (*Store)(nil)
