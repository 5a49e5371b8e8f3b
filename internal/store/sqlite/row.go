package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// tenantColumns is the column list every tenant query selects, in the order
// scanTenant reads.
const tenantColumns = `id, name, provider, compute_config, labels, annotations,
	plan_name, plan_version, plan_pinned, maintenance_window, status, status_message,
	generation, observed_generation, version, resource_ids, endpoints,
	status_changed_at, attempts, retry_at,
	deletion_requested_at, created_at, updated_at, deleted_at, drift, placements`

type scanner interface{ Scan(dest ...any) error }

// scanTenant reads a row of tenantColumns: a tenant with its placements
// (tenant.ReadPlacements), their configs as stored (see scanOpen).
func scanTenant(row scanner) (*tenant.Tenant, error) {
	var (
		t                                       tenant.Tenant
		config, labels, annotations, ids, endps string
		placements                              string
		retryAt, deletionRequested, deleted     sql.NullInt64
		statusChanged, created, updated         int64
		planName, window, drift                 sql.NullString
		planVersion                             sql.NullInt64
		planPinned                              bool
	)
	err := row.Scan(&t.ID, &t.Name, &t.Provider, &config, &labels, &annotations,
		&planName, &planVersion, &planPinned, &window, &t.Status, &t.StatusMessage,
		&t.Generation, &t.ObservedGeneration, &t.Version, &ids, &endps,
		&statusChanged, &t.Attempts, &retryAt,
		&deletionRequested, &created, &updated, &deleted, &drift, &placements)
	if err != nil {
		return nil, err
	}
	t.ComputeConfig = json.RawMessage(config)
	for _, f := range []struct {
		raw string
		dst any
	}{{labels, &t.Labels}, {annotations, &t.Annotations}, {ids, &t.ResourceIDs}, {endps, &t.Endpoints}} {
		if f.raw == "{}" || f.raw == "[]" {
			continue // the common case; empty stays nil
		}
		if err := json.Unmarshal([]byte(f.raw), f.dst); err != nil {
			return nil, fmt.Errorf("sqlite: tenant %s: decode column: %w", t.ID, err)
		}
	}
	t.Labels, t.Annotations, t.ResourceIDs = nilIfEmpty(t.Labels), nilIfEmpty(t.Annotations), nilIfEmpty(t.ResourceIDs)
	if len(t.Endpoints) == 0 {
		t.Endpoints = nil
	}
	if planName.Valid {
		t.Plan = &tenant.PlanRef{Name: planName.String, Version: planVersion.Int64, Pinned: planPinned}
	}
	if window.Valid {
		t.MaintenanceWindow = &tenant.Window{}
		if err := json.Unmarshal([]byte(window.String), t.MaintenanceWindow); err != nil {
			return nil, fmt.Errorf("sqlite: tenant %s: decode maintenance_window: %w", t.ID, err)
		}
	}
	if drift.Valid {
		t.Drift = &tenant.DriftReport{}
		if err := json.Unmarshal([]byte(drift.String), t.Drift); err != nil {
			return nil, fmt.Errorf("sqlite: tenant %s: decode drift: %w", t.ID, err)
		}
	}
	t.StatusChangedAt, t.RetryAt = fromMicros(statusChanged), fromNullMicros(retryAt)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	t.DeletionRequestedAt, t.DeletedAt = fromNullMicros(deletionRequested), fromNullMicros(deleted)
	if err := tenant.ReadPlacements(&t, placements); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return &t, nil
}

// tenantValues returns t's column values in tenantColumns order; t is a
// tenant as tenant.ToStore returns it.
func tenantValues(t *tenant.Tenant) ([]any, error) {
	placements, err := tenant.PlacementsText(t)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	var planName, planVersion, window any // NULL when none
	pinned := false
	if t.Plan != nil {
		planName, planVersion, pinned = t.Plan.Name, t.Plan.Version, t.Plan.Pinned
	}
	if t.MaintenanceWindow != nil {
		window = jsonText(t.MaintenanceWindow, "{}")
	}
	return []any{t.ID, t.Name, t.Provider, string(t.ComputeConfig), jsonText(t.Labels, "{}"), jsonText(t.Annotations, "{}"),
		planName, planVersion, pinned, window, string(t.Status), t.StatusMessage, t.Generation, t.ObservedGeneration, t.Version,
		jsonText(t.ResourceIDs, "{}"), jsonText(t.Endpoints, "[]"),
		micros(t.StatusChangedAt), t.Attempts, nullMicros(t.RetryAt),
		nullMicros(t.DeletionRequestedAt), micros(t.CreatedAt), micros(t.UpdatedAt), nullMicros(t.DeletedAt), driftText(t.Drift),
		placements}, nil
}

// driftText is the drift column's value: NULL when none.
func driftText(d *tenant.DriftReport) any {
	if d == nil {
		return nil
	}
	return jsonText(d, "null")
}

func jsonText[T any](v T, empty string) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return empty
	}
	return string(b)
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}
