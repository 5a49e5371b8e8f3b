package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// appendEvent locks the tenant's row, as every write of the tenant does,
// before the event takes its seq: a tenant's events therefore commit in seq
// order, and a reader paging after seq n never misses one that commits
// later with a smaller seq. No row means no tenant: nothing is inserted,
// nothing announced. Else the event is announced to change feeds ($10, the
// tenant id as given) when it commits; the statement returns one row.
const appendEvent = `WITH t AS (SELECT id FROM tenants WHERE id = $1 FOR UPDATE),
e AS (INSERT INTO events (` + eventColumns + `)
	SELECT t.id, $2, $3, $4, $5, $6, $7, $8, $9 FROM t RETURNING 1)
SELECT pg_notify('` + changesChannel + `', $10) FROM e`

// AppendEvent implements tenant.Store. It returns an error wrapping
// tenant.ErrNotFound when there is no tenant e.TenantID, deleted or not, and
// tenant.ErrFenced when e.Epoch is not 0 and not the controller lease's.
//
// An unfenced event is one statement. A fenced one is a transaction that
// first reads the controller lease FOR KEY SHARE, as UpdateObserved does, so
// that the lease cannot change hands between the check and the commit. The
// event is announced to change feeds (Changes) when it commits.
func (s *Store) AppendEvent(ctx context.Context, e tenant.Event) error {
	if !tenant.IsID(e.TenantID) {
		return notFound(e.TenantID)
	}
	if err := tenant.ValidateEvent(e); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	e.Time = tenant.Timestamp(e.Time)
	if e.Epoch == 0 {
		return execAppendEvent(ctx, s.pool, e)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, e.TenantID, e.Epoch); err != nil {
			return fmt.Errorf("postgres: append event to tenant %s: %w", e.TenantID, err)
		}
		return execAppendEvent(ctx, tx, e)
	})
}

// execer is a pool or a transaction.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// execAppendEvent runs appendEvent on db.
func execAppendEvent(ctx context.Context, db execer, e tenant.Event) error {
	tag, err := db.Exec(ctx, appendEvent, append(eventArgs(e), e.TenantID)...)
	if err != nil {
		return fmt.Errorf("postgres: append event to tenant %s: %w", e.TenantID, err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(e.TenantID)
	}
	return nil
}

// The listings of a tenant's events ($1), oldest first after a seq ($2),
// newest first, and newest first before a seq, of one placement when $3 is
// not empty; events_tenant_seq_idx serves each, scanned backwards for the
// newest, and the placement is a filter on its rows.
const (
	selectEvents = `SELECT seq, tenant_id, placement, time, type, from_status, to_status, generation, message, actor
FROM events `
	ofPlacement      = ` AND ($3 = '' OR placement = $3)`
	listEvents       = selectEvents + `WHERE tenant_id = $1 AND seq > $2` + ofPlacement + ` ORDER BY seq LIMIT $4`
	listEventsNewest = selectEvents + `WHERE tenant_id = $1 AND $2::bigint = 0` + ofPlacement + ` ORDER BY seq DESC LIMIT $4`
	listEventsBefore = selectEvents + `WHERE tenant_id = $1 AND seq < $2` + ofPlacement + ` ORDER BY seq DESC LIMIT $4`
)

// ListEvents implements tenant.Store. It returns an error wrapping
// tenant.ErrNotFound when there is no tenant tenantID, and
// tenant.ErrInvalidPageToken for a token no event listing returned.
func (s *Store) ListEvents(ctx context.Context, tenantID string, opts tenant.EventListOptions) (*tenant.EventPage, error) {
	if !tenant.IsID(tenantID) {
		return nil, notFound(tenantID)
	}
	after, err := tenant.DecodeEventPageToken(opts.PageToken, opts.Newest)
	if err != nil {
		return nil, fmt.Errorf("postgres: list events: %w", err)
	}
	size := tenant.ClampPageSize(opts.PageSize)
	query := listEvents
	switch {
	case opts.Newest && after == 0:
		query = listEventsNewest
	case opts.Newest:
		query = listEventsBefore
	}
	rows, err := s.pool.Query(ctx, query, tenantID, after, opts.Placement, size+1)
	if err != nil {
		return nil, fmt.Errorf("postgres: list events of tenant %s: %w", tenantID, unavailable(err))
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tenant.Event, error) {
		var e tenant.Event
		err := row.Scan(&e.Seq, &e.TenantID, &e.Placement, &e.Time, &e.Type, &e.From, &e.To, &e.Generation, &e.Message, &e.Actor)
		e.Time = e.Time.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list events of tenant %s: %w", tenantID, unavailable(err))
	}
	if len(events) == 0 {
		// Every tenant has its created event, so only an unknown tenant (or
		// a page past the end, or a placement without events) gets here;
		// tell them apart.
		var exists bool
		err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE id = $1)`, tenantID).Scan(&exists)
		if err != nil {
			return nil, fmt.Errorf("postgres: list events of tenant %s: %w", tenantID, unavailable(err))
		}
		if !exists {
			return nil, notFound(tenantID)
		}
	}
	page := &tenant.EventPage{Events: events}
	if len(events) > size {
		page.Events = events[:size]
		page.NextPageToken = tenant.EncodeEventPageToken(events[size-1].Seq, opts.Newest)
	}
	return page, nil
}
