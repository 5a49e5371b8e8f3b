package provider

import (
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// ProvisionStatus says whether a provision or update has finished.
type ProvisionStatus string

// Provision statuses. A failure is an error, not a status.
const (
	// ProvisionStatusSuccess means the workload is created or updated; it may
	// still be starting (see ComputeStatus).
	ProvisionStatusSuccess ProvisionStatus = "success"
	// ProvisionStatusInProgress means the platform accepted the request and
	// finishes asynchronously; poll GetStatus.
	ProvisionStatusInProgress ProvisionStatus = "in_progress"
)

// ProvisionResult is what Provision created.
type ProvisionResult struct {
	TenantID     string          `json:"tenant_id"`
	ProviderType string          `json:"provider_type"`
	Status       ProvisionStatus `json:"status"`
	// ResourceIDs are the provider's ids of what it created ("container/app":
	// "3f2a…"), kept on the tenant for operators and handed back in
	// TenantRef and TenantComputeSpec. Only a Locator reads them, to find a
	// workload whose placement the config no longer states.
	ResourceIDs   map[string]string `json:"resource_ids,omitempty"`
	Endpoints     []Endpoint        `json:"endpoints,omitempty"`
	Message       string            `json:"message,omitempty"`
	ProvisionedAt time.Time         `json:"provisioned_at"`
}

// UpdateResult is what Update changed.
type UpdateResult struct {
	TenantID     string          `json:"tenant_id"`
	ProviderType string          `json:"provider_type"`
	Status       ProvisionStatus `json:"status"`
	// Changes lists what was changed; empty when the workload already matched
	// the spec.
	Changes     []Change          `json:"changes,omitempty"`
	ResourceIDs map[string]string `json:"resource_ids,omitempty"`
	Endpoints   []Endpoint        `json:"endpoints,omitempty"`
	Message     string            `json:"message,omitempty"`
	UpdatedAt   time.Time         `json:"updated_at"`
}

// NoChanges reports whether the update found nothing to change.
func (r *UpdateResult) NoChanges() bool { return len(r.Changes) == 0 }

// Change is one difference applied by an update. Secret values never appear
// in From or To.
type Change struct {
	// Field is a path such as "containers/app/image".
	Field string `json:"field"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
}

func (c Change) String() string {
	switch {
	case c.From == "" && c.To == "":
		return c.Field + " changed"
	case c.From == "":
		return fmt.Sprintf("%s: added %s", c.Field, c.To)
	case c.To == "":
		return fmt.Sprintf("%s: removed %s", c.Field, c.From)
	default:
		return fmt.Sprintf("%s: %s → %s", c.Field, c.From, c.To)
	}
}

// Endpoint is an address where a container port can be reached.
type Endpoint struct {
	Container     string            `json:"container"`
	Name          string            `json:"name,omitempty"`
	ContainerPort int               `json:"container_port"`
	Protocol      workload.Protocol `json:"protocol"`
	// Address is "host:port", where the port answers; a provider that
	// runs nothing reports a URL whose scheme says so instead (the mock's
	// mock://tenant/container:port), never an address nothing answers on.
	Address string `json:"address"`
}

// ComputeState is the overall state of a tenant's workload.
type ComputeState string

// Compute states.
const (
	// StatePending: resources exist but are not running yet (starting,
	// pulling, scheduling, rolling out).
	StatePending ComputeState = "pending"
	// StateRunning: every container is running.
	StateRunning ComputeState = "running"
	// StateStopped: containers exist but are not running and not restarting.
	StateStopped ComputeState = "stopped"
	// StateFailed: a container failed (crashed, cannot start, cannot pull).
	StateFailed ComputeState = "failed"
	// StateDegraded: some containers run, others do not.
	StateDegraded ComputeState = "degraded"
	// StateUnknown: the provider cannot tell.
	StateUnknown ComputeState = "unknown"
)

// HealthStatus is the result of a workload's health checks.
type HealthStatus string

// Health statuses.
const (
	HealthHealthy   HealthStatus = "healthy"
	HealthUnhealthy HealthStatus = "unhealthy"
	// HealthStarting: health checks have not passed yet within the start
	// period.
	HealthStarting HealthStatus = "starting"
	// HealthUnknown: no health check is defined or the platform cannot tell.
	HealthUnknown HealthStatus = "unknown"
)

// ComputeStatus is the live state of a tenant's workload.
type ComputeStatus struct {
	TenantID     string            `json:"tenant_id"`
	ProviderType string            `json:"provider_type"`
	State        ComputeState      `json:"state"`
	Containers   []ContainerStatus `json:"containers"`
	Health       HealthStatus      `json:"health"`
	Endpoints    []Endpoint        `json:"endpoints,omitempty"`
	// Generation is the spec generation the running workload was built from,
	// when the provider records it; 0 when unknown.
	Generation  int64             `json:"generation,omitempty"`
	Message     string            `json:"message,omitempty"`
	LastUpdated time.Time         `json:"last_updated"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// ContainerState is the state of one container.
type ContainerState string

// Container states.
const (
	ContainerCreated    ContainerState = "created"
	ContainerRunning    ContainerState = "running"
	ContainerRestarting ContainerState = "restarting"
	ContainerExited     ContainerState = "exited"
	ContainerUnknown    ContainerState = "unknown"
)

// ContainerStatus is the live state of one container.
type ContainerStatus struct {
	Name         string         `json:"name"`
	Image        string         `json:"image"`
	State        ContainerState `json:"state"`
	Health       HealthStatus   `json:"health"`
	RestartCount int            `json:"restart_count"`
	// ExitCode is set when the container has exited.
	ExitCode *int   `json:"exit_code,omitempty"`
	Message  string `json:"message,omitempty"`
	// ID is the platform's id of the container, when it has one.
	ID string `json:"id,omitempty"`
}
