package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	selectIdempotent = `SELECT request_hash, status, header, body, created_at FROM idempotency_keys
		WHERE actor = ? AND key = ? AND created_at >= ?`
	// An expired row for the key is replaced; a live one is kept.
	saveIdempotent = `INSERT INTO idempotency_keys (actor, key, request_hash, status, header, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (actor, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
			header = excluded.header, body = excluded.body, created_at = excluded.created_at
		WHERE idempotency_keys.created_at < ?`
	// Each save clears a few expired rows, so that the table does not grow.
	expireIdempotent = `DELETE FROM idempotency_keys WHERE rowid IN
		(SELECT rowid FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT 16)`
)

// SaveIdempotent keeps a response; see tenant.IdempotencyStore.
func (s *Store) SaveIdempotent(ctx context.Context, r tenant.IdempotentResponse) (tenant.IdempotentResponse, bool, error) {
	now := tenant.Timestamp(s.now())
	cutoff := micros(now.Add(-tenant.IdempotencyTTL))
	r.CreatedAt = now
	header, err := json.Marshal(r.Header)
	if err != nil || r.Header == nil {
		header = []byte("{}")
	}
	var out tenant.IdempotentResponse
	fresh := false
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		save, err := s.txStmt(ctx, tx, saveIdempotent)
		if err != nil {
			return err
		}
		res, err := save.ExecContext(ctx, r.Actor, r.Key, r.RequestHash, r.Status, string(header), r.Body, micros(now), cutoff)
		if err != nil {
			return fmt.Errorf("sqlite: save idempotent response: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out, fresh = r, true
		} else if out, err = s.readIdempotent(ctx, tx, r.Actor, r.Key, cutoff); err != nil {
			return err
		}
		expire, err := s.txStmt(ctx, tx, expireIdempotent)
		if err != nil {
			return err
		}
		_, err = expire.ExecContext(ctx, cutoff)
		return err
	})
	return out, fresh, err
}

// GetIdempotent returns a kept response; see tenant.IdempotencyStore.
func (s *Store) GetIdempotent(ctx context.Context, actor, key string) (tenant.IdempotentResponse, error) {
	row, err := s.queryRow(ctx, selectIdempotent, actor, key, micros(tenant.Timestamp(s.now()).Add(-tenant.IdempotencyTTL)))
	if err != nil {
		return tenant.IdempotentResponse{}, err
	}
	return scanIdempotent(row, actor, key)
}

func (s *Store) readIdempotent(ctx context.Context, tx *sql.Tx, actor, key string, cutoff int64) (tenant.IdempotentResponse, error) {
	read, err := s.txStmt(ctx, tx, selectIdempotent)
	if err != nil {
		return tenant.IdempotentResponse{}, err
	}
	return scanIdempotent(read.QueryRowContext(ctx, actor, key, cutoff), actor, key)
}

func scanIdempotent(row *sql.Row, actor, key string) (tenant.IdempotentResponse, error) {
	r := tenant.IdempotentResponse{Actor: actor, Key: key}
	var header string
	var created int64
	err := row.Scan(&r.RequestHash, &r.Status, &header, &r.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: no response kept for idempotency key %q", tenant.ErrNotFound, key)
	}
	if err != nil {
		return r, fmt.Errorf("sqlite: read idempotent response: %w", err)
	}
	if header != "{}" {
		if err := json.Unmarshal([]byte(header), &r.Header); err != nil {
			return r, fmt.Errorf("sqlite: read idempotent response: %w", err)
		}
	}
	r.CreatedAt = fromMicros(created)
	return r, nil
}

var _ tenant.IdempotencyStore = (*Store)(nil)
