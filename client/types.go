package client

import "github.com/jaxxstorm/landlord/internal/api/wire"

// The API's wire types, under the client's names. They are the types the
// server encodes, so there is one definition of each.
type (
	// Tenant is a tenant as the API shows it.
	Tenant = wire.Tenant
	// CreateTenantRequest is the body of a create.
	CreateTenantRequest = wire.CreateTenantRequest
	// ReplaceTenantRequest is the whole desired state of a tenant.
	ReplaceTenantRequest = wire.ReplaceTenantRequest
	// TenantList is a page of tenants.
	TenantList = wire.TenantList
	// Event is one entry of a tenant's history.
	Event = wire.Event
	// EventList is a page of events.
	EventList = wire.EventList
	// Endpoint is an address where a container port of a tenant can be
	// reached.
	Endpoint = wire.Endpoint
	// Provider is an enabled compute provider.
	Provider = wire.Provider
	// ProviderList lists the enabled compute providers.
	ProviderList = wire.ProviderList
	// ComputeConfig is a provider's compute_config schema and defaults.
	ComputeConfig = wire.ComputeConfig
	// ComputeStatus is the live status of a tenant's workload.
	ComputeStatus = wire.ComputeStatus
	// ContainerStatus is the live status of one container of a workload.
	ContainerStatus = wire.ContainerStatus
	// ComputeState is the overall state of a workload: StatePending,
	// StateRunning, …
	ComputeState = wire.ComputeState
	// HealthStatus is the result of health checks: HealthHealthy, …
	HealthStatus = wire.HealthStatus
	// ContainerState is the state of one container: ContainerRunning, …
	ContainerState = wire.ContainerState
	// Protocol is an endpoint's transport protocol.
	Protocol = wire.Protocol
	// Identity is who a token is: its name and role.
	Identity = wire.Identity
	// Problem is an API error body (RFC 9457).
	Problem = wire.Problem
	// FieldError is one field at fault in a Problem.
	FieldError = wire.FieldError
)

// Tenant statuses.
const (
	StatusRequested    = wire.StatusRequested
	StatusProvisioning = wire.StatusProvisioning
	StatusReady        = wire.StatusReady
	StatusUpdating     = wire.StatusUpdating
	StatusDeleting     = wire.StatusDeleting
	StatusDeleted      = wire.StatusDeleted
	StatusFailed       = wire.StatusFailed
)

// Workload states, the values of ComputeStatus.State.
const (
	StatePending  = wire.StatePending
	StateRunning  = wire.StateRunning
	StateStopped  = wire.StateStopped
	StateFailed   = wire.StateFailed
	StateDegraded = wire.StateDegraded
	StateUnknown  = wire.StateUnknown
)

// Health statuses, the values of ComputeStatus.Health and
// ContainerStatus.Health.
const (
	HealthHealthy   = wire.HealthHealthy
	HealthUnhealthy = wire.HealthUnhealthy
	HealthStarting  = wire.HealthStarting
	HealthUnknown   = wire.HealthUnknown
)

// Container states, the values of ContainerStatus.State.
const (
	ContainerCreated    = wire.ContainerCreated
	ContainerRunning    = wire.ContainerRunning
	ContainerRestarting = wire.ContainerRestarting
	ContainerExited     = wire.ContainerExited
	ContainerUnknown    = wire.ContainerUnknown
)

// Protocols of an endpoint.
const (
	ProtocolTCP = wire.ProtocolTCP
	ProtocolUDP = wire.ProtocolUDP
)
