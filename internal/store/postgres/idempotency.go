package postgres

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	idempotencyColumns = `actor, key, request_hash, token, status, header, body, created_at`
	// reserveIdempotent inserts a pending row ($1 to $5), or puts one in
	// place of an expired response (created_at before $6) or of a
	// reservation older than the lease (before $7). A live row stays: the
	// statement then changes nothing, but still locks the row (ON CONFLICT
	// DO UPDATE locks the conflicting row whatever its WHERE says), so the
	// row cannot change before selectIdempotent reads it. Concurrent
	// reservations of one key queue on the unique index or on the row lock,
	// and each sees the row as the one before it left it: the first takes
	// the key, the others find its reservation.
	reserveIdempotent = `INSERT INTO idempotency_keys AS i (` + idempotencyColumns + `)
VALUES ($1, $2, $3, $4, 0, '{}', ''::bytea, $5)
ON CONFLICT (actor, key) DO UPDATE SET request_hash = excluded.request_hash, token = excluded.token,
	status = 0, header = '{}', body = ''::bytea, created_at = excluded.created_at
WHERE i.created_at < $6 OR (i.status = 0 AND i.created_at < $7)`
	selectIdempotent = `SELECT ` + idempotencyColumns + ` FROM idempotency_keys WHERE actor = $1 AND key = $2`
	// getIdempotent is selectIdempotent for a row that has not expired
	// (created_at at or after $3).
	getIdempotent = selectIdempotent + ` AND created_at >= $3`
	// completeIdempotent keeps the response of a reservation still pending
	// with its token ($3); it changes no row when the reservation was taken
	// over or released. Its row lock makes a concurrent takeover wait for
	// the transaction, and then find the response.
	completeIdempotent = `UPDATE idempotency_keys SET status = $4, header = $5, body = $6, created_at = $7
WHERE actor = $1 AND key = $2 AND token = $3 AND status = 0`
	// holdIdempotent locks a reservation still pending with its token
	// ($3), so that it cannot be taken over before the transaction ends.
	holdIdempotent = `SELECT 1 FROM idempotency_keys
WHERE actor = $1 AND key = $2 AND token = $3 AND status = 0 FOR NO KEY UPDATE`
	releaseIdempotent = `DELETE FROM idempotency_keys WHERE actor = $1 AND key = $2 AND token = $3 AND status = 0`
	// sweepIdempotent deletes up to sweepLimit expired rows other than
	// the one being reserved (which reserveIdempotent replaces). Rows
	// another sweep has locked are skipped rather than waited for.
	sweepIdempotent = `DELETE FROM idempotency_keys WHERE (actor, key) IN (
	SELECT actor, key FROM idempotency_keys
	WHERE created_at < $3 AND NOT (actor = $1 AND key = $2)
	ORDER BY created_at LIMIT ` + sweepLimit + ` FOR UPDATE SKIP LOCKED)
AND created_at < $3`
	// sweepLimit bounds the rows one reservation deletes: more than the one
	// row a reservation adds, so expired rows never pile up, and few enough
	// that a reservation after a long quiet spell stays quick.
	sweepLimit = "100"
)

// createCompleting is completeIdempotent ($1 to $7) and, only if it kept
// the response, the insert of the tenant (tenantColumns, from $8), of its
// event (eventArgs but the tenant id, from $34) and the announcement of its
// id ($42) to watchers: one statement, which returns one row when it
// created the tenant and none when the reservation was lost.
var createCompleting = func() string {
	tenantFrom := 8
	eventFrom := tenantFrom + len(tenantColumns)
	notifyArg := eventFrom + eventArgCount - 1
	return `WITH done AS (` + completeIdempotent + ` RETURNING 1),
created AS (INSERT INTO tenants (` + strings.Join(tenantColumns, ", ") + `)
	SELECT ` + placeholders(tenantFrom, len(tenantColumns)) + ` FROM done RETURNING id),
event AS (INSERT INTO events (` + eventColumns + `)
	SELECT created.id, ` + placeholders(eventFrom, eventArgCount-1) + ` FROM created)
SELECT pg_notify('` + watchChannel + `', $` + strconv.Itoa(notifyArg) + `) FROM created`
}()

// ReserveIdempotent implements tenant.IdempotencyStore. Lease and TTL are
// judged by the store's clock (Options.Now), which every replica must keep
// close to the others': a replica whose clock runs ahead takes reservations
// over early. That costs the request it takes one from its work (the token
// refuses its CreateIdempotent, which stores nothing), never a duplicate.
//
// Expired rows are deleted here, opportunistically: every reservation
// deletes up to 100 expired rows of other keys (oldest first, skipping rows
// other reservations are deleting), in the same round trip and transaction.
// Since each reservation adds at most one row, the table never holds more
// than the rows of the last TTL and a hundred expired ones, with no
// background job; a reservation that finds nothing to delete costs one index
// probe on created_at.
//
// The upsert, the read of the kept row and the sweep are one batch, so one
// round trip and one implicit READ COMMITTED transaction: the read, a
// statement of its own, sees the row a concurrent reservation committed
// while the upsert waited for it, and the upsert's lock keeps that row until
// the read.
func (s *Store) ReserveIdempotent(ctx context.Context, actor, key, requestHash string, lease time.Duration) (tenant.IdempotentResponse, bool, error) {
	now := tenant.Timestamp(s.now())
	expired := now.Add(-tenant.IdempotencyTTL)
	token := rand.Text()
	var (
		out   tenant.IdempotentResponse
		fresh bool
	)
	err := s.retry(ctx, func() error {
		b := &pgx.Batch{}
		b.Queue(reserveIdempotent, actor, key, requestHash, token, now, expired, now.Add(-lease))
		b.Queue(selectIdempotent, actor, key)
		b.Queue(sweepIdempotent, actor, key, expired)
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		fresh = tag.RowsAffected() == 1
		if out, err = scanIdempotent(br.QueryRow()); err != nil {
			return fmt.Errorf("read the kept row: %w", err)
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("delete expired rows: %w", err)
		}
		return br.Close()
	})
	if err != nil {
		return tenant.IdempotentResponse{}, false, fmt.Errorf("postgres: reserve idempotency key %q: %w", key, err)
	}
	return out, fresh, nil
}

// CreateIdempotent implements tenant.IdempotencyStore: in one transaction it
// keeps the response for res, which locks res's row, and creates the tenant
// as Create does. It returns an error wrapping tenant.ErrReservationLost
// when res is no longer pending with its token, and Create's errors.
//
// Like Create, it is one round trip and one transaction: a single
// statement (createCompleting) keeps the response and, only if it did,
// inserts the tenant and its event and announces it. A reservation no
// longer pending keeps, inserts and announces nothing. A tenant on a plan
// is kept and inserted only if it may follow the plan
// (createCompletingOnPlan, follow.go), else tenant.ErrPlanNotFound; a
// reservation no longer pending is tenant.ErrReservationLost first.
func (s *Store) CreateIdempotent(ctx context.Context, t *tenant.Tenant, actor string, res tenant.IdempotentResponse,
	respond func(*tenant.Tenant) (tenant.IdempotentResponse, error)) (*tenant.Tenant, error) {
	out, ev, err := tenant.NewTenant(t, actor, s.now())
	if err != nil {
		return nil, fmt.Errorf("postgres: create tenant: %w", err)
	}
	row, err := tenant.ToStore(s.sealer, out, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: create tenant %q: %w", out.Name, err)
	}
	resp, err := respond(out)
	if err != nil {
		return nil, createError(out, err)
	}
	done, err := tenant.Completed(res, resp, s.now())
	if err != nil {
		return nil, createError(out, err)
	}
	h, err := encodeHeader(done.Header)
	if err != nil {
		return nil, createError(out, err)
	}
	j, err := encodeJSON(row)
	if err != nil {
		return nil, createError(out, err)
	}
	args := append([]any{res.Actor, res.Key, res.Token, done.Status, h, nonNil(done.Body), done.CreatedAt}, tenantArgs(row, j)...)
	args = append(args, eventArgs(ev)[1:]...)
	args = append(args, row.ID)
	err = s.retry(ctx, func() error {
		if row.Plan != nil {
			return createdOnPlan(s.pool.QueryRow(ctx, createCompletingOnPlan, args...), row, res.Key)
		}
		tag, err := s.pool.Exec(ctx, createCompleting, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fmt.Errorf("idempotency key %q: %w", res.Key, tenant.ErrReservationLost)
		}
		return nil
	})
	if err := createError(out, err); err != nil {
		return nil, err
	}
	return out, nil
}

// keeping is the response a write of the fleet keeps, in its transaction,
// for the reservation res (fleet.IdempotencyStore); nil for a write
// without one.
//
// The write's transaction locks the reservation first (hold), then writes,
// then keeps the response (keep). A reservation no longer pending fails
// the write before it is done, with tenant.ErrReservationLost rather than
// with what the write would break (a plan name taken, an active rollout):
// the API then answers with the response of the request that took the key
// over. The lock makes a concurrent takeover wait for the transaction, and
// then find the response. The reservation's lock comes before any of the
// fleet's, and ReserveIdempotent takes no other: no deadlock.
type keeping[T any] struct {
	res     tenant.IdempotentResponse
	respond func(T) (tenant.IdempotentResponse, error)
}

func (k *keeping[T]) hold(ctx context.Context, tx pgx.Tx) error {
	if k == nil {
		return nil
	}
	var one int
	err := tx.QueryRow(ctx, holdIdempotent, k.res.Actor, k.res.Key, k.res.Token).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: idempotency key %q: %w", k.res.Key, tenant.ErrReservationLost)
	}
	if err != nil {
		return fmt.Errorf("postgres: lock idempotency key %q: %w", k.res.Key, err)
	}
	return nil
}

// keep keeps the response to what the write stored, v, at now.
func (k *keeping[T]) keep(ctx context.Context, tx pgx.Tx, v T, now time.Time) error {
	if k == nil {
		return nil
	}
	resp, err := k.respond(v)
	if err != nil {
		return err
	}
	done, err := tenant.Completed(k.res, resp, now)
	if err != nil {
		return err
	}
	h, err := encodeHeader(done.Header)
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, completeIdempotent, k.res.Actor, k.res.Key, k.res.Token, done.Status, h, nonNil(done.Body), done.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: keep the response for idempotency key %q: %w", k.res.Key, err)
	}
	if tag.RowsAffected() != 1 { // held: cannot happen
		return fmt.Errorf("postgres: idempotency key %q: %w", k.res.Key, tenant.ErrReservationLost)
	}
	return nil
}

// ReleaseIdempotent implements tenant.IdempotencyStore.
func (s *Store) ReleaseIdempotent(ctx context.Context, res tenant.IdempotentResponse) error {
	if _, err := s.pool.Exec(ctx, releaseIdempotent, res.Actor, res.Key, res.Token); err != nil {
		return fmt.Errorf("postgres: release idempotency key %q: %w", res.Key, unavailable(err))
	}
	return nil
}

// GetIdempotent implements tenant.IdempotencyStore: the row kept for actor
// and key, pending or not, if it is younger than tenant.IdempotencyTTL, by
// the store's clock, and an error wrapping tenant.ErrNotFound otherwise.
func (s *Store) GetIdempotent(ctx context.Context, actor, key string) (tenant.IdempotentResponse, error) {
	expired := tenant.Timestamp(s.now()).Add(-tenant.IdempotencyTTL)
	out, err := scanIdempotent(s.pool.QueryRow(ctx, getIdempotent, actor, key, expired))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return tenant.IdempotentResponse{}, fmt.Errorf("postgres: idempotency key %q: %w", key, tenant.ErrNotFound)
	case err != nil:
		return tenant.IdempotentResponse{}, fmt.Errorf("postgres: idempotency key %q: %w", key, unavailable(err))
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
	if err := row.Scan(&r.Actor, &r.Key, &r.RequestHash, &r.Token, &r.Status, &h, &r.Body, &r.CreatedAt); err != nil {
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

// encodeHeader is a response's header as the header column holds it.
func encodeHeader(h map[string]string) ([]byte, error) {
	if h == nil {
		h = map[string]string{}
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode response header: %w", err)
	}
	return b, nil
}

// nonNil is b, or an empty body for the NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

var _ tenant.IdempotencyStore = (*Store)(nil)
