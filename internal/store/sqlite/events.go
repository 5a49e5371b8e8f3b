package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	tenantExists = `SELECT 1 FROM tenants WHERE id = ?`
	insertEvent  = `INSERT INTO events (tenant_id, placement, time, type, from_status, to_status, generation, message, actor, changed)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

	// The listings of a tenant's events (?1), oldest first after a seq
	// (?2), newest first, and newest first before a seq, of one placement
	// when ?3 is not empty; the index on (tenant_id, seq) serves each, scanned
	// backwards for the newest, and the placement is a filter on its rows.
	selectEvents     = `SELECT seq, tenant_id, placement, time, type, from_status, to_status, generation, message, actor FROM events `
	ofPlacement      = ` AND (?3 = '' OR placement = ?3)`
	listEventsAfter  = selectEvents + `WHERE tenant_id = ?1 AND seq > ?2` + ofPlacement + ` ORDER BY seq LIMIT ?4`
	listEventsNewest = selectEvents + `WHERE tenant_id = ?1` + ofPlacement + ` ORDER BY seq DESC LIMIT ?4` // ?2 is 0
	listEventsBefore = selectEvents + `WHERE tenant_id = ?1 AND seq < ?2` + ofPlacement + ` ORDER BY seq DESC LIMIT ?4`
)

// AppendEvent records an event, and announces it to change feeds once it
// has committed; see tenant.Store.
func (s *Store) AppendEvent(ctx context.Context, e tenant.Event) error {
	if err := tenant.ValidateEvent(e); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = s.now()
	}
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		exists, err := s.txStmt(ctx, tx, tenantExists)
		if err != nil {
			return err
		}
		var one int
		err = exists.QueryRowContext(ctx, e.TenantID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", tenant.ErrNotFound, e.TenantID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: append event: %w", err)
		}
		if e.Epoch != 0 {
			epoch, err := s.fenceEpoch(ctx, tx, e.TenantID)
			if err != nil {
				return err
			}
			if err := tenant.CheckFence(e.Epoch, epoch); err != nil {
				return err
			}
		}
		return s.insertEvents(ctx, tx, e)
	})
	if err != nil {
		return err
	}
	s.changes.announce(e.TenantID)
	return nil
}

func (s *Store) insertEvents(ctx context.Context, tx *sql.Tx, evs ...tenant.Event) error {
	if len(evs) == 0 {
		return nil
	}
	insert, err := s.txStmt(ctx, tx, insertEvent)
	if err != nil {
		return err
	}
	for _, e := range evs {
		_, err := insert.ExecContext(ctx, e.TenantID, e.Placement, micros(tenant.Timestamp(e.Time)), string(e.Type), string(e.From), string(e.To), e.Generation, e.Message, e.Actor,
			jsonText(e.Changed, "[]"))
		if err != nil {
			return fmt.Errorf("sqlite: append %s event of tenant %s: %w", e.Type, e.TenantID, err)
		}
	}
	return nil
}

// ListEvents returns a page of a tenant's events; see tenant.Store.
func (s *Store) ListEvents(ctx context.Context, tenantID string, opts tenant.EventListOptions) (*tenant.EventPage, error) {
	after, err := tenant.DecodeEventPageToken(opts.PageToken, opts.Newest)
	if err != nil {
		return nil, err
	}
	size := tenant.ClampPageSize(opts.PageSize)
	exists, err := s.queryRow(ctx, tenantExists, tenantID)
	if err != nil {
		return nil, err
	}
	var one int
	err = exists.Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", tenant.ErrNotFound, tenantID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: list events: %w", err)
	}
	query := listEventsAfter
	switch {
	case opts.Newest && after == 0:
		query = listEventsNewest
	case opts.Newest:
		query = listEventsBefore
	}
	rows, err := s.query(ctx, query, tenantID, after, opts.Placement, size+1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list events: %w", err)
	}
	defer rows.Close()
	page := &tenant.EventPage{}
	for rows.Next() {
		var e tenant.Event
		var at int64
		if err := rows.Scan(&e.Seq, &e.TenantID, &e.Placement, &at, &e.Type, &e.From, &e.To, &e.Generation, &e.Message, &e.Actor); err != nil {
			return nil, fmt.Errorf("sqlite: list events: %w", err)
		}
		e.Time = fromMicros(at)
		page.Events = append(page.Events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list events: %w", err)
	}
	if len(page.Events) > size {
		page.Events = page.Events[:size]
		page.NextPageToken = tenant.EncodeEventPageToken(page.Events[size-1].Seq, opts.Newest)
	}
	return page, nil
}
