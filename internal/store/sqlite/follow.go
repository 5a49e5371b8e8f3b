package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's write that puts it on a plan (its create, or a change of its
// plan) checks, in its transaction, that the plan exists, is for the
// tenant's provider and has the version (fleet.CheckFollow). SQLite needs no
// lock for it: every write transaction of the store runs on its one
// writer connection and begins IMMEDIATE (dsn), taking the database's
// write lock at BEGIN, so DeletePlan, a rollout's completion and a tenant's
// write never interleave, in this process or another.

// selectFollowed reads the provider of plan ?1, and whether it has version
// ?2; no row when there is no such plan.
const selectFollowed = `SELECT provider, EXISTS (SELECT 1 FROM plan_versions WHERE plan = ?1 AND version = ?2) FROM plans WHERE name = ?1`

// checkFollowed checks, in the write transaction tx, that next may follow
// the plans the write puts it, or the target of a move of its, on
// (tenant.NewFollows): cur is nil for a create. A write that leaves the
// plans as they were checks nothing.
func (s *Store) checkFollowed(ctx context.Context, tx *sql.Tx, cur, next *tenant.Tenant) error {
	follows := tenant.NewFollows(cur, next)
	if len(follows) == 0 {
		return nil
	}
	read, err := s.txStmt(ctx, tx, selectFollowed)
	if err != nil {
		return err
	}
	for _, f := range follows {
		var found fleet.FoundPlan
		err = read.QueryRowContext(ctx, f.Plan.Name, f.Plan.Version).Scan(&found.Provider, &found.HasVersion)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("sqlite: read plan %q: %w", f.Plan.Name, err)
		default:
			found.Exists = true
		}
		if err := fleet.CheckFollow(&f.Plan, f.Provider, found); err != nil {
			return fmt.Errorf("sqlite: tenant %q: %w", next.Name, err)
		}
	}
	return nil
}

// selectNewcomers names (up to fleet.MaxNewcomersNamed, with their count)
// the tenants a completing rollout (?4, of plan ?1 to version ?2 or, a
// fleet move, 0, from version ?3 or any when 0; fleet.Spec.Done) would take and that are not its members: the
// candidates of fleet.Select that the driver would add as newcomers.
var selectNewcomers = `SELECT name, count(*) OVER () FROM tenants t
	WHERE plan_name = ?1 AND deleted_at IS NULL AND deletion_requested_at IS NULL AND status <> 'deleted' AND NOT plan_pinned
		AND plan_version <> ?2 AND (?3 = 0 OR plan_version = ?3)
		AND NOT EXISTS (SELECT 1 FROM rollout_members m WHERE m.rollout_id = ?4 AND m.tenant_id = t.id)
	ORDER BY id LIMIT ` + strconv.Itoa(fleet.MaxNewcomersNamed)

// checkNewcomers refuses, in the write transaction tx, the completion of
// rollout r while tenants it would take are not its members
// (fleet.NewcomersError).
func checkNewcomers(ctx context.Context, tx *sql.Tx, r *fleet.Rollout) error {
	rows, err := tx.QueryContext(ctx, selectNewcomers, r.Spec.Plan, r.Spec.Done(), r.Spec.From, r.ID)
	if err != nil {
		return fmt.Errorf("sqlite: complete rollout %s: %w", r.ID, err)
	}
	defer rows.Close()
	var (
		names []string
		count int
	)
	for rows.Next() {
		var name string
		if err := rows.Scan(&name, &count); err != nil {
			return fmt.Errorf("sqlite: complete rollout %s: %w", r.ID, err)
		}
		names = append(names, name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: complete rollout %s: %w", r.ID, err)
	}
	if len(names) > 0 {
		return fmt.Errorf("sqlite: update rollout %s: %w", r.ID, fleet.NewcomersError(r, names, count))
	}
	return nil
}
