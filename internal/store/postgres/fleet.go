package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Plans and their versions (fleet.Store); rollouts are in rollouts.go.

const (
	planColumns = `name, provider, description, latest_version, current_version, created_at, updated_at, created_by`
	selectPlan  = `SELECT ` + planColumns + ` FROM plans WHERE name = $1`
	insertPlan  = `INSERT INTO plans (` + planColumns + `) VALUES ($1, $2, $3, 0, 0, $4, $4, $5)`

	versionColumns = `plan, version, config, message, created_at, created_by`
	// nextVersion numbers a plan's next version. Its row lock makes
	// concurrent publishers wait for each other, and each, at READ
	// COMMITTED, then updates the row its predecessor left: every one gets
	// a number of its own, none fails. The first version becomes the plan's
	// current one.
	nextVersion = `UPDATE plans SET latest_version = latest_version + 1,
	current_version = CASE WHEN current_version = 0 THEN latest_version + 1 ELSE current_version END, updated_at = $2
WHERE name = $1 RETURNING latest_version`
	insertVersion = `INSERT INTO plan_versions (` + versionColumns + `) VALUES ($1, $2, $3, $4, $5, $6)`
)

func scanPlan(row pgx.Row) (*fleet.Plan, error) {
	var p fleet.Plan
	if err := row.Scan(&p.Name, &p.Provider, &p.Description, &p.Latest, &p.Current, &p.CreatedAt, &p.UpdatedAt, &p.CreatedBy); err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return &p, nil
}

func scanVersion(row pgx.Row) (*fleet.Version, error) {
	var (
		v      fleet.Version
		config []byte
	)
	if err := row.Scan(&v.Plan, &v.Version, &config, &v.Message, &v.CreatedAt, &v.CreatedBy); err != nil {
		return nil, err
	}
	// JSONB prints spaces; return the compact text, as for tenants.
	var compact bytes.Buffer
	if err := json.Compact(&compact, config); err != nil {
		return nil, fmt.Errorf("plan %s version %d: config: %w", v.Plan, v.Version, err)
	}
	v.Config, v.CreatedAt = compact.Bytes(), v.CreatedAt.UTC()
	return &v, nil
}

// CreatePlan implements fleet.Store. A name in use is fleet.ErrExists; a
// plan breaking fleet.ValidatePlan wraps fleet.ErrInvalid.
func (s *Store) CreatePlan(ctx context.Context, in *fleet.Plan, actor string) (*fleet.Plan, error) {
	return s.createPlan(ctx, in, actor, nil)
}

// CreatePlanIdempotent implements fleet.IdempotencyStore: CreatePlan
// keeping the response to it, in one transaction.
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
	var err error
	if k == nil {
		err = s.retry(ctx, func() error {
			_, err := s.pool.Exec(ctx, insertPlan, p.Name, p.Provider, p.Description, now, actor)
			return err
		})
	} else {
		err = s.inTx(ctx, func(tx pgx.Tx) error {
			if err := k.hold(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, insertPlan, p.Name, p.Provider, p.Description, now, actor); err != nil {
				return err
			}
			return k.keep(ctx, tx, p, s.now())
		})
	}
	if code, constraint := pgCode(err); code == codeUniqueViolation && constraint == "plans_pkey" {
		return nil, fmt.Errorf("postgres: create plan %q: %w", p.Name, fleet.ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: create plan %q: %w", p.Name, err)
	}
	return p, nil
}

// GetPlan implements fleet.Store.
func (s *Store) GetPlan(ctx context.Context, name string) (*fleet.Plan, error) {
	p, err := scanPlan(s.pool.QueryRow(ctx, selectPlan, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: plan %q: %w", name, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get plan %q: %w", name, unavailable(err))
	}
	return p, nil
}

// ListPlans implements fleet.Store.
func (s *Store) ListPlans(ctx context.Context) ([]*fleet.Plan, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+planColumns+` FROM plans ORDER BY name COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list plans: %w", unavailable(err))
	}
	plans, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*fleet.Plan, error) { return scanPlan(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list plans: %w", unavailable(err))
	}
	return plans, nil
}

// DeletePlan implements fleet.Store. It locks the plan's row (FOR UPDATE)
// in one statement and looks for followers and active rollouts in the
// next: at READ COMMITTED a statement that waited for a lock still reads
// with the snapshot it began with, so a check in the locking statement
// would miss a tenant that began to follow the plan while it waited. A
// tenant's write onto the plan holds the row FOR SHARE (follow.go), and a
// rollout's insert FOR KEY SHARE (its foreign key), until they commit:
// either they commit first, and the check sees them, or they wait for the
// deletion, and then find no plan. Both statements go in one round trip.
func (s *Store) DeletePlan(ctx context.Context, name string) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			locked           int
			followed, active bool
		)
		b := &pgx.Batch{}
		b.Queue(`SELECT 1 FROM plans WHERE name = $1 FOR UPDATE`, name).QueryRow(func(row pgx.Row) error {
			return row.Scan(&locked)
		})
		b.Queue(`SELECT EXISTS (SELECT 1 FROM tenants WHERE plan_name = $1 AND deleted_at IS NULL)
		OR EXISTS (SELECT 1 FROM tenants t, jsonb_array_elements(t.placements::jsonb) e
			WHERE t.deleted_at IS NULL AND t.placements <> '[]' AND e->'move'->'plan'->>'name' = $1),
	EXISTS (SELECT 1 FROM rollouts WHERE (plan = $1 OR spec->>'to_plan' = $1) AND state IN `+activeStates+`)`, name).QueryRow(func(row pgx.Row) error {
			return row.Scan(&followed, &active)
		})
		err := tx.SendBatch(ctx, b).Close()
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("postgres: plan %q: %w", name, fleet.ErrNotFound)
		case err != nil:
			return fmt.Errorf("postgres: delete plan %q: %w", name, err)
		case followed:
			return fmt.Errorf("postgres: delete plan %q: %w: tenants follow it, or are being moved onto or off it", name, fleet.ErrInUse)
		case active:
			return fmt.Errorf("postgres: delete plan %q: %w: a rollout of it, or onto it, has not finished", name, fleet.ErrInUse)
		}
		// Versions and rollouts (with their members and events) cascade.
		if _, err := tx.Exec(ctx, `DELETE FROM plans WHERE name = $1`, name); err != nil {
			return fmt.Errorf("postgres: delete plan %q: %w", name, err)
		}
		return nil
	})
	return err
}

// PublishVersion implements fleet.Store. config must be a JSON object and
// message at most fleet.MaxDescription bytes (else fleet.ErrInvalid).
func (s *Store) PublishVersion(ctx context.Context, plan string, config json.RawMessage, message, actor string) (*fleet.Version, error) {
	return s.publishVersion(ctx, plan, config, message, actor, nil)
}

// PublishVersionIdempotent implements fleet.IdempotencyStore:
// PublishVersion keeping the response to it, in one transaction.
func (s *Store) PublishVersionIdempotent(ctx context.Context, plan string, config json.RawMessage, message, actor string,
	res tenant.IdempotentResponse, respond func(*fleet.Version) (tenant.IdempotentResponse, error)) (*fleet.Version, error) {
	return s.publishVersion(ctx, plan, config, message, actor, &keeping[*fleet.Version]{res, respond})
}

func (s *Store) publishVersion(ctx context.Context, plan string, config json.RawMessage, message, actor string, k *keeping[*fleet.Version]) (*fleet.Version, error) {
	compact, err := fleet.VersionConfig(config, message)
	if err != nil {
		return nil, fmt.Errorf("postgres: publish version of plan %q: %w", plan, err)
	}
	now := tenant.Timestamp(s.now())
	v := &fleet.Version{Plan: plan, Config: compact, Message: message, CreatedAt: now, CreatedBy: actor}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := k.hold(ctx, tx); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, nextVersion, plan, now).Scan(&v.Version)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: plan %q: %w", plan, fleet.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: publish version of plan %q: %w", plan, err)
		}
		if _, err := tx.Exec(ctx, insertVersion, plan, v.Version, []byte(compact), message, now, actor); err != nil {
			return fmt.Errorf("postgres: publish version %d of plan %q: %w", v.Version, plan, err)
		}
		return k.keep(ctx, tx, v, s.now())
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// GetVersion implements fleet.Store.
func (s *Store) GetVersion(ctx context.Context, plan string, version int64) (*fleet.Version, error) {
	v, err := scanVersion(s.pool.QueryRow(ctx, `SELECT `+versionColumns+` FROM plan_versions WHERE plan = $1 AND version = $2`, plan, version))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: plan %q version %d: %w", plan, version, fleet.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get plan %q version %d: %w", plan, version, unavailable(err))
	}
	return v, nil
}

// ListVersions implements fleet.Store.
func (s *Store) ListVersions(ctx context.Context, plan string) ([]*fleet.Version, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+versionColumns+` FROM plan_versions WHERE plan = $1 ORDER BY version`, plan)
	if err != nil {
		return nil, fmt.Errorf("postgres: list versions of plan %q: %w", plan, unavailable(err))
	}
	versions, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*fleet.Version, error) { return scanVersion(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list versions of plan %q: %w", plan, unavailable(err))
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
