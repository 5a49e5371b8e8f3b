package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	idempotencyColumns = `actor, key, request_hash, status, header, body, created_at`
	// upsertIdempotent inserts a response, or replaces the one kept for its
	// actor and key if that one has expired (created_at before $8). A
	// response that has not expired stays: the statement then changes
	// nothing, but still locks its row (ON CONFLICT DO UPDATE locks the
	// conflicting row whatever its WHERE says), so the row cannot go away
	// before selectIdempotent reads it. Concurrent saves of one key queue on
	// the unique index: the first inserts, the others find its row.
	upsertIdempotent = `INSERT INTO idempotency_keys AS i (` + idempotencyColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (actor, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
	header = excluded.header, body = excluded.body, created_at = excluded.created_at
WHERE i.created_at < $8`
	selectIdempotent = `SELECT ` + idempotencyColumns + ` FROM idempotency_keys WHERE actor = $1 AND key = $2`
	// getIdempotent is selectIdempotent for a response that has not
	// expired (created_at at or after $3).
	getIdempotent = selectIdempotent + ` AND created_at >= $3`
	// sweepIdempotent deletes up to sweepLimit expired responses other than
	// the one being saved (which upsertIdempotent replaces). Rows another
	// sweep has locked are skipped rather than waited for.
	sweepIdempotent = `DELETE FROM idempotency_keys WHERE (actor, key) IN (
	SELECT actor, key FROM idempotency_keys
	WHERE created_at < $3 AND NOT (actor = $1 AND key = $2)
	ORDER BY created_at LIMIT ` + sweepLimit + ` FOR UPDATE SKIP LOCKED)
AND created_at < $3`
	// sweepLimit bounds the rows one save deletes: more than the one row a
	// save adds, so expired rows never pile up, and few enough that a save
	// after a long quiet spell stays quick.
	sweepLimit = "100"
)

// SaveIdempotent implements tenant.IdempotencyStore. It keeps r, with
// CreatedAt from the store's clock, unless a response younger than
// tenant.IdempotencyTTL is kept for r's actor and key; then it returns that
// one and false. An expired response for the key is replaced.
//
// Expired responses are deleted here, opportunistically: every save deletes
// up to 100 expired rows of other keys (oldest first, skipping rows other
// saves are deleting), in the same round trip and transaction. Since each
// save adds at most one row, the table never holds more than the responses
// of the last TTL and a hundred expired ones, with no background job; a save
// that finds nothing to delete costs one index probe on created_at.
//
// The upsert, the read of the kept row and the sweep are one batch, so one
// round trip and one implicit READ COMMITTED transaction: the read, a
// statement of its own, sees the row a concurrent save committed while the
// upsert waited for it, and the upsert's lock keeps that row until the read.
func (s *Store) SaveIdempotent(ctx context.Context, r tenant.IdempotentResponse) (tenant.IdempotentResponse, bool, error) {
	header := r.Header
	if header == nil {
		header = map[string]string{}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return tenant.IdempotentResponse{}, false, fmt.Errorf("postgres: save idempotency key %q: encode header: %w", r.Key, err)
	}
	body := r.Body
	if body == nil {
		body = []byte{} // NOT NULL
	}
	now := tenant.Timestamp(s.now())
	expired := now.Add(-tenant.IdempotencyTTL)

	var (
		out   tenant.IdempotentResponse
		fresh bool
	)
	err = s.retry(ctx, func() error {
		b := &pgx.Batch{}
		b.Queue(upsertIdempotent, r.Actor, r.Key, r.RequestHash, r.Status, h, body, now, expired)
		b.Queue(selectIdempotent, r.Actor, r.Key)
		b.Queue(sweepIdempotent, r.Actor, r.Key, expired)
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		fresh = tag.RowsAffected() == 1
		if out, err = scanIdempotent(br.QueryRow()); err != nil {
			return fmt.Errorf("read the kept response: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("delete expired responses: %w", err)
		}
		return br.Close()
	})
	if err != nil {
		return tenant.IdempotentResponse{}, false, fmt.Errorf("postgres: save idempotency key %q: %w", r.Key, err)
	}
	return out, fresh, nil
}

// GetIdempotent implements tenant.IdempotencyStore: the response kept for
// actor and key if it is younger than tenant.IdempotencyTTL, by the store's
// clock, and an error wrapping tenant.ErrNotFound otherwise.
func (s *Store) GetIdempotent(ctx context.Context, actor, key string) (tenant.IdempotentResponse, error) {
	expired := tenant.Timestamp(s.now()).Add(-tenant.IdempotencyTTL)
	out, err := scanIdempotent(s.pool.QueryRow(ctx, getIdempotent, actor, key, expired))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tenant.IdempotentResponse{}, fmt.Errorf("postgres: idempotency key %q: %w", key, tenant.ErrNotFound)
	case err != nil:
		return tenant.IdempotentResponse{}, fmt.Errorf("postgres: idempotency key %q: %w", key, err)
	}
	return out, nil
}

// scanIdempotent reads a row of idempotencyColumns. An empty header or body
// is nil.
func scanIdempotent(row pgx.Row) (tenant.IdempotentResponse, error) {
	var (
		r tenant.IdempotentResponse
		h []byte
	)
	if err := row.Scan(&r.Actor, &r.Key, &r.RequestHash, &r.Status, &h, &r.Body, &r.CreatedAt); err != nil {
		return tenant.IdempotentResponse{}, err
	}
	if err := json.Unmarshal(h, &r.Header); err != nil {
		return tenant.IdempotentResponse{}, fmt.Errorf("decode header: %w", err)
	}
	if len(r.Header) == 0 {
		r.Header = nil
	}
	if len(r.Body) == 0 {
		r.Body = nil
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, nil
}

var _ tenant.IdempotencyStore = (*Store)(nil)
