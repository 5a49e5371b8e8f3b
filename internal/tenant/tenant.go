package tenant

import (
	"encoding/json"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Tenant is one customer's deployment: what it should be and what it is.
type Tenant struct {
	// ID is a time-ordered UUID (version 7), assigned on create, never reused.
	ID string `json:"id"`
	// Name is a lowercase DNS label, unique among tenants that are not
	// deleted.
	Name string `json:"name"`
	// Provider is the compute provider the tenant's first placement runs
	// on, chosen on create and changed only by a move.
	Provider string `json:"provider"`

	// Desired state.
	ComputeConfig json.RawMessage   `json:"compute_config"`
	Labels        map[string]string `json:"labels,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
	// Plan is the plan the tenant follows, if any: ComputeConfig then holds
	// the tenant's overrides of the plan version's config.
	Plan *PlanRef `json:"plan,omitempty"`
	// MaintenanceWindow, when set, is when rollouts may change the tenant.
	MaintenanceWindow *Window `json:"maintenance_window,omitempty"`
	// DeletionRequestedAt is set when deletion is asked for.
	DeletionRequestedAt *time.Time `json:"deletion_requested_at,omitempty"`
	// Placements are the parts of the tenant's workload, each on a
	// provider with a config, in the order they were declared; every
	// tenant has at least one. Provider, ComputeConfig, ResourceIDs and
	// Drift are the first placement's, Endpoints every placement's, and
	// Status summarizes theirs (Normalize): for a tenant of one placement
	// (DefaultPlacement), they are all that placement's.
	Placements []Placement `json:"placements,omitempty"`
	// Generation counts changes to the desired state, from 1.
	Generation int64 `json:"generation"`
	// Version counts every write to the desired state; callers pass it back
	// to update (optimistic concurrency; the API's ETag).
	Version int64 `json:"version"`

	// Observed state.
	Status        Status `json:"status"`
	StatusMessage string `json:"status_message,omitempty"`
	// ObservedGeneration is the last generation the controller settled:
	// applied (ready), gave up on (failed) or deleted.
	ObservedGeneration int64               `json:"observed_generation"`
	ResourceIDs        map[string]string   `json:"resource_ids,omitempty"`
	Endpoints          []provider.Endpoint `json:"endpoints,omitempty"`
	// StatusChangedAt is when Status last changed.
	StatusChangedAt time.Time `json:"status_changed_at"`
	// Attempts counts the failed attempts at the current generation; a new
	// generation starts again from 0. It lives in the store so that backoff
	// and the retry limit survive a controller restart.
	Attempts int `json:"attempts,omitempty"`
	// RetryAt is when the controller may try again after a failed attempt.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// Drift is the last drift found in the workload, nil when none ever
	// was; it stays after a repair, as a record of what happened last.
	Drift *DriftReport `json:"drift,omitempty"`

	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
}

// NeedsWork reports whether the controller has something to do for t: a
// generation it has not settled, or a state that is still in progress.
func (t *Tenant) NeedsWork() bool {
	if t.Status == StatusDeleted {
		return false
	}
	return t.Generation != t.ObservedGeneration || t.Status.InProgress()
}

// ComputeRef is what a compute provider needs to find the tenant's
// workload: its identity, its stored config and what the provider last
// reported creating.
func (t *Tenant) ComputeRef() provider.TenantRef {
	return provider.TenantRef{ID: t.ID, Name: t.Name, Provider: t.Provider, Config: t.ComputeConfig, ResourceIDs: t.ResourceIDs}
}
