package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	idempotencyColumns = `request_hash, token, status, header, body, created_at`
	// selectIdempotent reads a key's row younger than the TTL (created_at
	// at or after the third argument).
	selectIdempotent = `SELECT ` + idempotencyColumns + ` FROM idempotency_keys
		WHERE actor = ? AND key = ? AND created_at >= ?`
	// reserveIdempotent inserts a pending row, or puts one in place of an
	// expired response (created_at before the 6th argument) or of a
	// reservation older than the lease (the 7th). A live row is kept.
	reserveIdempotent = `INSERT INTO idempotency_keys (actor, key, request_hash, token, status, header, body, created_at)
		VALUES (?, ?, ?, ?, 0, '{}', X'', ?)
		ON CONFLICT (actor, key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
			status = 0, header = '{}', body = X'', created_at = excluded.created_at
		WHERE idempotency_keys.created_at < ? OR (idempotency_keys.status = 0 AND idempotency_keys.created_at < ?)`
	// completeIdempotent keeps the response of a reservation that is still
	// pending with its token; it changes no row when the reservation was
	// taken over or released.
	completeIdempotent = `UPDATE idempotency_keys SET status = ?, header = ?, body = ?, created_at = ?
		WHERE actor = ? AND key = ? AND token = ? AND status = 0`
	// holdIdempotent finds a reservation still pending with its token.
	holdIdempotent    = `SELECT 1 FROM idempotency_keys WHERE actor = ? AND key = ? AND token = ? AND status = 0`
	releaseIdempotent = `DELETE FROM idempotency_keys WHERE actor = ? AND key = ? AND token = ? AND status = 0`
	// Each reservation clears a few expired rows, so that the table does not
	// grow.
	expireIdempotent = `DELETE FROM idempotency_keys WHERE rowid IN
		(SELECT rowid FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT 16)`
)

// ReserveIdempotent reserves a key; see tenant.IdempotencyStore. The writer
// runs one write at a time, so of concurrent reservations exactly one finds
// the key free.
func (s *Store) ReserveIdempotent(ctx context.Context, actor, key, requestHash string, lease time.Duration) (tenant.IdempotentResponse, bool, error) {
	now := tenant.Timestamp(s.now())
	expired := micros(now.Add(-tenant.IdempotencyTTL))
	res := tenant.IdempotentResponse{Actor: actor, Key: key, RequestHash: requestHash, Token: rand.Text(), CreatedAt: now}
	var (
		out   tenant.IdempotentResponse
		fresh bool
	)
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		reserve, err := s.txStmt(ctx, tx, reserveIdempotent)
		if err != nil {
			return err
		}
		r, err := reserve.ExecContext(ctx, actor, key, requestHash, res.Token, micros(now), expired, micros(now.Add(-lease)))
		if err != nil {
			return fmt.Errorf("sqlite: reserve idempotency key %q: %w", key, err)
		}
		if n, _ := r.RowsAffected(); n == 1 {
			out, fresh = res, true
		} else if out, err = s.readIdempotent(ctx, tx, actor, key, expired); err != nil {
			return err
		}
		expire, err := s.txStmt(ctx, tx, expireIdempotent)
		if err != nil {
			return err
		}
		_, err = expire.ExecContext(ctx, expired)
		return err
	})
	if err != nil {
		return tenant.IdempotentResponse{}, false, err
	}
	return out, fresh, nil
}

// CreateIdempotent creates a tenant and keeps its response in one
// transaction; see tenant.IdempotencyStore.
func (s *Store) CreateIdempotent(ctx context.Context, in *tenant.Tenant, actor string, res tenant.IdempotentResponse,
	respond func(*tenant.Tenant) (tenant.IdempotentResponse, error)) (*tenant.Tenant, error) {
	return s.create(ctx, in, actor, func(ctx context.Context, tx *sql.Tx, t *tenant.Tenant) error {
		resp, err := respond(t)
		if err != nil {
			return err
		}
		return s.keepResponse(ctx, tx, res, resp)
	})
}

// keepResponse completes the reservation res with resp, in the transaction
// of the write resp answers: tenant.ErrReservationLost when res is no
// longer pending with its token.
func (s *Store) keepResponse(ctx context.Context, tx *sql.Tx, res, resp tenant.IdempotentResponse) error {
	done, err := tenant.Completed(res, resp, s.now())
	if err != nil {
		return err
	}
	header, err := encodeHeader(done.Header)
	if err != nil {
		return err
	}
	complete, err := s.txStmt(ctx, tx, completeIdempotent)
	if err != nil {
		return err
	}
	r, err := complete.ExecContext(ctx, done.Status, header, nonNil(done.Body), micros(done.CreatedAt), res.Actor, res.Key, res.Token)
	if err != nil {
		return fmt.Errorf("sqlite: keep the response for idempotency key %q: %w", res.Key, err)
	}
	if n, _ := r.RowsAffected(); n != 1 {
		return fmt.Errorf("sqlite: idempotency key %q: %w", res.Key, tenant.ErrReservationLost)
	}
	return nil
}

// keeping is the response a write of the fleet keeps, in its transaction,
// for the reservation res (fleet.IdempotencyStore); nil for a write
// without one.
type keeping[T any] struct {
	res     tenant.IdempotentResponse
	respond func(T) (tenant.IdempotentResponse, error)
}

// hold checks, before the write, that the reservation is still pending
// with its token: a write whose reservation was lost is not done, and
// fails with tenant.ErrReservationLost rather than with what it would
// break (a plan name taken, an active rollout) — by the request that
// took the key over, whose response the API then answers with.
func (k *keeping[T]) hold(ctx context.Context, s *Store, tx *sql.Tx) error {
	if k == nil {
		return nil
	}
	hold, err := s.txStmt(ctx, tx, holdIdempotent)
	if err != nil {
		return err
	}
	var one int
	err = hold.QueryRowContext(ctx, k.res.Actor, k.res.Key, k.res.Token).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: idempotency key %q: %w", k.res.Key, tenant.ErrReservationLost)
	}
	if err != nil {
		return fmt.Errorf("sqlite: read idempotency key %q: %w", k.res.Key, err)
	}
	return nil
}

// keep keeps the response to what the write stored, v.
func (k *keeping[T]) keep(ctx context.Context, s *Store, tx *sql.Tx, v T) error {
	if k == nil {
		return nil
	}
	resp, err := k.respond(v)
	if err != nil {
		return err
	}
	return s.keepResponse(ctx, tx, k.res, resp)
}

// ReleaseIdempotent frees a reservation; see tenant.IdempotencyStore.
func (s *Store) ReleaseIdempotent(ctx context.Context, res tenant.IdempotentResponse) error {
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		release, err := s.txStmt(ctx, tx, releaseIdempotent)
		if err != nil {
			return err
		}
		if _, err := release.ExecContext(ctx, res.Actor, res.Key, res.Token); err != nil {
			return fmt.Errorf("sqlite: release idempotency key %q: %w", res.Key, err)
		}
		return nil
	})
}

// GetIdempotent returns a key's row; see tenant.IdempotencyStore.
func (s *Store) GetIdempotent(ctx context.Context, actor, key string) (tenant.IdempotentResponse, error) {
	row, err := s.queryRow(ctx, selectIdempotent, actor, key, micros(tenant.Timestamp(s.now()).Add(-tenant.IdempotencyTTL)))
	if err != nil {
		return tenant.IdempotentResponse{}, err
	}
	return scanIdempotent(row, actor, key)
}

func (s *Store) readIdempotent(ctx context.Context, tx *sql.Tx, actor, key string, expired int64) (tenant.IdempotentResponse, error) {
	read, err := s.txStmt(ctx, tx, selectIdempotent)
	if err != nil {
		return tenant.IdempotentResponse{}, err
	}
	return scanIdempotent(read.QueryRowContext(ctx, actor, key, expired), actor, key)
}

func scanIdempotent(row *sql.Row, actor, key string) (tenant.IdempotentResponse, error) {
	r := tenant.IdempotentResponse{Actor: actor, Key: key}
	var header string
	var created int64
	err := row.Scan(&r.RequestHash, &r.Token, &r.Status, &header, &r.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: nothing kept for idempotency key %q", tenant.ErrNotFound, key)
	}
	if err != nil {
		return r, fmt.Errorf("sqlite: read idempotency key %q: %w", key, err)
	}
	if header != "{}" {
		if err := json.Unmarshal([]byte(header), &r.Header); err != nil {
			return r, fmt.Errorf("sqlite: read idempotency key %q: %w", key, err)
		}
	}
	if len(r.Body) == 0 {
		r.Body = nil
	}
	r.CreatedAt = fromMicros(created)
	return r, nil
}

// encodeHeader is a response's header as the header column holds it.
func encodeHeader(h map[string]string) (string, error) {
	if len(h) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return "", fmt.Errorf("sqlite: encode response header: %w", err)
	}
	return string(b), nil
}

// nonNil is b, or an empty body for the NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

var _ tenant.IdempotencyStore = (*Store)(nil)
