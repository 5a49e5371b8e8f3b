package wire

import (
	"encoding/json"
	"time"
)

// Provider is an enabled compute provider.
type Provider struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	Healthy bool   `json:"healthy"`
	Message string `json:"message"`
	// Capabilities says what the provider supports, by capability
	// (in_place_update, multiple_containers, secrets, published_ports,
	// public_networking, health_checks, scaling, volumes); absent when the
	// provider declares nothing.
	Capabilities map[string]bool `json:"capabilities,omitempty"`
}

// ProviderList lists the enabled compute providers.
type ProviderList struct {
	Providers []Provider `json:"providers"`
}

// ComputeConfig describes a provider's tenant compute_config.
type ComputeConfig struct {
	Provider string          `json:"provider"`
	Schema   json.RawMessage `json:"schema"`
	// Defaults are merged under each tenant's compute_config; null when the
	// provider has none.
	Defaults json.RawMessage `json:"defaults"`
	// Capabilities says what the provider supports, as in Provider.
	Capabilities map[string]bool `json:"capabilities,omitempty"`
}

// ComputeStatus is the live state of a tenant's workload, as its provider
// reports it: the body of GET /v1/tenants/{tenant}/status.
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

// Endpoint is an address where a container port can be reached.
type Endpoint struct {
	Container     string   `json:"container"`
	Name          string   `json:"name,omitempty"`
	ContainerPort int      `json:"container_port"`
	Protocol      Protocol `json:"protocol"`
	// Address is "host:port", where the port answers; a provider that runs
	// nothing (mock) reports a URL whose scheme says so instead, such as
	// "mock://acme/app:80".
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

// HealthStatus is the result of a workload's or a container's health checks.
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

// Protocol is the transport protocol of an endpoint.
type Protocol string

// Protocols an endpoint may use.
const (
	ProtocolTCP Protocol = "tcp"
	ProtocolUDP Protocol = "udp"
)
