package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Rollouts, their members and their events (fleet.Store).
//
// A write that records rollout events locks the rollout's row first (FOR
// NO KEY UPDATE, which inserts of members and events referencing it do not
// wait for) and numbers the events after the last one: writers of one
// rollout take turns, so no two give out the same number. Locks are taken
// in one order: a tenant's row (MoveTenant), then the rollout's, then a
// member's; UpdateRollout then the plan's; a tenant's row, then its
// plan's (follow.go).

// activeStates are the states of fleet.State.Active, as the partial index
// rollouts_active_plan_key names them.
const activeStates = `('running', 'paused', 'halted', 'aborting')`

const (
	rolloutColumns = `id, plan, spec, waves, state, wave, bake_from, rollback, message, version, created_by, created_at, updated_at, finished_at`
	selectRollout  = `SELECT ` + rolloutColumns + ` FROM rollouts`
	lockRollout    = selectRollout + ` WHERE id = $1 FOR NO KEY UPDATE`
	insertRollout  = `INSERT INTO rollouts (` + rolloutColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	writeRollout = `UPDATE rollouts SET state = $2, wave = $3, bake_from = $4, rollback = $5, message = $6, version = $7,
	updated_at = $8, finished_at = $9 WHERE id = $1`

	memberColumns = `tenant_id, tenant_name, wave, state, from_version, generation, changed_at, finished_at, message`
	lockMember    = `SELECT ` + memberColumns + ` FROM rollout_members WHERE rollout_id = $1 AND tenant_id = $2 FOR UPDATE`
	// addMembers adds members (fleet.NewMembers made them: not changed
	// yet, so the other columns keep their defaults) from arrays of their
	// fields; tenants that are members already stay as they are.
	addMembers = `INSERT INTO rollout_members (rollout_id, tenant_id, tenant_name, wave, state, from_version)
SELECT $1, m.tenant_id, m.tenant_name, m.wave, m.state, m.from_version
FROM unnest($2::uuid[], $3::text[], $4::integer[], $5::text[], $6::bigint[]) AS m (tenant_id, tenant_name, wave, state, from_version)
ON CONFLICT (rollout_id, tenant_id) DO NOTHING`
	writeMember = `UPDATE rollout_members SET state = $3, generation = $4, changed_at = $5, finished_at = $6, message = $7
WHERE rollout_id = $1 AND tenant_id = $2`

	rolloutEventColumns = `seq, time, type, tenant_id, tenant_name, wave, message, actor`
	// insertRolloutEvent numbers the event after the rollout's last; the
	// caller holds the rollout's row lock.
	insertRolloutEvent = `INSERT INTO rollout_events (rollout_id, ` + rolloutEventColumns + `)
SELECT $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8 FROM rollout_events WHERE rollout_id = $1`
)

func scanRollout(row pgx.Row) (*fleet.Rollout, error) {
	var (
		r                 fleet.Rollout
		plan              string
		spec, waves       []byte
		bakeFrom, finishd *time.Time
	)
	err := row.Scan(&r.ID, &plan, &spec, &waves, &r.State, &r.Wave, &bakeFrom, &r.Rollback, &r.Message, &r.Version,
		&r.CreatedBy, &r.CreatedAt, &r.UpdatedAt, &finishd)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(spec, &r.Spec); err != nil {
		return nil, fmt.Errorf("rollout %s: spec: %w", r.ID, err)
	}
	if err := json.Unmarshal(waves, &r.Waves); err != nil {
		return nil, fmt.Errorf("rollout %s: waves: %w", r.ID, err)
	}
	if len(r.Waves) == 0 {
		r.Waves = nil
	}
	r.Spec.Plan = plan
	r.BakeFrom, r.FinishedAt = utc(bakeFrom), utc(finishd)
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &r, nil
}

func scanMember(row pgx.Row) (fleet.Member, error) {
	var m fleet.Member
	err := row.Scan(&m.TenantID, &m.TenantName, &m.Wave, &m.State, &m.From, &m.Generation, &m.ChangedAt, &m.FinishedAt, &m.Message)
	m.ChangedAt, m.FinishedAt = utc(m.ChangedAt), utc(m.FinishedAt)
	return m, err
}

// timestamp is a time to store, normalised, or nil.
func timestamp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	ts := tenant.Timestamp(*t)
	return &ts
}

// rolloutNotFound is the error for a rollout id no row has.
func rolloutNotFound(id string) error {
	return fmt.Errorf("postgres: rollout %q: %w", id, fleet.ErrNotFound)
}

// queueAddMembers queues addMembers for members of rollout id on b.
func queueAddMembers(b *pgx.Batch, id string, members []fleet.Member) {
	if len(members) == 0 {
		return
	}
	ids, names, states := make([]string, len(members)), make([]string, len(members)), make([]string, len(members))
	waves, froms := make([]int32, len(members)), make([]int64, len(members))
	for i, m := range members {
		ids[i], names[i], waves[i], states[i], froms[i] = m.TenantID, m.TenantName, int32(m.Wave), string(m.State), m.From
	}
	b.Queue(addMembers, id, ids, names, waves, states, froms)
}

// queueRolloutEvents queues the inserts of events of rollout id on b, at
// their times (fleet.EventsAt).
func queueRolloutEvents(b *pgx.Batch, id string, now time.Time, events ...fleet.Event) {
	for _, e := range fleet.EventsAt(events, now) {
		b.Queue(insertRolloutEvent, id, e.Time, string(e.Type), e.TenantID, e.TenantName, e.Wave, e.Message, e.Actor)
	}
}

// CreateRollout implements fleet.Store. A plan with an active rollout is
// fleet.ErrConflict (the unique index rollouts_active_plan_key decides
// between concurrent creates).
func (s *Store) CreateRollout(ctx context.Context, in *fleet.Rollout, members []fleet.Member) (*fleet.Rollout, error) {
	return s.createRollout(ctx, in, members, nil)
}

// CreateRolloutIdempotent implements fleet.IdempotencyStore: CreateRollout
// keeping the response to it, in one transaction.
func (s *Store) CreateRolloutIdempotent(ctx context.Context, in *fleet.Rollout, members []fleet.Member, res tenant.IdempotentResponse,
	respond func(*fleet.Rollout) (tenant.IdempotentResponse, error)) (*fleet.Rollout, error) {
	return s.createRollout(ctx, in, members, &keeping[*fleet.Rollout]{res, respond})
}

func (s *Store) createRollout(ctx context.Context, in *fleet.Rollout, members []fleet.Member, k *keeping[*fleet.Rollout]) (*fleet.Rollout, error) {
	r, members, started, err := fleet.NewRollout(in, members, s.now())
	if err != nil {
		return nil, fmt.Errorf("postgres: create rollout: %w", err)
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		return nil, fmt.Errorf("postgres: create rollout: encode spec: %w", err)
	}
	waves := []byte("[]")
	if len(r.Waves) > 0 {
		if waves, err = json.Marshal(r.Waves); err != nil {
			return nil, fmt.Errorf("postgres: create rollout: encode waves: %w", err)
		}
	}
	plan := r.Spec.Plan
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := k.hold(ctx, tx); err != nil {
			return err
		}
		var (
			planExists bool
			provider   *string
			target     fleet.FoundPlan
		)
		// The plan a fleet move moves tenants onto is locked FOR SHARE, as
		// a tenant's write that follows it locks it: its deletion waits,
		// then sees the rollout.
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM plans WHERE name = $1), (SELECT provider FROM plans WHERE name = $3 FOR SHARE),
	EXISTS (SELECT 1 FROM plan_versions WHERE plan = $3 AND version = $2)`, plan, r.Spec.To, r.Spec.Target().Name).Scan(&planExists, &provider, &target.HasVersion)
		if err != nil {
			return fmt.Errorf("postgres: create rollout of plan %q: %w", plan, err)
		}
		if provider != nil {
			target.Exists, target.Provider = true, *provider
		}
		if err := fleet.CheckTarget(r.Spec, planExists, target); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		b := &pgx.Batch{}
		b.Queue(insertRollout, r.ID, plan, spec, waves, string(r.State), r.Wave, r.BakeFrom, r.Rollback, r.Message, r.Version,
			r.CreatedBy, r.CreatedAt, r.UpdatedAt, r.FinishedAt)
		queueAddMembers(b, r.ID, members)
		queueRolloutEvents(b, r.ID, r.CreatedAt, started)
		err = tx.SendBatch(ctx, b).Close()
		switch code, constraint := pgCode(err); {
		case code == codeUniqueViolation && constraint == "rollouts_active_plan_key":
			return fmt.Errorf("postgres: create rollout of plan %q: %w: the plan has a rollout that has not finished", plan, fleet.ErrConflict)
		case code == codeUniqueViolation && constraint == "rollouts_pkey":
			return fmt.Errorf("postgres: create rollout of plan %q: %w: rollout id %s is already used", plan, fleet.ErrConflict, r.ID)
		case code == codeForeignKeyViolation:
			return fmt.Errorf("postgres: plan %q: %w", plan, fleet.ErrNotFound) // deleted meanwhile
		case err != nil:
			return fmt.Errorf("postgres: create rollout of plan %q: %w", plan, err)
		}
		return k.keep(ctx, tx, r, s.now())
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// GetRollout implements fleet.Store.
func (s *Store) GetRollout(ctx context.Context, id string) (*fleet.Rollout, error) {
	if !tenant.IsID(id) {
		return nil, rolloutNotFound(id)
	}
	r, err := scanRollout(s.pool.QueryRow(ctx, selectRollout+` WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, rolloutNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get rollout %q: %w", id, unavailable(err))
	}
	return r, nil
}

// ListRollouts implements fleet.Store.
func (s *Store) ListRollouts(ctx context.Context, opts fleet.RolloutListOptions) ([]*fleet.Rollout, error) {
	limit := opts.Limit
	switch {
	case limit > 0:
	case opts.Active, opts.Unsettled:
		limit = 0 // every one (LIMIT NULL): at most one a plan, and the few an abort left converging
	default:
		limit = 100
	}
	q, args := selectRollout+` WHERE true`, []any{nil}
	if limit > 0 {
		args[0] = limit
	}
	if opts.Plan != "" {
		q, args = q+` AND plan = $2`, append(args, opts.Plan)
	}
	if opts.Active {
		q += ` AND state IN ` + activeStates
	}
	if opts.Unsettled {
		// rollout_members_changing_idx holds the changing members alone.
		q += ` AND (state IN ` + activeStates + ` OR id IN (SELECT rollout_id FROM rollout_members WHERE state = 'changing'))`
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT $1`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list rollouts: %w", unavailable(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*fleet.Rollout, error) { return scanRollout(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list rollouts: %w", unavailable(err))
	}
	return out, nil
}

// Members implements fleet.Store.
func (s *Store) Members(ctx context.Context, id string) ([]fleet.Member, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+memberColumns+` FROM rollout_members WHERE rollout_id = $1 ORDER BY wave, tenant_id`, id)
	if err != nil {
		return nil, fmt.Errorf("postgres: members of rollout %s: %w", id, unavailable(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fleet.Member, error) { return scanMember(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: members of rollout %s: %w", id, unavailable(err))
	}
	return out, nil
}

// MemberSummary counts a rollout's members by wave and state, and names
// the failed ones, in one query; see fleet.MemberSummarizer.
func (s *Store) MemberSummary(ctx context.Context, id string) (*fleet.Summary, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT wave, state, count(*), coalesce(array_agg(tenant_name) FILTER (WHERE state = $2), '{}')
	FROM rollout_members WHERE rollout_id = $1 GROUP BY wave, state`, id, fleet.MemberFailed)
	if err != nil {
		return nil, fmt.Errorf("postgres: members of rollout %s: %w", id, unavailable(err))
	}
	out := &fleet.Summary{ByWave: map[int]fleet.Counts{}}
	var (
		wave, n int
		state   fleet.MemberState
		failed  []string
	)
	_, err = pgx.ForEachRow(rows, []any{&wave, &state, &n, &failed}, func() error {
		if out.ByWave[wave] == nil {
			out.ByWave[wave] = fleet.Counts{}
		}
		out.ByWave[wave][state] = n
		out.Failed = append(out.Failed, failed...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: members of rollout %s: %w", id, unavailable(err))
	}
	slices.Sort(out.Failed)
	return out, nil
}

// AddMembers implements fleet.Store. A rollout that has finished is
// fleet.ErrState.
func (s *Store) AddMembers(ctx context.Context, id string, members []fleet.Member) error {
	if !tenant.IsID(id) {
		return rolloutNotFound(id)
	}
	members, err := fleet.NewMembers(members)
	if err != nil {
		return fmt.Errorf("postgres: add members to rollout %s: %w", id, err)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		var state fleet.State
		err := tx.QueryRow(ctx, `SELECT state FROM rollouts WHERE id = $1 FOR NO KEY UPDATE`, id).Scan(&state)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return rolloutNotFound(id)
		case err != nil:
			return fmt.Errorf("postgres: add members to rollout %s: %w", id, err)
		}
		if err := fleet.CheckAddMembers(state); err != nil {
			return fmt.Errorf("postgres: add members to rollout %s: %w", id, err)
		}
		b := &pgx.Batch{}
		queueAddMembers(b, id, members)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("postgres: add members to rollout %s: %w", id, err)
		}
		return s.sizeWaves(ctx, tx, id)
	})
}

// sizeWaves makes the sizes of a rollout's waves their numbers of members
// (fleet.SizeWaves), bumping its version when one changes. The caller
// holds the rollout's row lock.
func (s *Store) sizeWaves(ctx context.Context, tx pgx.Tx, id string) error {
	r, err := scanRollout(tx.QueryRow(ctx, selectRollout+` WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("postgres: size the waves of rollout %s: %w", id, err)
	}
	rows, err := tx.Query(ctx, `SELECT wave, count(*) FROM rollout_members WHERE rollout_id = $1 GROUP BY wave`, id)
	if err != nil {
		return fmt.Errorf("postgres: size the waves of rollout %s: %w", id, err)
	}
	counts := map[int]int{}
	var wave, n int
	if _, err := pgx.ForEachRow(rows, []any{&wave, &n}, func() error { counts[wave] = n; return nil }); err != nil {
		return fmt.Errorf("postgres: size the waves of rollout %s: %w", id, err)
	}
	if !fleet.SizeWaves(r.Waves, counts) {
		return nil
	}
	waves, err := json.Marshal(r.Waves)
	if err != nil {
		return fmt.Errorf("postgres: size the waves of rollout %s: %w", id, err)
	}
	_, err = tx.Exec(ctx, `UPDATE rollouts SET waves = $2, version = version + 1, updated_at = $3 WHERE id = $1`,
		id, waves, tenant.Timestamp(s.now()))
	if err != nil {
		return fmt.Errorf("postgres: size the waves of rollout %s: %w", id, err)
	}
	return nil
}

// UpdateRollout implements fleet.Store. A rollout's completion is refused
// with fleet.ErrConflict while tenants it would take are not its members.
//
// The completion updates the plan's current version, which takes the
// plan's row lock, and only then, in the next statement of the same
// round trip, looks for tenants that follow the plan and that
// the rollout would take (fleet.Select's candidates: not pinned, not being
// deleted, on another version than the target and, with Spec.From, on
// that one) but are not its members. A tenant's write onto the plan holds
// the row FOR SHARE until it commits (follow.go): either it committed
// before the lock was granted, and the next statement (a new snapshot, at
// READ COMMITTED) sees it, or it waits for the completion. The driver,
// told of the conflict, adds such tenants to the last wave and completes
// once they are done.
func (s *Store) UpdateRollout(ctx context.Context, r *fleet.Rollout, events ...fleet.Event) (*fleet.Rollout, error) {
	if err := fleet.CheckUpdate(r); err != nil {
		return nil, fmt.Errorf("postgres: update rollout %s: %w", r.ID, err)
	}
	if !tenant.IsID(r.ID) {
		return nil, rolloutNotFound(r.ID)
	}
	var out *fleet.Rollout
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		cur, err := scanRollout(tx.QueryRow(ctx, lockRollout, r.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			return rolloutNotFound(r.ID)
		}
		if err != nil {
			return fmt.Errorf("postgres: update rollout %s: %w", r.ID, err)
		}
		next, err := fleet.ApplyUpdate(cur, r, s.now())
		if err != nil {
			return fmt.Errorf("postgres: update rollout %s: %w", r.ID, err)
		}
		now := next.UpdatedAt
		b := &pgx.Batch{}
		b.Queue(writeRollout, next.ID, string(next.State), next.Wave, next.BakeFrom, next.Rollback, next.Message, next.Version, now, next.FinishedAt)
		var (
			newcomers []string
			count     int
		)
		if next.State == fleet.StateCompleted && cur.State != fleet.StateCompleted {
			// The plan's row lock first, the newcomers after, in a
			// statement of their own (see above).
			if cur.Spec.Moves() {
				// A fleet move leaves the plan's current version as it is.
				b.Queue(`SELECT 1 FROM plans WHERE name = $1 FOR UPDATE`, cur.Spec.Plan)
			} else {
				b.Queue(`UPDATE plans SET current_version = $2, updated_at = $3 WHERE name = $1`, cur.Spec.Plan, cur.Spec.To, now)
			}
			b.Queue(selectNewcomers, cur.Spec.Plan, cur.Spec.Done(), cur.Spec.From, cur.ID).Query(func(rows pgx.Rows) error {
				var name string
				_, err := pgx.ForEachRow(rows, []any{&name, &count}, func() error {
					newcomers = append(newcomers, name)
					return nil
				})
				return err
			})
		}
		queueRolloutEvents(b, r.ID, now, events...)
		err = tx.SendBatch(ctx, b).Close()
		if code, constraint := pgCode(err); code == codeUniqueViolation && constraint == "rollouts_active_plan_key" {
			return fmt.Errorf("postgres: update rollout %s: %w: plan %q has another rollout that has not finished", r.ID, fleet.ErrConflict, cur.Spec.Plan)
		}
		if err != nil {
			return fmt.Errorf("postgres: update rollout %s: %w", r.ID, err)
		}
		if len(newcomers) > 0 {
			return fmt.Errorf("postgres: update rollout %s: %w", r.ID, fleet.NewcomersError(cur, newcomers, count))
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateMember implements fleet.Store.
func (s *Store) UpdateMember(ctx context.Context, id string, m fleet.Member, expect fleet.MemberState, events ...fleet.Event) error {
	if !tenant.IsID(id) || !tenant.IsID(m.TenantID) {
		return fmt.Errorf("postgres: tenant %q in rollout %q: %w", m.TenantID, id, fleet.ErrNotFound)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT 1 FROM rollouts WHERE id = $1 FOR NO KEY UPDATE`, id)
		b.Queue(lockMember, id, m.TenantID)
		res := tx.SendBatch(ctx, b)
		_, err := res.Exec()
		var cur fleet.Member
		if err == nil {
			cur, err = scanMember(res.QueryRow())
		}
		if err := errors.Join(err, res.Close()); errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: tenant %s in rollout %q: %w", m.TenantID, id, fleet.ErrNotFound)
		} else if err != nil {
			return fmt.Errorf("postgres: update member %s of rollout %s: %w", m.TenantID, id, err)
		}
		next, err := fleet.ApplyMemberUpdate(cur, m, expect)
		if err != nil {
			return fmt.Errorf("postgres: update member %s of rollout %s: %w", m.TenantID, id, err)
		}
		b = &pgx.Batch{}
		queueWriteMember(b, id, next)
		queueRolloutEvents(b, id, tenant.Timestamp(s.now()), events...)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("postgres: update member %s of rollout %s: %w", m.TenantID, id, err)
		}
		return nil
	})
}

func queueWriteMember(b *pgx.Batch, id string, m fleet.Member) {
	b.Queue(writeMember, id, m.TenantID, string(m.State), m.Generation, timestamp(m.ChangedAt), timestamp(m.FinishedAt), m.Message)
}

// MoveTenant implements fleet.Store: in one transaction it locks the
// tenant's row (as change does), the rollout's and the member's, asks
// fleet.ApplyMove, and writes the tenant (sealed, with its events and its
// announcement to watchers, as UpdateDesired's change), the member and the
// rollout's event. Three round trips: BEGIN with the tenant's lock, the
// rollout's and member's reads, the writes with COMMIT. A member not in
// state mv.Expect is fleet.ErrConflict and nothing is written; a
// concurrent move of the same member waits for the tenant's lock and then
// finds the member moved.
func (s *Store) MoveTenant(ctx context.Context, id string, mv fleet.Move) (fleet.Member, error) {
	if !tenant.IsID(id) {
		return fleet.Member{}, rolloutNotFound(id)
	}
	if !tenant.IsID(mv.TenantID) {
		return fleet.Member{}, fmt.Errorf("postgres: tenant %s in rollout %q: %w", mv.TenantID, id, fleet.ErrNotFound)
	}
	var out fleet.Member
	err := s.retry(ctx, func() error {
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("postgres: move tenant %s: %w", mv.TenantID, err)
		}
		defer release(ctx, conn)
		cur, stored, err := s.lockTenant(ctx, conn, mv.TenantID, 0)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: %w", fleet.ErrNotFound, notFound(mv.TenantID))
		}
		if err != nil {
			return fmt.Errorf("postgres: move tenant %s: read tenant: %w", mv.TenantID, err)
		}
		r, m, err := readMove(ctx, conn, id, mv.TenantID)
		if err != nil {
			return err
		}
		now := s.now()
		next, events, member, ev, err := fleet.ApplyMove(r, cur, m, mv, now)
		if err != nil {
			return fmt.Errorf("postgres: move tenant %s: %w", mv.TenantID, err)
		}
		b := &pgx.Batch{}
		if next != nil {
			row, err := tenant.ToStore(s.sealer, next, cur.ComputeConfig, stored)
			if err != nil {
				return fmt.Errorf("postgres: move tenant %s: %w", mv.TenantID, err)
			}
			if b, err = writeBatch(false, true, row, events); err != nil {
				return fmt.Errorf("postgres: move tenant %s: %w", mv.TenantID, err)
			}
		}
		queueWriteMember(b, id, member)
		queueRolloutEvents(b, id, tenant.Timestamp(now), ev)
		b.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
			if tag.String() != "COMMIT" {
				return pgx.ErrTxCommitRollback
			}
			return nil
		})
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("postgres: move tenant %s: write: %w", mv.TenantID, err)
		}
		out = member
		return nil
	})
	if err != nil {
		return fleet.Member{}, err
	}
	return out, nil
}

// readMove reads, in the transaction begun on conn, rollout id and its
// member tenantID, locking both.
func readMove(ctx context.Context, conn batcher, id, tenantID string) (*fleet.Rollout, fleet.Member, error) {
	b := &pgx.Batch{}
	b.Queue(lockRollout, id)
	b.Queue(lockMember, id, tenantID)
	res := conn.SendBatch(ctx, b)
	defer res.Close()
	r, err := scanRollout(res.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fleet.Member{}, rolloutNotFound(id)
	}
	if err != nil {
		return nil, fleet.Member{}, fmt.Errorf("postgres: move tenant %s: read rollout: %w", tenantID, err)
	}
	m, err := scanMember(res.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fleet.Member{}, fmt.Errorf("postgres: tenant %s in rollout %q: %w", tenantID, id, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fleet.Member{}, fmt.Errorf("postgres: move tenant %s: read member: %w", tenantID, err)
	}
	if err := res.Close(); err != nil {
		return nil, fleet.Member{}, fmt.Errorf("postgres: move tenant %s: %w", tenantID, err)
	}
	return r, m, nil
}

// ListRolloutEvents implements fleet.Store.
func (s *Store) ListRolloutEvents(ctx context.Context, id string, after int64, limit int) ([]fleet.Event, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+rolloutEventColumns+` FROM rollout_events WHERE rollout_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, id, after, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: events of rollout %s: %w", id, unavailable(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (fleet.Event, error) {
		e := fleet.Event{RolloutID: id}
		err := row.Scan(&e.Seq, &e.Time, &e.Type, &e.TenantID, &e.TenantName, &e.Wave, &e.Message, &e.Actor)
		e.Time = e.Time.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: events of rollout %s: %w", id, unavailable(err))
	}
	return out, nil
}
