package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Plans and their versions (fleet.Store); rollouts are in rollouts.go.

const (
	planColumns = `name, provider, description, latest_version, current_version, created_at, updated_at, created_by`
	selectPlan  = `SELECT ` + planColumns + ` FROM plans WHERE name = ?`
	insertPlan  = `INSERT INTO plans (` + planColumns + `) VALUES (?, ?, ?, 0, 0, ?, ?, ?)`

	versionColumns = `plan, version, config, message, created_at, created_by`
	// nextVersion numbers a plan's next version: the row's write lock (the
	// writer's, on SQLite) makes concurrent publishers take turns. The first
	// version becomes the plan's current one.
	nextVersion = `UPDATE plans SET latest_version = latest_version + 1,
	current_version = CASE WHEN current_version = 0 THEN latest_version + 1 ELSE current_version END, updated_at = ?
	WHERE name = ? RETURNING latest_version`
	insertVersion = `INSERT INTO plan_versions (` + versionColumns + `) VALUES (?, ?, ?, ?, ?, ?)`
)

func scanPlan(row scanner) (*fleet.Plan, error) {
	var (
		p                fleet.Plan
		created, updated int64
	)
	if err := row.Scan(&p.Name, &p.Provider, &p.Description, &p.Latest, &p.Current, &created, &updated, &p.CreatedBy); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &p, nil
}

func scanVersion(row scanner) (*fleet.Version, error) {
	var (
		v       fleet.Version
		config  string
		created int64
	)
	if err := row.Scan(&v.Plan, &v.Version, &config, &v.Message, &created, &v.CreatedBy); err != nil {
		return nil, err
	}
	v.Config, v.CreatedAt = json.RawMessage(config), fromMicros(created)
	return &v, nil
}

// CreatePlan stores a new plan; see fleet.Store.
func (s *Store) CreatePlan(ctx context.Context, in *fleet.Plan, actor string) (*fleet.Plan, error) {
	return s.createPlan(ctx, in, actor, nil)
}

// CreatePlanIdempotent stores a new plan and keeps the response to it;
// see fleet.IdempotencyStore.
func (s *Store) CreatePlanIdempotent(ctx context.Context, in *fleet.Plan, actor string, res tenant.IdempotentResponse,
	respond func(*fleet.Plan) (tenant.IdempotentResponse, error)) (*fleet.Plan, error) {
	return s.createPlan(ctx, in, actor, &keeping[*fleet.Plan]{res, respond})
}

func (s *Store) createPlan(ctx context.Context, in *fleet.Plan, actor string, k *keeping[*fleet.Plan]) (*fleet.Plan, error) {
	now := tenant.Timestamp(s.now())
	p := &fleet.Plan{Name: in.Name, Provider: in.Provider, Description: in.Description, CreatedAt: now, UpdatedAt: now, CreatedBy: actor}
	if err := fleet.ValidatePlan(p); err != nil {
		return nil, err
	}
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := k.hold(ctx, s, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertPlan, p.Name, p.Provider, p.Description, micros(now), micros(now), actor)
		if isPrimaryKeyViolation(err) {
			return fmt.Errorf("sqlite: create plan %q: %w", p.Name, fleet.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("sqlite: create plan %q: %w", p.Name, err)
		}
		return k.keep(ctx, s, tx, p)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// GetPlan returns a plan; see fleet.Store.
func (s *Store) GetPlan(ctx context.Context, name string) (*fleet.Plan, error) {
	row, err := s.queryRow(ctx, selectPlan, name)
	if err != nil {
		return nil, err
	}
	p, err := scanPlan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: plan %q: %w", name, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get plan %q: %w", name, err)
	}
	return p, nil
}

// ListPlans returns every plan in name order; see fleet.Store.
func (s *Store) ListPlans(ctx context.Context) ([]*fleet.Plan, error) {
	rows, err := s.query(ctx, `SELECT `+planColumns+` FROM plans ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list plans: %w", err)
	}
	defer rows.Close()
	var plans []*fleet.Plan
	for rows.Next() {
		p, err := scanPlan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list plans: %w", err)
		}
		plans = append(plans, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list plans: %w", err)
	}
	return plans, nil
}

// DeletePlan deletes a plan, its versions and its finished rollouts; see
// fleet.Store.
func (s *Store) DeletePlan(ctx context.Context, name string) error {
	return s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var followed, active, exists bool
		err := tx.QueryRowContext(ctx, `SELECT
			EXISTS (SELECT 1 FROM plans WHERE name = ?1),
			EXISTS (SELECT 1 FROM tenants WHERE plan_name = ?1 AND deleted_at IS NULL)
				OR EXISTS (SELECT 1 FROM tenants AS t INDEXED BY tenants_placed, json_each(t.placements) AS p
					WHERE t.deleted_at IS NULL AND t.placements <> '[]' AND json_extract(p.value, '$.move.plan.name') = ?1),
			EXISTS (SELECT 1 FROM rollouts WHERE (plan = ?1 OR json_extract(spec, '$.to_plan') = ?1) AND state IN `+activeStates+`)`, name).Scan(&exists, &followed, &active)
		switch {
		case err != nil:
			return fmt.Errorf("sqlite: delete plan %q: %w", name, err)
		case !exists:
			return fmt.Errorf("sqlite: plan %q: %w", name, fleet.ErrNotFound)
		case followed:
			return fmt.Errorf("sqlite: delete plan %q: %w: tenants follow it, or are being moved onto or off it", name, fleet.ErrInUse)
		case active:
			return fmt.Errorf("sqlite: delete plan %q: %w: a rollout of it, or onto it, has not finished", name, fleet.ErrInUse)
		}
		// Versions and rollouts (with their members and events) cascade.
		if _, err := tx.ExecContext(ctx, `DELETE FROM plans WHERE name = ?`, name); err != nil {
			return fmt.Errorf("sqlite: delete plan %q: %w", name, err)
		}
		return nil
	})
}

// PublishVersion stores a plan's next version; see fleet.Store.
func (s *Store) PublishVersion(ctx context.Context, plan string, config json.RawMessage, message, actor string) (*fleet.Version, error) {
	return s.publishVersion(ctx, plan, config, message, actor, nil)
}

// PublishVersionIdempotent stores a plan's next version and keeps the
// response to it; see fleet.IdempotencyStore.
func (s *Store) PublishVersionIdempotent(ctx context.Context, plan string, config json.RawMessage, message, actor string,
	res tenant.IdempotentResponse, respond func(*fleet.Version) (tenant.IdempotentResponse, error)) (*fleet.Version, error) {
	return s.publishVersion(ctx, plan, config, message, actor, &keeping[*fleet.Version]{res, respond})
}

func (s *Store) publishVersion(ctx context.Context, plan string, config json.RawMessage, message, actor string, k *keeping[*fleet.Version]) (*fleet.Version, error) {
	compact, err := fleet.VersionConfig(config, message)
	if err != nil {
		return nil, fmt.Errorf("sqlite: publish version of plan %q: %w", plan, err)
	}
	now := tenant.Timestamp(s.now())
	v := &fleet.Version{Plan: plan, Config: compact, Message: message, CreatedAt: now, CreatedBy: actor}
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := k.hold(ctx, s, tx); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, nextVersion, micros(now), plan).Scan(&v.Version)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: plan %q: %w", plan, fleet.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sqlite: publish version of plan %q: %w", plan, err)
		}
		if _, err := tx.ExecContext(ctx, insertVersion, plan, v.Version, string(compact), message, micros(now), actor); err != nil {
			return fmt.Errorf("sqlite: publish version %d of plan %q: %w", v.Version, plan, err)
		}
		return k.keep(ctx, s, tx, v)
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// GetVersion returns one version of a plan; see fleet.Store.
func (s *Store) GetVersion(ctx context.Context, plan string, version int64) (*fleet.Version, error) {
	row, err := s.queryRow(ctx, `SELECT `+versionColumns+` FROM plan_versions WHERE plan = ? AND version = ?`, plan, version)
	if err != nil {
		return nil, err
	}
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: plan %q version %d: %w", plan, version, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get plan %q version %d: %w", plan, version, err)
	}
	return v, nil
}

// ListVersions returns a plan's versions, oldest first; see fleet.Store.
func (s *Store) ListVersions(ctx context.Context, plan string) ([]*fleet.Version, error) {
	rows, err := s.query(ctx, `SELECT `+versionColumns+` FROM plan_versions WHERE plan = ? ORDER BY version`, plan)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list versions of plan %q: %w", plan, err)
	}
	defer rows.Close()
	var versions []*fleet.Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list versions of plan %q: %w", plan, err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list versions of plan %q: %w", plan, err)
	}
	if len(versions) == 0 {
		if _, err := s.GetPlan(ctx, plan); err != nil {
			return nil, err
		}
	}
	return versions, nil
}

var (
	_ fleet.Store            = (*Store)(nil)
	_ fleet.IdempotencyStore = (*Store)(nil)
)
