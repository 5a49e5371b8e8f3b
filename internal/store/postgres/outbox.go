package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/store/jsonrow"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The outbox is written by the triggers of migration 00012, in the
// transactions of the changes its events report; this file positions and
// reads it, subscriptions.go and deliveries.go keep the subscriptions and
// their deliveries (events.Store).
//
// A row is written without a position: PostgreSQL commits transactions
// out of the order in which they drew their seq, so the seq cannot be the
// feed's order. SequenceOutbox gives positions to committed rows, and
// every reader reads positioned rows only (position IS NOT NULL, which
// the joins through deliveries.position imply).

const (
	selectRecord = `SELECT position, id, type, subject, key, time, data, tenant FROM outbox`

	// readOutbox reads the positioned events after $1, of the types $2
	// (every type when it is empty), at most $3 (no limit when NULL).
	readOutbox = selectRecord + ` WHERE position > $1 AND (cardinality($2::text[]) = 0 OR type = ANY ($2))
ORDER BY position LIMIT $3`
	// outboxHead is the last position given: the newest event's, which
	// PruneOutbox never deletes.
	outboxHead = `SELECT coalesce(max(position), 0) FROM outbox`

	// lockSequence serializes SequenceOutbox's transactions. It is a
	// statement of its own, before sequenceOutbox: a statement's snapshot
	// is taken when it starts, so one that waited for the lock in the
	// middle would read max(position) as it was before the previous run
	// committed, and give its positions again.
	lockSequence = `SELECT pg_advisory_xact_lock($1)`
	// sequenceOutbox gives the committed rows without a position, at most
	// $1 (the oldest seq first), the positions after the last one given,
	// in seq order.
	sequenceOutbox = `WITH head AS (SELECT coalesce(max(position), 0) AS position FROM outbox),
next AS (SELECT o.seq, head.position + row_number() OVER (ORDER BY o.seq) AS position
	FROM (SELECT seq FROM outbox WHERE position IS NULL ORDER BY seq LIMIT $1) o, head)
UPDATE outbox SET position = next.position FROM next WHERE outbox.seq = next.seq`

	// pruneOutbox deletes up to 1,000 positioned events written before $1
	// that no delivery is pending for, oldest first, with their
	// deliveries (ON DELETE CASCADE). It keeps the newest event whatever
	// its age: the next positions are counted from it (sequenceOutbox),
	// so the head never goes back, and a cursor past it never skips the
	// events positioned after.
	pruneOutbox = `DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox o
	WHERE o.time < $1 AND o.position < (SELECT max(position) FROM outbox)
	AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.position = o.position AND d.state = 'pending')
	ORDER BY o.position LIMIT 1000)`
)

// outboxSequenceLock is the advisory lock key of SequenceOutbox's runs,
// derived from a name of landlord's own as migrationsLockID is.
var outboxSequenceLock = func() int64 {
	h := fnv.New64a()
	h.Write([]byte("landlord_outbox_sequence"))
	return int64(h.Sum64())
}()

// SequenceOutbox implements events.Store: in one transaction, serialized
// with every other run by an advisory lock (pg_advisory_xact_lock), it
// gives the committed events that have no position yet, at most limit, the
// positions after the last one given, in the order they were written (their
// seq). A limit of 0 or less positions nothing.
//
// A reader paging by position never misses an event: positions are given
// only to rows that have committed, by one transaction at a time, each
// counting from the last position the previous one committed; a run's
// positions all become visible at its commit, after those of every run
// before it. So once a reader has seen position p, every event that will
// ever have a position below p is visible to it already.
//
// A tenant's events keep their order: each is written under the tenant's
// row lock (SELECT … FOR UPDATE, or the insert of the row), so a later
// event's transaction draws its seq only after the earlier one's has
// committed. A run that sees the later event therefore sees the earlier
// one too (or an earlier run positioned it), and seq order puts it first.
// The same holds for a rollout's events (its row's lock) and a plan's
// versions (the plan's). Events of different keys may be positioned out of
// seq order (one that committed late is positioned late), which the
// feed's order, that of commits, allows.
func (s *Store) SequenceOutbox(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSequence, outboxSequenceLock); err != nil {
			return fmt.Errorf("postgres: sequence the outbox: lock: %w", err)
		}
		tag, err := tx.Exec(ctx, sequenceOutbox, limit)
		if err != nil {
			return fmt.Errorf("postgres: sequence the outbox: %w", err)
		}
		n = tag.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// ReadOutbox implements events.Store. A limit below 0 is no limit.
func (s *Store) ReadOutbox(ctx context.Context, after int64, limit int, types []events.Type) ([]events.Record, error) {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	rows, err := s.pool.Query(ctx, readOutbox, after, names, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: read the outbox: %w", unavailable(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Record, error) { return scanRecord(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: read the outbox: %w", unavailable(err))
	}
	return out, nil
}

// OutboxEvent implements events.Store. An event not yet positioned is not
// found, as ReadOutbox does not return it either.
func (s *Store) OutboxEvent(ctx context.Context, id string) (events.Record, error) {
	notFound := fmt.Errorf("%w: event %q (events are kept for events.retention)", events.ErrNotFound, id)
	seq, ok := events.IDKey(id)
	if !ok {
		return events.Record{}, notFound
	}
	r, err := scanRecord(s.pool.QueryRow(ctx, selectRecord+` WHERE seq = $1 AND id = $2 AND position IS NOT NULL`, seq, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return events.Record{}, notFound
	}
	if err != nil {
		return events.Record{}, fmt.Errorf("postgres: read event %q: %w", id, unavailable(err))
	}
	return r, nil
}

// OutboxHead implements events.Store.
func (s *Store) OutboxHead(ctx context.Context) (int64, error) {
	var head int64
	if err := s.pool.QueryRow(ctx, outboxHead).Scan(&head); err != nil {
		return 0, fmt.Errorf("postgres: read the outbox: %w", unavailable(err))
	}
	return head, nil
}

// PruneOutbox implements events.Store. It deletes at most 1,000 events a
// call, and keeps the newest event whatever its age (see pruneOutbox).
func (s *Store) PruneOutbox(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, pruneOutbox, tenant.Timestamp(before))
	if err != nil {
		return 0, fmt.Errorf("postgres: prune the outbox: %w", unavailable(err))
	}
	return int(tag.RowsAffected()), nil
}

// scanRecord reads a row of selectRecord. A tenant's event has its history
// entry in data and its tenant's row in tenant, read back with scanTenant
// (jsonrow.Row scans as a query's row does); another's data is returned as
// it is, compact.
func scanRecord(row pgx.Row) (events.Record, error) {
	var (
		r               events.Record
		data, tenantRow []byte
	)
	if err := row.Scan(&r.Position, &r.ID, &r.Type, &r.Subject, &r.Key, &r.Time, &data, &tenantRow); err != nil {
		return events.Record{}, err
	}
	r.Time = r.Time.UTC()
	if tenantRow == nil {
		// JSONB prints a space after each : and ,; the SQLite store
		// returns compact text, and so does this one.
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			return events.Record{}, fmt.Errorf("postgres: event %s: data: %w", r.ID, err)
		}
		r.Data = compact.Bytes()
		return r, nil
	}
	h := &tenant.Event{}
	if err := json.Unmarshal(data, h); err != nil {
		return events.Record{}, fmt.Errorf("postgres: event %s: decode its history entry: %w", r.ID, err)
	}
	h.Time = r.Time
	if len(h.Changed) == 0 {
		h.Changed = nil
	}
	r.History = h
	cols, err := jsonrow.Parse(tenantRow)
	if err == nil {
		r.Tenant, err = scanTenant(cols)
	}
	if err != nil {
		return events.Record{}, fmt.Errorf("postgres: event %s: decode its tenant: %w", r.ID, err)
	}
	return r, nil
}

// limitArg is a LIMIT's argument for limit: NULL, which is no limit, when
// limit is below 0, as SQLite reads a negative LIMIT.
func limitArg(limit int) any {
	if limit < 0 {
		return nil
	}
	return limit
}

var _ events.Store = (*Store)(nil)
