package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/store"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's write that puts it on a plan (its create, or a change of its
// plan) checks, in its transaction, that the plan exists, is for the
// tenant's provider and has the version (store.CheckPlan). SQLite needs no
// lock for it: every write transaction of the store runs on its one
// writer connection and begins IMMEDIATE (dsn), taking the database's
// write lock at BEGIN, so DeletePlan, a rollout's completion and a tenant's
// write never interleave, in this process or another.

// selectFollowed reads the provider of plan ?1, and whether it has version
// ?2; no row when there is no such plan.
const selectFollowed = `SELECT provider, EXISTS (SELECT 1 FROM plan_versions WHERE plan = ?1 AND version = ?2) FROM plans WHERE name = ?1`

// checkFollowed checks, in the write transaction tx, that next may follow
// its plan when the write puts it on one: when cur is nil (a create) or
// follows another plan, version or pin. A write that leaves the plan as it
// was checks nothing (the plan cannot have been deleted while the tenant
// followed it).
func (s *Store) checkFollowed(ctx context.Context, tx *sql.Tx, cur, next *tenant.Tenant) error {
	if next.Plan == nil || cur != nil && samePlan(cur.Plan, next.Plan) {
		return nil
	}
	read, err := s.txStmt(ctx, tx, selectFollowed)
	if err != nil {
		return err
	}
	var found store.FoundPlan
	err = read.QueryRowContext(ctx, next.Plan.Name, next.Plan.Version).Scan(&found.Provider, &found.HasVersion)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("sqlite: read plan %q: %w", next.Plan.Name, err)
	default:
		found.Exists = true
	}
	if err := store.CheckPlan(next.Plan, next.Provider, found); err != nil {
		return fmt.Errorf("sqlite: tenant %q: %w", next.Name, err)
	}
	return nil
}
