package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// tenantColumns are the columns of a tenant's row, in the order of
// selectTenant, insertTenant, tenantArgs and scanTenant.
var tenantColumns = []string{
	"id", "name", "provider", "compute_config", "labels", "annotations",
	"plan_name", "plan_version", "plan_pinned", "maintenance_window",
	"status", "status_message", "status_changed_at", "generation", "observed_generation", "version",
	"resource_ids", "endpoints", "attempts", "retry_at",
	"deletion_requested_at", "created_at", "updated_at", "deleted_at", "drift", "placements",
}

// selectTenant reads every column scanTenant expects, in its order.
var selectTenant = "SELECT " + strings.Join(tenantColumns, ", ") + " FROM tenants"

var insertTenant = "INSERT INTO tenants (" + strings.Join(tenantColumns, ", ") + ") VALUES (" + placeholders(1, len(tenantColumns)) + ")"

// updateTenant writes every column a tenant's life can change; id, name
// and created_at are fixed on create. provider is the first placement's,
// which changes when that placement is removed. An observation writes the
// desired columns as they are, which keeps its update HOT although
// tenants_plan_idx reads plan_name and tenants_provider_idx provider:
// PostgreSQL compares the values. So does tenants_placed_idx's predicate
// read placements, which a Simple tenant's observation leaves '[]'.
const updateTenant = `UPDATE tenants SET compute_config = $2, labels = $3, annotations = $4,
	plan_name = $5, plan_version = $6, plan_pinned = $7, maintenance_window = $8,
	status = $9, status_message = $10, status_changed_at = $11, generation = $12, observed_generation = $13, version = $14,
	resource_ids = $15, endpoints = $16, attempts = $17, retry_at = $18,
	deletion_requested_at = $19, updated_at = $20, deleted_at = $21, drift = $22,
	placements = $23, provider = $24
WHERE id = $1`

// eventColumns are the columns of an event's row that eventArgs fill, in
// its order; eventArgCount is their number.
const (
	eventColumns  = `tenant_id, time, type, from_status, to_status, generation, message, actor, placement`
	eventArgCount = 9
)

const insertEvent = `INSERT INTO events (` + eventColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`

// insertChangedEvent is insertEvent for an event that names the fields it
// changed ($10, tenant.Event.Changed as JSON): an "updated" event.
const insertChangedEvent = `INSERT INTO events (` + eventColumns + `, changed) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// notifyTenant announces a change of a tenant's desired state to watchers
// (see Watch). Sent in the transaction that makes the change, it is
// delivered when, and only if, that transaction commits.
const notifyTenant = `SELECT pg_notify('` + watchChannel + `', $1)`

// notifyChanged announces to change feeds (see Changes) the tenants a
// transaction wrote that recorded events without a change of desired state:
// one notification per transaction, its payload changedPayload's.
const notifyChanged = `SELECT pg_notify('` + changesChannel + `', $1)`

// maxPayload is the longest payload pg_notify accepts: "shorter than 8000
// bytes" in PostgreSQL's default configuration.
const maxPayload = 7999

// idLen is the length of a tenant id (tenant.IsID).
const idLen = 36

// The ids of a whole group of observations (group.go), joined by commas,
// fit in one notification: this does not compile otherwise.
const _ = uint(maxPayload - (maxGroup*(idLen+1) - 1))

// changedPayload is notifyChanged's payload for the tenants ids: the ids
// joined by commas. Ids that would not fit in one notification (none do
// that tenant.IsID accepts, in groups of up to maxGroup) give an empty
// payload, which tells listeners that announcements were lost.
func changedPayload(ids []string) string {
	p := strings.Join(ids, ",")
	if len(p) > maxPayload {
		return ""
	}
	return p
}

// placeholders returns "$from, …, $(from+n-1)".
func placeholders(from, n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = "$" + strconv.Itoa(from+i)
	}
	return strings.Join(p, ", ")
}

// tenantArgs are t's values for tenantColumns.
func tenantArgs(t *tenant.Tenant, j jsonColumns) []any {
	return []any{t.ID, t.Name, t.Provider, []byte(t.ComputeConfig), j.labels, j.annotations,
		j.planName, j.planVersion, j.planPinned, j.window,
		string(t.Status), t.StatusMessage, t.StatusChangedAt, t.Generation, t.ObservedGeneration, t.Version,
		j.resourceIDs, j.endpoints, t.Attempts, t.RetryAt,
		t.DeletionRequestedAt, t.CreatedAt, t.UpdatedAt, t.DeletedAt, j.drift, j.placements}
}

// batcher is a pool or a transaction.
type batcher interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

// write sends the insert (create true) or update of t, the inserts of its
// events and, with notify, the announcement of its change to watchers, in
// one batch: one round trip, and, outside a transaction, one implicit
// transaction.
func write(ctx context.Context, db batcher, create, notify bool, t *tenant.Tenant, events []tenant.Event) error {
	b, err := writeBatch(create, notify, t, events)
	if err != nil {
		return err
	}
	return db.SendBatch(ctx, b).Close()
}

// writeBatch queues write's statements.
func writeBatch(create, notify bool, t *tenant.Tenant, events []tenant.Event) (*pgx.Batch, error) {
	j, err := encodeJSON(t)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	if create {
		b.Queue(insertTenant, tenantArgs(t, j)...)
	} else {
		b.Queue(updateTenant, t.ID, []byte(t.ComputeConfig), j.labels, j.annotations,
			j.planName, j.planVersion, j.planPinned, j.window,
			string(t.Status), t.StatusMessage, t.StatusChangedAt, t.Generation, t.ObservedGeneration, t.Version,
			j.resourceIDs, j.endpoints, t.Attempts, t.RetryAt,
			t.DeletionRequestedAt, t.UpdatedAt, t.DeletedAt, j.drift,
			j.placements, t.Provider)
	}
	for _, e := range events {
		if len(e.Changed) == 0 {
			b.Queue(insertEvent, eventArgs(e)...)
			continue
		}
		changed, err := json.Marshal(e.Changed)
		if err != nil {
			return nil, fmt.Errorf("postgres: encode the fields an event changed: %w", err)
		}
		b.Queue(insertChangedEvent, append(eventArgs(e), changed)...)
	}
	if notify {
		b.Queue(notifyTenant, t.ID)
	}
	return b, nil
}

// jsonColumns are a tenant's JSONB columns other than compute_config, which
// the domain keeps as JSON already, its plan's columns and its placements.
type jsonColumns struct {
	labels, annotations, resourceIDs, endpoints []byte
	// planName, planVersion and window are NULL (nil) when the tenant
	// has no plan, no window.
	planName, planVersion, window any
	planPinned                    bool
	// drift is NULL (nil) when no drift was ever found.
	drift any
	// placements is tenant.PlacementsText's: "[]" for a Simple tenant.
	placements string
}

// encodeJSON encodes t's jsonColumns; t is a tenant as tenant.ToStore
// returns it.
func encodeJSON(t *tenant.Tenant) (jsonColumns, error) {
	var (
		j   jsonColumns
		err error
	)
	if j.labels, err = encodeMap(t.Labels); err != nil {
		return j, fmt.Errorf("postgres: encode labels: %w", err)
	}
	if j.annotations, err = encodeMap(t.Annotations); err != nil {
		return j, fmt.Errorf("postgres: encode annotations: %w", err)
	}
	if j.resourceIDs, err = encodeMap(t.ResourceIDs); err != nil {
		return j, fmt.Errorf("postgres: encode resource ids: %w", err)
	}
	if t.Plan != nil {
		j.planName, j.planVersion, j.planPinned = t.Plan.Name, t.Plan.Version, t.Plan.Pinned
	}
	if t.MaintenanceWindow != nil {
		if j.window, err = json.Marshal(t.MaintenanceWindow); err != nil {
			return j, fmt.Errorf("postgres: encode maintenance window: %w", err)
		}
	}
	if t.Drift != nil {
		if j.drift, err = json.Marshal(t.Drift); err != nil {
			return j, fmt.Errorf("postgres: encode drift: %w", err)
		}
	}
	j.endpoints = []byte("[]")
	if len(t.Endpoints) > 0 {
		if j.endpoints, err = json.Marshal(t.Endpoints); err != nil {
			return j, fmt.Errorf("postgres: encode endpoints: %w", err)
		}
	}
	if j.placements, err = tenant.PlacementsText(t); err != nil {
		return j, fmt.Errorf("postgres: %w", err)
	}
	return j, nil
}

// eventArgs are e's values for eventColumns.
func eventArgs(e tenant.Event) []any {
	return []any{e.TenantID, e.Time, string(e.Type), string(e.From), string(e.To), e.Generation, e.Message, e.Actor, e.Placement}
}

// scanTenant reads one row of selectTenant: a tenant with its placements
// (tenant.ReadPlacements), their configs as stored (see scanOpen).
func scanTenant(row pgx.Row) (*tenant.Tenant, error) {
	var (
		t                                        tenant.Tenant
		config, labels, annotations, resourceIDs []byte
		endpoints, window, drift                 []byte
		placements                               string
		planName                                 *string
		planVersion                              *int64
		planPinned                               bool
	)
	err := row.Scan(&t.ID, &t.Name, &t.Provider, &config, &labels, &annotations,
		&planName, &planVersion, &planPinned, &window,
		&t.Status, &t.StatusMessage, &t.StatusChangedAt, &t.Generation, &t.ObservedGeneration, &t.Version,
		&resourceIDs, &endpoints, &t.Attempts, &t.RetryAt,
		&t.DeletionRequestedAt, &t.CreatedAt, &t.UpdatedAt, &t.DeletedAt, &drift, &placements)
	if err != nil {
		return nil, err
	}
	if drift != nil {
		t.Drift = &tenant.DriftReport{}
		if err := json.Unmarshal(drift, t.Drift); err != nil {
			return nil, fmt.Errorf("postgres: tenant %s: drift: %w", t.ID, err)
		}
	}
	// JSONB prints a space after each : and ,; the SQLite store returns the
	// compact text the domain stored, and so does this one.
	var compact bytes.Buffer
	compact.Grow(len(config))
	if err := json.Compact(&compact, config); err != nil {
		return nil, fmt.Errorf("postgres: tenant %s: compute_config: %w", t.ID, err)
	}
	t.ComputeConfig = compact.Bytes()
	if t.Labels, err = decodeMap(labels); err != nil {
		return nil, fmt.Errorf("postgres: tenant %s: labels: %w", t.ID, err)
	}
	if t.Annotations, err = decodeMap(annotations); err != nil {
		return nil, fmt.Errorf("postgres: tenant %s: annotations: %w", t.ID, err)
	}
	if t.ResourceIDs, err = decodeMap(resourceIDs); err != nil {
		return nil, fmt.Errorf("postgres: tenant %s: resource_ids: %w", t.ID, err)
	}
	if t.Endpoints, err = decodeEndpoints(endpoints); err != nil {
		return nil, fmt.Errorf("postgres: tenant %s: endpoints: %w", t.ID, err)
	}
	if planName != nil && planVersion != nil {
		t.Plan = &tenant.PlanRef{Name: *planName, Version: *planVersion, Pinned: planPinned}
	}
	if window != nil {
		t.MaintenanceWindow = &tenant.Window{}
		if err := json.Unmarshal(window, t.MaintenanceWindow); err != nil {
			return nil, fmt.Errorf("postgres: tenant %s: maintenance_window: %w", t.ID, err)
		}
	}
	t.StatusChangedAt = t.StatusChangedAt.UTC()
	t.CreatedAt = t.CreatedAt.UTC()
	t.UpdatedAt = t.UpdatedAt.UTC()
	t.RetryAt = utc(t.RetryAt)
	t.DeletionRequestedAt = utc(t.DeletionRequestedAt)
	t.DeletedAt = utc(t.DeletedAt)
	if err := tenant.ReadPlacements(&t, placements); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &t, nil
}

// encodeMap stores a nil or empty map as {}.
func encodeMap(m map[string]string) ([]byte, error) {
	if len(m) == 0 {
		return []byte("{}"), nil
	}
	return json.Marshal(m)
}

// decodeMap returns nil for {}: an empty map and a nil one are stored alike,
// and come back alike.
func decodeMap(raw []byte) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "{}" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// decodeEndpoints returns nil for [].
func decodeEndpoints(raw []byte) ([]provider.Endpoint, error) {
	if len(raw) == 0 || string(raw) == "[]" {
		return nil, nil
	}
	var eps []provider.Endpoint
	if err := json.Unmarshal(raw, &eps); err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		return nil, nil
	}
	return eps, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
