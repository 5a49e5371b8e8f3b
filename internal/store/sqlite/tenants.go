package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Create stores a new tenant; see tenant.Store.
func (s *Store) Create(ctx context.Context, in *tenant.Tenant, actor string) (*tenant.Tenant, error) {
	return s.create(ctx, in, actor, nil)
}

// create is Create that first runs also, when set, in the same transaction,
// with the tenant as it is stored: an error of also stores nothing. A
// tenant on a plan is checked in the transaction too (checkFollowed),
// after also.
func (s *Store) create(ctx context.Context, in *tenant.Tenant, actor string, also func(ctx context.Context, tx *sql.Tx, t *tenant.Tenant) error) (*tenant.Tenant, error) {
	t, ev, err := tenant.NewTenant(in, actor, s.now())
	if err != nil {
		return nil, err
	}
	row, err := tenant.ToStore(s.sealer, t, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create tenant %s: %w", t.Name, err)
	}
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if also != nil {
			if err := also(ctx, tx, t); err != nil {
				return err
			}
		}
		if err := s.checkFollowed(ctx, tx, nil, t); err != nil {
			return err
		}
		insert, err := s.txStmt(ctx, tx, insertTenant)
		if err != nil {
			return err
		}
		vals, err := tenantValues(row)
		if err != nil {
			return err
		}
		if _, err := insert.ExecContext(ctx, vals...); err != nil {
			if isPrimaryKeyViolation(err) {
				return fmt.Errorf("%w: tenant id %s is already used", tenant.ErrConflict, t.ID)
			}
			if isUniqueViolation(err) {
				return fmt.Errorf("%w: %q is used by a tenant that is not deleted", tenant.ErrNameTaken, t.Name)
			}
			return fmt.Errorf("sqlite: create tenant %s: %w", t.Name, err)
		}
		return s.insertEvents(ctx, tx, ev)
	})
	if err != nil {
		return nil, err
	}
	s.announceDesired(t.ID)
	return t, nil
}

const selectTenantByID = `SELECT ` + tenantColumns + ` FROM tenants WHERE id = ?`

var insertTenant = `INSERT INTO tenants (` + tenantColumns + `) VALUES (?` + strings.Repeat(", ?", strings.Count(tenantColumns, ",")) + `)`

// Get returns a tenant by id or name; see tenant.Store.
func (s *Store) Get(ctx context.Context, idOrName string, opts tenant.GetOptions) (*tenant.Tenant, error) {
	var q string
	switch {
	case tenant.IsID(idOrName) && opts.IncludeDeleted:
		q = `SELECT ` + tenantColumns + ` FROM tenants WHERE id = ?`
	case tenant.IsID(idOrName):
		q = `SELECT ` + tenantColumns + ` FROM tenants WHERE id = ? AND deleted_at IS NULL`
	case opts.IncludeDeleted:
		// The live tenant, else the most recently deleted one.
		q = `SELECT ` + tenantColumns + ` FROM tenants WHERE name = ?
			ORDER BY deleted_at IS NOT NULL, deleted_at DESC, id DESC LIMIT 1`
	default:
		q = `SELECT ` + tenantColumns + ` FROM tenants WHERE name = ? AND deleted_at IS NULL`
	}
	row, err := s.queryRow(ctx, q, idOrName)
	if err != nil {
		return nil, err
	}
	t, _, err := s.scanOpen(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %q", tenant.ErrNotFound, idOrName)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get tenant %q: %w", idOrName, err)
	}
	return t, nil
}

// UpdateDesired replaces a tenant's desired state; see tenant.Store. A
// change of the plan the tenant follows is checked in its transaction
// (checkFollowed).
func (s *Store) UpdateDesired(ctx context.Context, id string, change tenant.DesiredChange) (*tenant.Tenant, error) {
	return s.update(ctx, id, true, func(ctx context.Context, tx *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error) {
		next, events, err := tenant.ApplyDesired(cur, change, s.now())
		if err != nil {
			return nil, nil, err
		}
		if err := s.checkFollowed(ctx, tx, cur, next); err != nil {
			return nil, nil, err
		}
		return next, events, nil
	})
}

// RequestDeletion marks a tenant for deletion; see tenant.Store.
func (s *Store) RequestDeletion(ctx context.Context, id string, version int64, actor string) (*tenant.Tenant, error) {
	return s.update(ctx, id, true, func(_ context.Context, _ *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyDeletion(cur, version, actor, s.now())
	})
}

// UpdateObserved records the controller's observation; see tenant.Store.
func (s *Store) UpdateObserved(ctx context.Context, id string, obs tenant.Observation) (*tenant.Tenant, error) {
	return s.update(ctx, id, false, func(ctx context.Context, tx *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error) {
		if obs.Epoch != 0 {
			epoch, err := s.fenceEpoch(ctx, tx, id)
			if err != nil {
				return nil, nil, err
			}
			if err := tenant.CheckFence(obs.Epoch, epoch); err != nil {
				return nil, nil, err
			}
		}
		return tenant.ApplyObservation(cur, obs, s.now())
	})
}

// update reads a tenant in a write transaction, applies a domain rule and
// writes the result and its events. A rule that returns the current tenant
// and no events writes nothing. Once the write has committed, it is
// announced: to watchers and change feeds when desired is set (a change of
// desired state), else to change feeds when it recorded events (a write
// that records none announces nothing).
func (s *Store) update(ctx context.Context, id string, desired bool, apply func(ctx context.Context, tx *sql.Tx, cur *tenant.Tenant) (*tenant.Tenant, []tenant.Event, error)) (*tenant.Tenant, error) {
	if !tenant.IsID(id) {
		return nil, fmt.Errorf("%w: %q is not a tenant id", tenant.ErrNotFound, id)
	}
	var (
		out             *tenant.Tenant
		wrote, recorded bool
	)
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		read, err := s.txStmt(ctx, tx, selectTenantByID)
		if err != nil {
			return err
		}
		cur, stored, err := s.scanOpen(read.QueryRowContext(ctx, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", tenant.ErrNotFound, id)
		}
		if err != nil {
			return fmt.Errorf("sqlite: read tenant %s: %w", id, err)
		}
		next, evs, err := apply(ctx, tx, cur)
		if err != nil {
			return err
		}
		out = next
		if next == cur && len(evs) == 0 {
			return nil
		}
		wrote, recorded = true, len(evs) > 0
		var (
			q    string
			vals []any
		)
		if onlyObserved(cur, next) {
			placements, err := s.observedPlacements(cur, next, stored)
			if err != nil {
				return fmt.Errorf("sqlite: write tenant %s: %w", id, err)
			}
			q, vals = updateObserved, observedValues(next, placements)
		} else {
			row, err := tenant.ToStore(s.sealer, next, cur.ComputeConfig, stored)
			if err != nil {
				return fmt.Errorf("sqlite: write tenant %s: %w", id, err)
			}
			all, err := tenantValues(row)
			if err != nil {
				return err
			}
			q, vals = updateTenant, append(all[1:], next.ID)
		}
		write, err := s.txStmt(ctx, tx, q)
		if err != nil {
			return err
		}
		if _, err := write.ExecContext(ctx, vals...); err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("%w: %q", tenant.ErrNameTaken, next.Name)
			}
			return fmt.Errorf("sqlite: write tenant %s: %w", id, err)
		}
		return s.insertEvents(ctx, tx, evs...)
	})
	if err != nil {
		return nil, err
	}
	switch {
	case desired && wrote:
		s.announceDesired(id)
	case recorded:
		s.changes.announce(id)
	}
	return out, nil
}

// updateObserved writes the columns an observation changes, for tenants
// that stay live. SQLite then maintains only the indexes on those columns
// and checks only their constraints: an observation costs about half of a
// full update. The placements column holds the observed state of a tenant
// of several placements (a Simple tenant's stays '[]').
const updateObserved = `UPDATE tenants SET status = ?, status_message = ?, observed_generation = ?,
	resource_ids = ?, endpoints = ?, status_changed_at = ?, attempts = ?, retry_at = ?, updated_at = ?, drift = ?,
	placements = ?
	WHERE id = ?`

// observedValues returns updateObserved's arguments for t, whose placements
// column is placements.
func observedValues(t *tenant.Tenant, placements string) []any {
	return []any{string(t.Status), t.StatusMessage, t.ObservedGeneration,
		jsonText(t.ResourceIDs, "{}"), jsonText(t.Endpoints, "[]"),
		micros(t.StatusChangedAt), t.Attempts, nullMicros(t.RetryAt), micros(t.UpdatedAt), driftText(t.Drift),
		placements, t.ID}
}

// observedPlacements is the placements column of next, an observation of
// cur, which was read with its compute_config as stored: "[]" for a
// Simple tenant, at no cost; else the placements with their configs as
// stored (tenant.ToStore keeps the stored text of each config the
// observation did not change, which is every one).
func (s *Store) observedPlacements(cur, next *tenant.Tenant, stored json.RawMessage) (string, error) {
	if next.Simple() {
		return "[]", nil
	}
	row, err := tenant.ToStore(s.sealer, next, cur.ComputeConfig, stored)
	if err != nil {
		return "", err
	}
	return tenant.PlacementsText(row)
}

// onlyObserved reports whether next differs from cur in updateObserved's
// columns only: for a tenant of several placements, in its placements'
// observed state and not their desired state, which the placements column
// holds too.
func onlyObserved(cur, next *tenant.Tenant) bool {
	return cur.Name == next.Name && cur.Provider == next.Provider && bytes.Equal(cur.ComputeConfig, next.ComputeConfig) &&
		tenant.SameDesiredPlacements(cur.Placements, next.Placements) &&
		maps.Equal(cur.Labels, next.Labels) && maps.Equal(cur.Annotations, next.Annotations) &&
		samePlan(cur.Plan, next.Plan) && sameWindow(cur.MaintenanceWindow, next.MaintenanceWindow) &&
		cur.Generation == next.Generation && cur.Version == next.Version &&
		cur.CreatedAt.Equal(next.CreatedAt) && sameTime(cur.DeletionRequestedAt, next.DeletionRequestedAt) && sameTime(cur.DeletedAt, next.DeletedAt)
}

func samePlan(a, b *tenant.PlanRef) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

func sameWindow(a, b *tenant.Window) bool {
	return a == b || (a != nil && b != nil && slices.Equal(a.Days, b.Days) && a.Start == b.Start && a.End == b.End && a.TimeZone == b.TimeZone)
}

func sameTime(a, b *time.Time) bool {
	return a == b || (a != nil && b != nil && a.Equal(*b))
}

var updateTenant = func() string {
	cols := strings.Split(tenantColumns, ",")[1:] // every column but id
	for i, c := range cols {
		cols[i] = strings.TrimSpace(c) + " = ?"
	}
	return `UPDATE tenants SET ` + strings.Join(cols, ", ") + ` WHERE id = ?`
}()
