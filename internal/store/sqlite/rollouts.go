package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Rollouts, their members and their events (fleet.Store).

// activeStates are the states of fleet.State.Active, as the partial index
// rollouts_active_plan names them.
const activeStates = `('running', 'paused', 'halted', 'aborting')`

const (
	rolloutColumns = `id, plan, spec, waves, state, wave, bake_from, rollback, message, version, created_by, created_at, updated_at, finished_at`
	selectRollout  = `SELECT ` + rolloutColumns + ` FROM rollouts`
	insertRollout  = `INSERT INTO rollouts (` + rolloutColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	writeRollout   = `UPDATE rollouts SET state = ?, wave = ?, bake_from = ?, rollback = ?, message = ?, version = ?,
	updated_at = ?, finished_at = ? WHERE id = ?`

	memberColumns = `tenant_id, tenant_name, wave, state, from_version, generation, changed_at, finished_at, message`
	selectMember  = `SELECT ` + memberColumns + ` FROM rollout_members WHERE rollout_id = ? AND tenant_id = ?`
	// addMember adds a member (fleet.NewMembers made it); a tenant that is
	// a member already stays as it is.
	addMember = `INSERT INTO rollout_members (rollout_id, ` + memberColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (rollout_id, tenant_id) DO NOTHING`
	writeMember = `UPDATE rollout_members SET state = ?, generation = ?, changed_at = ?, finished_at = ?, message = ?
	WHERE rollout_id = ? AND tenant_id = ?`

	eventColumns = `seq, time, type, tenant_id, tenant_name, wave, message, actor`
	// insertRolloutEvent numbers the event after the rollout's last: the
	// writer is alone, so no other write can take the number meanwhile.
	insertRolloutEvent = `INSERT INTO rollout_events (rollout_id, ` + eventColumns + `)
	SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 FROM rollout_events WHERE rollout_id = ?1`
)

func scanRollout(row scanner) (*fleet.Rollout, error) {
	var (
		r                    fleet.Rollout
		plan, spec, waves    string
		bakeFrom, finishedAt sql.NullInt64
		created, updated     int64
	)
	err := row.Scan(&r.ID, &plan, &spec, &waves, &r.State, &r.Wave, &bakeFrom, &r.Rollback, &r.Message, &r.Version,
		&r.CreatedBy, &created, &updated, &finishedAt)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &r.Spec); err != nil {
		return nil, fmt.Errorf("sqlite: rollout %s: decode spec: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(waves), &r.Waves); err != nil {
		return nil, fmt.Errorf("sqlite: rollout %s: decode waves: %w", r.ID, err)
	}
	if len(r.Waves) == 0 {
		r.Waves = nil
	}
	r.Spec.Plan = plan
	r.BakeFrom, r.FinishedAt = fromNullMicros(bakeFrom), fromNullMicros(finishedAt)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &r, nil
}

func scanMember(row scanner) (fleet.Member, error) {
	var (
		m                     fleet.Member
		changedAt, finishedAt sql.NullInt64
	)
	err := row.Scan(&m.TenantID, &m.TenantName, &m.Wave, &m.State, &m.From, &m.Generation, &changedAt, &finishedAt, &m.Message)
	m.ChangedAt, m.FinishedAt = fromNullMicros(changedAt), fromNullMicros(finishedAt)
	return m, err
}

// nullTime is a time to store, normalised, or NULL.
func nullTime(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	ts := tenant.Timestamp(*t)
	return nullMicros(&ts)
}

// CreateRollout stores a new rollout with its members; see fleet.Store.
func (s *Store) CreateRollout(ctx context.Context, in *fleet.Rollout, members []fleet.Member) (*fleet.Rollout, error) {
	return s.createRollout(ctx, in, members, nil)
}

// CreateRolloutIdempotent stores a new rollout with its members and keeps
// the response to it; see fleet.IdempotencyStore.
func (s *Store) CreateRolloutIdempotent(ctx context.Context, in *fleet.Rollout, members []fleet.Member, res tenant.IdempotentResponse,
	respond func(*fleet.Rollout) (tenant.IdempotentResponse, error)) (*fleet.Rollout, error) {
	return s.createRollout(ctx, in, members, &keeping[*fleet.Rollout]{res, respond})
}

func (s *Store) createRollout(ctx context.Context, in *fleet.Rollout, members []fleet.Member, k *keeping[*fleet.Rollout]) (*fleet.Rollout, error) {
	r, members, started, err := fleet.NewRollout(in, members, s.now())
	if err != nil {
		return nil, fmt.Errorf("sqlite: create rollout: %w", err)
	}
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create rollout: encode spec: %w", err)
	}
	waves := jsonText(r.Waves, "[]")
	plan := r.Spec.Plan
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := k.hold(ctx, s, tx); err != nil {
			return err
		}
		var (
			planExists bool
			provider   sql.NullString
			target     fleet.FoundPlan
		)
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM plans WHERE name = ?1), (SELECT provider FROM plans WHERE name = ?3),
			EXISTS (SELECT 1 FROM plan_versions WHERE plan = ?3 AND version = ?2)`, plan, r.Spec.To, r.Spec.Target().Name).Scan(&planExists, &provider, &target.HasVersion)
		if err != nil {
			return fmt.Errorf("sqlite: create rollout of plan %q: %w", plan, err)
		}
		target.Exists, target.Provider = provider.Valid, provider.String
		if err := fleet.CheckTarget(r.Spec, planExists, target); err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		_, err = tx.ExecContext(ctx, insertRollout, r.ID, plan, string(spec), waves, string(r.State), r.Wave, nullTime(r.BakeFrom), r.Rollback, r.Message,
			r.Version, r.CreatedBy, micros(r.CreatedAt), micros(r.UpdatedAt), nullTime(r.FinishedAt))
		switch {
		case isUniqueViolation(err):
			return fmt.Errorf("sqlite: create rollout of plan %q: %w: the plan has a rollout that has not finished", plan, fleet.ErrConflict)
		case isPrimaryKeyViolation(err):
			return fmt.Errorf("sqlite: create rollout of plan %q: %w: rollout id %s is already used", plan, fleet.ErrConflict, r.ID)
		case err != nil:
			return fmt.Errorf("sqlite: create rollout of plan %q: %w", plan, err)
		}
		if err := addMembers(ctx, tx, r.ID, members); err != nil {
			return err
		}
		if err := insertRolloutEvents(ctx, tx, r.ID, r.CreatedAt, started); err != nil {
			return err
		}
		return k.keep(ctx, s, tx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func addMembers(ctx context.Context, tx *sql.Tx, id string, members []fleet.Member) error {
	for _, m := range members {
		_, err := tx.ExecContext(ctx, addMember, id, m.TenantID, m.TenantName, m.Wave, string(m.State), m.From, m.Generation,
			nullTime(m.ChangedAt), nullTime(m.FinishedAt), m.Message)
		if err != nil {
			return fmt.Errorf("sqlite: add tenant %s to rollout %s: %w", m.TenantID, id, err)
		}
	}
	return nil
}

// insertRolloutEvents records events of rollout id, numbering them, at
// their times (fleet.EventsAt).
func insertRolloutEvents(ctx context.Context, tx *sql.Tx, id string, now time.Time, events ...fleet.Event) error {
	for _, e := range fleet.EventsAt(events, now) {
		_, err := tx.ExecContext(ctx, insertRolloutEvent, id, micros(e.Time), string(e.Type), e.TenantID, e.TenantName, e.Wave, e.Message, e.Actor)
		if err != nil {
			return fmt.Errorf("sqlite: record %s event of rollout %s: %w", e.Type, id, err)
		}
	}
	return nil
}

// GetRollout returns a rollout; see fleet.Store.
func (s *Store) GetRollout(ctx context.Context, id string) (*fleet.Rollout, error) {
	row, err := s.queryRow(ctx, selectRollout+` WHERE id = ?`, id)
	if err != nil {
		return nil, err
	}
	r, err := scanRollout(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: rollout %q: %w", id, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get rollout %q: %w", id, err)
	}
	return r, nil
}

// ListRollouts returns rollouts, newest first; see fleet.Store.
func (s *Store) ListRollouts(ctx context.Context, opts fleet.RolloutListOptions) ([]*fleet.Rollout, error) {
	limit := opts.Limit
	switch {
	case limit > 0:
	case opts.Active, opts.Unsettled:
		limit = -1 // every one: at most one a plan, and the few an abort left converging
	default:
		limit = 100
	}
	q, args := selectRollout+` WHERE TRUE`, []any{}
	if opts.Plan != "" {
		q, args = q+` AND plan = ?`, append(args, opts.Plan)
	}
	if opts.Active {
		q += ` AND state IN ` + activeStates
	}
	if opts.Unsettled {
		// rollout_members_changing holds the changing members alone.
		q += ` AND (state IN ` + activeStates + ` OR id IN (SELECT rollout_id FROM rollout_members WHERE state = 'changing'))`
	}
	rows, err := s.query(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list rollouts: %w", err)
	}
	defer rows.Close()
	var out []*fleet.Rollout
	for rows.Next() {
		r, err := scanRollout(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list rollouts: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list rollouts: %w", err)
	}
	return out, nil
}

// Members returns a rollout's members in wave, then tenant id, order; see
// fleet.Store.
func (s *Store) Members(ctx context.Context, id string) ([]fleet.Member, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, `SELECT `+memberColumns+` FROM rollout_members WHERE rollout_id = ? ORDER BY wave, tenant_id`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
	}
	defer rows.Close()
	var out []fleet.Member
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
	}
	return out, nil
}

// MemberSummary counts a rollout's members by wave and state, and names
// the failed ones, without reading each; see fleet.MemberSummarizer.
func (s *Store) MemberSummary(ctx context.Context, id string) (*fleet.Summary, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	out := &fleet.Summary{ByWave: map[int]fleet.Counts{}}
	rows, err := s.query(ctx, `SELECT wave, state, count(*) FROM rollout_members WHERE rollout_id = ? GROUP BY wave, state`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var wave, n int
		var state fleet.MemberState
		if err := rows.Scan(&wave, &state, &n); err != nil {
			return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
		}
		if out.ByWave[wave] == nil {
			out.ByWave[wave] = fleet.Counts{}
		}
		out.ByWave[wave][state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: members of rollout %s: %w", id, err)
	}
	rows.Close()
	failed, err := s.query(ctx, `SELECT tenant_name FROM rollout_members WHERE rollout_id = ? AND state = ? ORDER BY tenant_name`, id, fleet.MemberFailed)
	if err != nil {
		return nil, fmt.Errorf("sqlite: failed members of rollout %s: %w", id, err)
	}
	defer failed.Close()
	for failed.Next() {
		var name string
		if err := failed.Scan(&name); err != nil {
			return nil, fmt.Errorf("sqlite: failed members of rollout %s: %w", id, err)
		}
		out.Failed = append(out.Failed, name)
	}
	if err := failed.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: failed members of rollout %s: %w", id, err)
	}
	return out, nil
}

// AddMembers adds pending members to an active rollout; see fleet.Store.
// A rollout that has finished is fleet.ErrState.
func (s *Store) AddMembers(ctx context.Context, id string, members []fleet.Member) error {
	members, err := fleet.NewMembers(members)
	if err != nil {
		return fmt.Errorf("sqlite: add members to rollout %q: %w", id, err)
	}
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var state fleet.State
		err := tx.QueryRowContext(ctx, `SELECT state FROM rollouts WHERE id = ?`, id).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: rollout %q: %w", id, fleet.ErrNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: add members to rollout %s: %w", id, err)
		}
		if err := fleet.CheckAddMembers(state); err != nil {
			return fmt.Errorf("sqlite: add members to rollout %s: %w", id, err)
		}
		if err := addMembers(ctx, tx, id, members); err != nil {
			return err
		}
		return s.sizeWaves(ctx, tx, id)
	})
}

// sizeWaves makes the sizes of a rollout's waves their numbers of members
// (fleet.SizeWaves), bumping its version when one changes.
func (s *Store) sizeWaves(ctx context.Context, tx *sql.Tx, id string) error {
	r, err := scanRollout(tx.QueryRowContext(ctx, selectRollout+` WHERE id = ?`, id))
	if err != nil {
		return fmt.Errorf("sqlite: size the waves of rollout %s: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT wave, count(*) FROM rollout_members WHERE rollout_id = ? GROUP BY wave`, id)
	if err != nil {
		return fmt.Errorf("sqlite: size the waves of rollout %s: %w", id, err)
	}
	defer rows.Close()
	counts := map[int]int{}
	for rows.Next() {
		var wave, n int
		if err := rows.Scan(&wave, &n); err != nil {
			return fmt.Errorf("sqlite: size the waves of rollout %s: %w", id, err)
		}
		counts[wave] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: size the waves of rollout %s: %w", id, err)
	}
	rows.Close()
	if !fleet.SizeWaves(r.Waves, counts) {
		return nil
	}
	_, err = tx.ExecContext(ctx, `UPDATE rollouts SET waves = ?, version = version + 1, updated_at = ? WHERE id = ?`,
		jsonText(r.Waves, "[]"), micros(tenant.Timestamp(s.now())), id)
	if err != nil {
		return fmt.Errorf("sqlite: size the waves of rollout %s: %w", id, err)
	}
	return nil
}

// UpdateRollout writes where a rollout stands, when it is at r.Version;
// see fleet.Store. Its completion is refused while tenants it would take
// are not its members (checkNewcomers), in the transaction that makes
// the target the plan's current version: no tenant's write can come
// between (follow.go).
func (s *Store) UpdateRollout(ctx context.Context, r *fleet.Rollout, events ...fleet.Event) (*fleet.Rollout, error) {
	if err := fleet.CheckUpdate(r); err != nil {
		return nil, fmt.Errorf("sqlite: update rollout %s: %w", r.ID, err)
	}
	var out *fleet.Rollout
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, err := scanRollout(tx.QueryRowContext(ctx, selectRollout+` WHERE id = ?`, r.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: rollout %q: %w", r.ID, fleet.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update rollout %s: %w", r.ID, err)
		}
		next, err := fleet.ApplyUpdate(cur, r, s.now())
		if err != nil {
			return fmt.Errorf("sqlite: update rollout %s: %w", r.ID, err)
		}
		now := next.UpdatedAt
		_, err = tx.ExecContext(ctx, writeRollout, string(next.State), next.Wave, nullTime(next.BakeFrom), next.Rollback, next.Message,
			next.Version, micros(now), nullTime(next.FinishedAt), next.ID)
		if isUniqueViolation(err) {
			return fmt.Errorf("sqlite: update rollout %s: %w: plan %q has another rollout that has not finished", r.ID, fleet.ErrConflict, cur.Spec.Plan)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update rollout %s: %w", r.ID, err)
		}
		if next.State == fleet.StateCompleted && cur.State != fleet.StateCompleted {
			if err := checkNewcomers(ctx, tx, cur); err != nil {
				return err
			}
			if !cur.Spec.Moves() {
				_, err := tx.ExecContext(ctx, `UPDATE plans SET current_version = ?, updated_at = ? WHERE name = ?`, cur.Spec.To, micros(now), cur.Spec.Plan)
				if err != nil {
					return fmt.Errorf("sqlite: complete rollout %s: %w", r.ID, err)
				}
			}
		}
		if err := insertRolloutEvents(ctx, tx, r.ID, now, events...); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateMember writes a member's state when it is in state expect; see
// fleet.Store.
func (s *Store) UpdateMember(ctx context.Context, id string, m fleet.Member, expect fleet.MemberState, events ...fleet.Event) error {
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		cur, err := scanMember(tx.QueryRowContext(ctx, selectMember, id, m.TenantID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: tenant %s in rollout %q: %w", m.TenantID, id, fleet.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: update member %s of rollout %s: %w", m.TenantID, id, err)
		}
		next, err := fleet.ApplyMemberUpdate(cur, m, expect)
		if err != nil {
			return fmt.Errorf("sqlite: update member %s of rollout %s: %w", m.TenantID, id, err)
		}
		if err := writeMemberRow(ctx, tx, id, next); err != nil {
			return err
		}
		return insertRolloutEvents(ctx, tx, id, tenant.Timestamp(s.now()), events...)
	})
}

func writeMemberRow(ctx context.Context, tx *sql.Tx, id string, m fleet.Member) error {
	_, err := tx.ExecContext(ctx, writeMember, string(m.State), m.Generation, nullTime(m.ChangedAt), nullTime(m.FinishedAt), m.Message, id, m.TenantID)
	if err != nil {
		return fmt.Errorf("sqlite: update member %s of rollout %s: %w", m.TenantID, id, err)
	}
	return nil
}

// MoveTenant moves a member's tenant to another version of the plan, in
// the transaction that writes the member and the rollout's event; see
// fleet.Store. It is update's rule, so that the tenant's change is sealed,
// recorded and announced as UpdateDesired's is.
func (s *Store) MoveTenant(ctx context.Context, id string, mv fleet.Move) (fleet.Member, error) {
	var out fleet.Member
	_, err := s.update(ctx, mv.TenantID, true, func(ctx context.Context, tx *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error) {
		r, err := scanRollout(tx.QueryRowContext(ctx, selectRollout+` WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil, fmt.Errorf("sqlite: rollout %q: %w", id, fleet.ErrNotFound)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("sqlite: move tenant %s: %w", mv.TenantID, err)
		}
		m, err := scanMember(tx.QueryRowContext(ctx, selectMember, id, mv.TenantID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil, fmt.Errorf("sqlite: tenant %s in rollout %q: %w", mv.TenantID, id, fleet.ErrNotFound)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("sqlite: move tenant %s: %w", mv.TenantID, err)
		}
		now := s.now()
		next, events, member, ev, err := fleet.ApplyMove(r, cur, m, mv, now)
		if err != nil {
			return nil, nil, fmt.Errorf("sqlite: move tenant %s: %w", mv.TenantID, err)
		}
		if err := writeMemberRow(ctx, tx, id, member); err != nil {
			return nil, nil, err
		}
		if err := insertRolloutEvents(ctx, tx, id, tenant.Timestamp(now), ev); err != nil {
			return nil, nil, err
		}
		out = member
		if next == nil {
			return cur, nil, nil // the tenant stays as it is
		}
		return next, events, nil
	})
	if errors.Is(err, tenant.ErrNotFound) && !errors.Is(err, fleet.ErrNotFound) {
		err = fmt.Errorf("%w: %w", fleet.ErrNotFound, err) // the member's tenant: no such tenant
	}
	if err != nil {
		return fleet.Member{}, err
	}
	return out, nil
}

// ListRolloutEvents returns a rollout's events, oldest first; see
// fleet.Store.
func (s *Store) ListRolloutEvents(ctx context.Context, id string, after int64, limit int) ([]fleet.Event, error) {
	if _, err := s.GetRollout(ctx, id); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = -1 // no limit
	}
	rows, err := s.query(ctx, `SELECT `+eventColumns+` FROM rollout_events WHERE rollout_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events of rollout %s: %w", id, err)
	}
	defer rows.Close()
	var out []fleet.Event
	for rows.Next() {
		e := fleet.Event{RolloutID: id}
		var at int64
		if err := rows.Scan(&e.Seq, &at, &e.Type, &e.TenantID, &e.TenantName, &e.Wave, &e.Message, &e.Actor); err != nil {
			return nil, fmt.Errorf("sqlite: events of rollout %s: %w", id, err)
		}
		e.Time = fromMicros(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events of rollout %s: %w", id, err)
	}
	return out, nil
}
