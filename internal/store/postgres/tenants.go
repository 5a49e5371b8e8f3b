package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Create implements tenant.Store. It returns an error wrapping
// tenant.ErrNameTaken when a tenant that is not deleted has the name,
// tenant.ErrInvalid when t breaks the tenant rules, and
// tenant.ErrPlanNotFound when t is to follow a plan that does not exist,
// is for another provider or lacks the version.
func (s *Store) Create(ctx context.Context, t *tenant.Tenant, actor string) (*tenant.Tenant, error) {
	out, ev, err := tenant.NewTenant(t, actor, s.now())
	if err != nil {
		return nil, fmt.Errorf("postgres: create tenant: %w", err)
	}
	row, err := tenant.ToStore(s.sealer, out, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("postgres: create tenant %q: %w", out.Name, err)
	}
	// No row to lock: the tenant, its event and its announcement go in one
	// batch, which is one implicit transaction. The live-name index decides
	// between concurrent creates of one name: the later waits for the earlier
	// and then fails, announcing nothing. A tenant on a plan is one
	// statement that locks the plan too (createOnPlan, follow.go).
	err = s.retry(ctx, func() error {
		if row.Plan != nil {
			j, err := encodeJSON(row)
			if err != nil {
				return err
			}
			args := append(tenantArgs(row, j), eventArgs(ev)[1:]...)
			return createdOnPlan(s.pool.QueryRow(ctx, createOnPlan, append(args, row.ID)...), row, "")
		}
		return write(ctx, s.pool, true, true, row, []tenant.Event{ev})
	})
	if err := createError(out, err); err != nil {
		return nil, err
	}
	return out, nil
}

// createError words an error of t's create: a clash on the live-name index
// is tenant.ErrNameTaken, on the primary key tenant.ErrConflict.
func createError(t *tenant.Tenant, err error) error {
	if err == nil {
		return nil
	}
	switch code, constraint := pgCode(err); {
	case code == codeUniqueViolation && constraint == liveNameIndex:
		return fmt.Errorf("postgres: create tenant %q: %w", t.Name, tenant.ErrNameTaken)
	case code == codeUniqueViolation && constraint == "tenants_pkey":
		return fmt.Errorf("postgres: create tenant %q: %w: tenant id %s is already used", t.Name, tenant.ErrConflict, t.ID)
	}
	return fmt.Errorf("postgres: create tenant %q: %w", t.Name, err)
}

// Get implements tenant.Store. It returns an error wrapping
// tenant.ErrNotFound when no tenant (without IncludeDeleted: no tenant that
// is not deleted) has that id or name.
func (s *Store) Get(ctx context.Context, idOrName string, opts tenant.GetOptions) (*tenant.Tenant, error) {
	var q string
	switch {
	case tenant.IsID(idOrName) && opts.IncludeDeleted:
		q = selectTenant + ` WHERE id = $1`
	case tenant.IsID(idOrName):
		q = selectTenant + ` WHERE id = $1 AND deleted_at IS NULL`
	case opts.IncludeDeleted:
		// The live tenant (deleted_at NULL sorts first in DESC order), else
		// the most recently deleted. Compared in byte order (the same
		// equality as the database's collation, which is deterministic) so
		// that tenants_name_prefix_idx finds the name's rows.
		q = selectTenant + ` WHERE name COLLATE "C" = $1 ORDER BY deleted_at DESC NULLS FIRST, id DESC LIMIT 1`
	default:
		q = selectTenant + ` WHERE name = $1 AND deleted_at IS NULL`
	}
	t, _, err := s.scanOpen(s.pool.QueryRow(ctx, q, idOrName))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(idOrName)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get tenant %q: %w", idOrName, unavailable(err))
	}
	return t, nil
}

// UpdateDesired implements tenant.Store with tenant.ApplyDesired. It returns
// errors wrapping tenant.ErrNotFound, tenant.ErrConflict,
// tenant.ErrInvalid or tenant.ErrPlanNotFound (a change of the plan to
// one that cannot be followed; see change). A change is announced to
// watchers when it commits.
func (s *Store) UpdateDesired(ctx context.Context, id string, change tenant.DesiredChange) (*tenant.Tenant, error) {
	return s.change(ctx, "update desired state", id, true, 0, func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyDesired(cur, change, now)
	})
}

// RequestDeletion implements tenant.Store with tenant.ApplyDeletion. It
// returns errors wrapping tenant.ErrNotFound, tenant.ErrConflict or
// tenant.ErrInvalidTransition. A request that changes the tenant is
// announced to watchers when it commits.
func (s *Store) RequestDeletion(ctx context.Context, id string, version int64, actor string) (*tenant.Tenant, error) {
	return s.change(ctx, "request deletion", id, true, 0, func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyDeletion(cur, version, actor, now)
	})
}

// UpdateObserved implements tenant.Store with tenant.ApplyObservation. It
// returns errors wrapping tenant.ErrNotFound, tenant.ErrConflict (a newer
// generation exists), tenant.ErrInvalidTransition, tenant.ErrInvalid, or
// tenant.ErrFenced (obs.Epoch is not that of the lease tenant.FenceLease
// names for the tenant), or an error that wraps none of them for a
// panic of the rules or the sealer. Calls made at once may be written in
// one transaction (see group.go); each returns once its write has
// committed. A call that gives up (ctx ends) after a committer took it may
// still be written, since the group's transaction outlives one member's
// deadline; its fence and generation were checked in that transaction, so
// the write is the one it would have made had it committed in time. A
// write that records an event (a status transition) is announced to change
// feeds (Changes) when it commits, never to watchers.
func (s *Store) UpdateObserved(ctx context.Context, id string, obs tenant.Observation) (*tenant.Tenant, error) {
	return s.observe(ctx, id, obs)
}

// change is every write to an existing tenant: in one transaction it checks
// the fence when epoch is not 0, locks the row, asks apply (a domain rule)
// what the tenant and its events become, and writes them, with an
// announcement to watchers when notify is set, else to change feeds when
// apply recorded events. apply returning cur itself and no events means no
// change: nothing is written, nothing announced. A write that changes the
// plan the tenant follows checks and locks the plan first (checkFollowed),
// which costs a round trip more.
//
// The transaction takes two round trips, not four: BEGIN goes to
// PostgreSQL in one pipeline with the fence and the row lock (lockTenant),
// and COMMIT in one with the writes (commitWrite). Between the two, the
// connection is in a transaction; whatever ends the attempt there (an
// error, a refusal, no change, ctx done) leaves it to release, which rolls
// the transaction back or has the pool destroy the connection.
func (s *Store) change(ctx context.Context, what, id string, notify bool, epoch int64, apply func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error)) (*tenant.Tenant, error) {
	if !tenant.IsID(id) {
		return nil, notFound(id)
	}
	var out *tenant.Tenant
	err := s.retry(ctx, func() error {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("postgres: %s of tenant %s: %w", what, id, err)
		}
		defer release(ctx, conn)
		cur, stored, err := s.lockTenant(ctx, conn, id, epoch)
		var fenced fenceError
		if errors.As(err, &fenced) {
			return fmt.Errorf("postgres: %s of tenant %s: %w", what, id, fenced.err)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound(id)
		}
		if err != nil {
			return fmt.Errorf("postgres: %s: read tenant %s: %w", what, id, err)
		}
		next, events, err := apply(cur, s.now())
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", what, err)
		}
		out = next
		if next == cur && len(events) == 0 {
			return nil // release ends the transaction, which wrote nothing
		}
		if err := checkFollowed(ctx, conn, cur, next); err != nil {
			return fmt.Errorf("postgres: %s of tenant %s: %w", what, id, err)
		}
		row, err := tenant.ToStore(s.sealer, next, cur.ComputeConfig, stored)
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", what, err)
		}
		if err := commitWrite(ctx, conn, notify, row, events); err != nil {
			return fmt.Errorf("postgres: %s: write tenant %s: %w", what, id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// beginReadCommitted opens change's transaction, at the isolation level
// inTx uses.
const beginReadCommitted = "BEGIN ISOLATION LEVEL READ COMMITTED"

// lockTenant begins a transaction on conn and reads the tenant's row FOR
// UPDATE in it. With an epoch that is not 0 it checks the fence too, in the
// same transaction and before the row lock. BEGIN, the lease's read and the
// tenant's go as one pipeline: one round trip. A write the fence refuses has
// then locked the tenant's row too, until its rollback. A refusal, or a
// failure to read the lease, is a fenceError.
func (s *Store) lockTenant(ctx context.Context, conn *pgxpool.Conn, id string, epoch int64) (*tenant.Tenant, json.RawMessage, error) {
	b := &pgx.Batch{}
	b.Queue(beginReadCommitted)
	queueLock(b, id, epoch)
	res := conn.SendBatch(ctx, b)
	defer res.Close()
	if _, err := res.Exec(); err != nil {
		return nil, nil, err
	}
	cur, stored, err := s.scanLock(res, epoch)
	if err != nil {
		return nil, nil, err
	}
	if err := res.Close(); err != nil {
		return nil, nil, err
	}
	return cur, stored, nil
}

// queueLock queues on b, in a transaction begun before, the fence of tenant
// id (the epoch of its lease, tenant.FenceLease, held FOR KEY SHARE) when
// epoch is not 0, then the lock of its row (SELECT … FOR UPDATE). change
// (lockTenant) and a group of observations (commitMembers) both lock so, and
// scanLock reads the answers.
func queueLock(b *pgx.Batch, id string, epoch int64) {
	if epoch != 0 {
		b.Queue(fenceEpoch, tenant.FenceLease(id))
	}
	b.Queue(selectTenant+` WHERE id = $1 FOR UPDATE`, id)
}

// scanLock reads from res the answers to the queries queueLock queued with
// epoch: the row, its compute_config opened (and as stored), or a
// fenceError when the fence refuses epoch or cannot be read. It reads every
// answer queueLock queued, even after a refusal, so that res is left at the
// next queries' answers; a refused row is not opened.
func (s *Store) scanLock(res pgx.BatchResults, epoch int64) (*tenant.Tenant, json.RawMessage, error) {
	var fenced error
	if epoch != 0 {
		fenced = fenceResult(res.QueryRow(), epoch)
	}
	cur, err := scanTenant(res.QueryRow())
	if fenced != nil {
		return nil, nil, fenceError{fenced}
	}
	if err != nil {
		return nil, nil, err
	}
	stored, err := tenant.OpenStored(s.sealer, cur)
	if err != nil {
		return nil, nil, err
	}
	return cur, stored, nil
}

// commitWrite sends the update of t, its events and its announcement,
// followed by COMMIT, as one pipeline on conn, whose transaction lockTenant
// began. The announcement is to watchers with notify, else to change feeds
// when there are events (a write that records none announces nothing). A
// COMMIT that PostgreSQL answers with ROLLBACK (the transaction had failed)
// is pgx.ErrTxCommitRollback: the write did not happen.
func commitWrite(ctx context.Context, conn *pgxpool.Conn, notify bool, t *tenant.Tenant, events []tenant.Event) error {
	b, err := writeBatch(false, notify, t, events)
	if err != nil {
		return err
	}
	if !notify && len(events) > 0 {
		b.Queue(notifyChanged, t.ID)
	}
	b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() != "COMMIT" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	return conn.SendBatch(ctx, b).Close()
}

// release returns conn to the pool outside any transaction. A transaction
// left open (by an error, a refusal of the fence, a change that writes
// nothing, or ctx ending between change's two pipelines) is rolled back
// first, under a context that outlives ctx for at most rollbackTimeout. A
// connection still in a transaction after that, or closed, or busy, is
// destroyed by the pool rather than reused.
func release(ctx context.Context, conn *pgxpool.Conn) {
	if c := conn.Conn(); !c.IsClosed() && c.PgConn().TxStatus() != 'I' {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		_, _ = conn.Exec(rctx, "ROLLBACK")
		cancel()
	}
	conn.Release()
}

// rollbackTimeout bounds release's rollback, which may run after the
// caller's context has ended.
const rollbackTimeout = 2 * time.Second

// fenceError carries a refusal of the fence (or a failure to read it) out of
// lockTenant.
type fenceError struct{ err error }

func (e fenceError) Error() string { return e.err.Error() }
func (e fenceError) Unwrap() error { return e.err }
