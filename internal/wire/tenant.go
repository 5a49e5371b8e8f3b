package wire

import (
	"encoding/json"
	"time"
)

// Tenant is a tenant as the API shows it.
type Tenant struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	ComputeProvider string `json:"compute_provider"`
	// ComputeConfig is the config as submitted, with secret (writeOnly)
	// values replaced by "[redacted]".
	ComputeConfig json.RawMessage `json:"compute_config"`
	// EffectiveConfig is the config the provider gets (operator defaults
	// merged under it, secrets redacted); shown for dry runs.
	EffectiveConfig json.RawMessage `json:"effective_config,omitempty"`
	// ConfigLayers are the layers merged into EffectiveConfig; shown for
	// dry runs.
	ConfigLayers *ConfigLayers `json:"config_layers,omitempty"`
	// Plan is the plan the tenant follows, if any: ComputeConfig then
	// holds the tenant's overrides of the plan version's config.
	Plan *TenantPlan `json:"plan,omitempty"`
	// MaintenanceWindow, when set, is when rollouts may change the tenant.
	MaintenanceWindow  *MaintenanceWindow `json:"maintenance_window,omitempty"`
	Labels             map[string]string  `json:"labels,omitempty"`
	Annotations        map[string]string  `json:"annotations,omitempty"`
	Status             string             `json:"status"`
	StatusMessage      string             `json:"status_message,omitempty"`
	Generation         int64              `json:"generation"`
	ObservedGeneration int64              `json:"observed_generation"`
	Version            int64              `json:"version"`
	Attempts           int                `json:"attempts,omitempty"`
	RetryAt            *time.Time         `json:"retry_at,omitempty"`
	ResourceIDs        map[string]string  `json:"resource_ids,omitempty"`
	Endpoints          []Endpoint         `json:"endpoints,omitempty"`
	// Drift is the last drift found in the tenant's workload: absent
	// when none ever was. It stays after a repair.
	Drift *Drift `json:"drift,omitempty"`
	// Placements are the parts of a tenant declared with placements, each
	// with its own status, endpoints and drift; absent for a tenant of the
	// one placement "default" (declared with a compute_config alone),
	// which the fields above describe whole. For a tenant with
	// placements, compute_provider, compute_config, resource_ids and
	// drift above are those of its first placement, endpoints are every
	// placement's, and status summarizes theirs: ready when every
	// placement is ready.
	Placements []Placement `json:"placements,omitempty"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
	DeletedAt  *time.Time  `json:"deleted_at,omitempty"`
}

// Placement is one part of a tenant's workload as the API shows it: a
// compute provider and its config, with the placement's own observed
// state.
type Placement struct {
	Name            string          `json:"name"`
	ComputeProvider string          `json:"compute_provider"`
	ComputeConfig   json.RawMessage `json:"compute_config"`
	// WorkloadID and WorkloadName are what the provider knows the
	// placement's workload by (labels, tags, resource names).
	WorkloadID   string `json:"workload_id"`
	WorkloadName string `json:"workload_name"`
	// Removed says the placement was taken out of the tenant: its
	// workload is being destroyed, and it goes when that is done.
	Removed bool `json:"removed,omitempty"`
	// EffectiveConfig is the config the provider gets; shown for dry
	// runs.
	EffectiveConfig    json.RawMessage   `json:"effective_config,omitempty"`
	Status             string            `json:"status"`
	StatusMessage      string            `json:"status_message,omitempty"`
	ObservedGeneration int64             `json:"observed_generation"`
	Attempts           int               `json:"attempts,omitempty"`
	RetryAt            *time.Time        `json:"retry_at,omitempty"`
	ResourceIDs        map[string]string `json:"resource_ids,omitempty"`
	Endpoints          []Endpoint        `json:"endpoints,omitempty"`
	Drift              *Drift            `json:"drift,omitempty"`
	// Move is the placement's move in progress, if any.
	Move *Move `json:"move,omitempty"`
}

// Move is a placement's move to another provider (or place) in progress:
// make-before-break, the target is provisioned beside the source, awaited
// until it runs and its endpoints answer, switched to (after an approval,
// when the move holds for one), and the source destroyed.
type Move struct {
	ID string `json:"id"`
	// Step is provisioning (the target is made and awaited),
	// awaiting_approval, destroying_source (switched) or cancelling (the
	// target is destroyed).
	Step     string `json:"step"`
	Hold     bool   `json:"hold,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	// From and To are the source's and the target's providers.
	From string `json:"from"`
	To   string `json:"to"`
	// Other is the workload that does not serve: the target until the
	// switch, the source after it.
	Other       Placement  `json:"other"`
	RequestedAt time.Time  `json:"requested_at"`
	Actor       string     `json:"actor,omitempty"`
	SwitchedAt  *time.Time `json:"switched_at,omitempty"`
	// Plan is the plan Other follows: the target's until the switch
	// (when the tenant starts to follow it), the source's after it.
	Plan *TenantPlan `json:"plan,omitempty"`
}

// MoveRequest is the body of POST /v1/tenants/{tenant}/move: the
// placement to move (optional for a tenant of one) and its config on the
// target, whose compute_provider names the target provider.
type MoveRequest struct {
	Placement     string          `json:"placement,omitempty"`
	ComputeConfig json.RawMessage `json:"compute_config,omitempty"`
	// Plan makes the target follow a plan, on the plan's provider:
	// ComputeConfig (optional then) holds the tenant's overrides of it.
	// The tenant follows it from the switch. A tenant on a plan moves
	// only so.
	Plan *PlanChoice `json:"plan,omitempty"`
	// Hold makes the move wait for an approval
	// (POST /v1/tenants/{tenant}/move/approve) before it switches.
	Hold bool `json:"hold,omitempty"`
}

// MoveActionRequest is the body of POST /v1/tenants/{tenant}/move/approve
// and /move/cancel: the placement whose move it is (optional for a tenant
// of one).
type MoveActionRequest struct {
	Placement string `json:"placement,omitempty"`
}

// PlacementRequest is a placement as a create or a replace declares it:
// a name and a compute_config, whose compute_provider member chooses the
// provider as a tenant's does.
type PlacementRequest struct {
	Name          string          `json:"name"`
	ComputeConfig json.RawMessage `json:"compute_config"`
}

// Tenant statuses: the values of Tenant.Status, Event.From and Event.To.
const (
	StatusRequested    string = "requested"
	StatusProvisioning string = "provisioning"
	StatusReady        string = "ready"
	StatusUpdating     string = "updating"
	StatusDeleting     string = "deleting"
	StatusDeleted      string = "deleted"
	StatusFailed       string = "failed"
)

// TenantStatuses lists every tenant status, in lifecycle order.
var TenantStatuses = []string{StatusRequested, StatusProvisioning, StatusReady, StatusUpdating, StatusDeleting, StatusDeleted, StatusFailed}

// CreateTenantRequest is the body of POST /v1/tenants.
type CreateTenantRequest struct {
	Name string `json:"name"`
	// ComputeConfig declares a tenant of one placement (named "default");
	// Placements, a tenant of one or more named placements. A request
	// has one or the other.
	ComputeConfig json.RawMessage    `json:"compute_config,omitempty"`
	Placements    []PlacementRequest `json:"placements,omitempty"`
	Labels        map[string]string  `json:"labels,omitempty"`
	Annotations   map[string]string  `json:"annotations,omitempty"`
	// Plan makes the tenant follow a plan: its compute_config then holds
	// overrides of the plan version's config.
	Plan              *PlanChoice        `json:"plan,omitempty"`
	MaintenanceWindow *MaintenanceWindow `json:"maintenance_window,omitempty"`
}

// ReplaceTenantRequest is the body of PUT /v1/tenants/{tenant}: the
// desired state. A secret value sent back as "[redacted]" keeps the stored
// secret. Labels and Annotations left nil are not sent, and the tenant keeps
// its own; an empty map is sent as {} and clears them. Plan and
// MaintenanceWindow left nil are not sent either, and the tenant keeps
// its own.
type ReplaceTenantRequest struct {
	// ComputeConfig is the config of a tenant of one placement;
	// Placements, all the placements of a tenant as they are to be (those
	// left out are removed, their workloads destroyed; a placement's
	// provider changes only by a move). A request has one or the other.
	ComputeConfig     json.RawMessage    `json:"compute_config,omitempty"`
	Placements        []PlacementRequest `json:"placements,omitempty"`
	Labels            map[string]string  `json:"labels,omitzero"`
	Annotations       map[string]string  `json:"annotations,omitzero"`
	Plan              *PlanChoice        `json:"plan,omitempty"`
	MaintenanceWindow *MaintenanceWindow `json:"maintenance_window,omitempty"`
}

// TenantList is a page of tenants.
type TenantList struct {
	Tenants       []Tenant `json:"tenants"`
	NextPageToken string   `json:"next_page_token"`
}

// Event is one entry of a tenant's history.
type Event struct {
	Time time.Time `json:"time"`
	// Placement names the placement the event is about, for a tenant with
	// placements; absent for the tenant as a whole.
	Placement  string `json:"placement,omitempty"`
	Type       string `json:"type"`
	From       string `json:"from,omitempty"`
	To         string `json:"to,omitempty"`
	Generation int64  `json:"generation"`
	Message    string `json:"message,omitempty"`
	Actor      string `json:"actor"`
}

// EventList is a page of events.
type EventList struct {
	Events        []Event `json:"events"`
	NextPageToken string  `json:"next_page_token"`
}
