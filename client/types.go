package client

import "github.com/jaxxstorm/landlord/internal/wire"

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
	// Placement is one part of a tenant declared with placements: a
	// provider and its config, with its own status.
	Placement = wire.Placement
	// PlacementRequest is a placement as a create or a replace declares
	// it.
	PlacementRequest = wire.PlacementRequest
	// Event is one entry of a tenant's history.
	Event = wire.Event
	// EventList is a page of events.
	EventList = wire.EventList
	// Endpoint is an address where a container port of a tenant can be
	// reached.
	Endpoint = wire.Endpoint
	// Drift is the last drift found in a tenant's workload: what differed
	// from its declared state, when, and whether it was repaired.
	Drift = wire.Drift
	// DriftDifference is one path of a drift, with the expected and found
	// values.
	DriftDifference = wire.DriftDifference
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

	// TenantPlan is the plan a tenant follows.
	TenantPlan = wire.TenantPlan
	// PlanChoice is the plan a create, replace or patch asks a tenant to
	// follow.
	PlanChoice = wire.PlanChoice
	// MaintenanceWindow is a weekly window in which rollouts may change a
	// tenant.
	MaintenanceWindow = wire.MaintenanceWindow
	// ConfigLayers are the layers of a tenant's effective config.
	ConfigLayers = wire.ConfigLayers
	// Plan is a named line of compute config versions for one provider.
	Plan = wire.Plan
	// PlanList lists the plans.
	PlanList = wire.PlanList
	// CreatePlanRequest is the body of a plan's create.
	CreatePlanRequest = wire.CreatePlanRequest
	// PlanVersion is one published, immutable version of a plan.
	PlanVersion = wire.PlanVersion
	// PlanVersionList lists a plan's versions, oldest first.
	PlanVersionList = wire.PlanVersionList
	// PublishVersionRequest is the body of a version's publish.
	PublishVersionRequest = wire.PublishVersionRequest
	// WaveSpec chooses the members of one wave of a rollout.
	WaveSpec = wire.WaveSpec
	// CreateRolloutRequest is the body of a rollout's start or plan.
	CreateRolloutRequest = wire.CreateRolloutRequest
	// AbortRolloutRequest is the body of a rollout's abort.
	AbortRolloutRequest = wire.AbortRolloutRequest
	// Rollout is a rollout and where it stands.
	Rollout = wire.Rollout
	// RolloutWave is a wave of a rollout, with its members by state.
	RolloutWave = wire.RolloutWave
	// RolloutList lists rollouts, newest first.
	RolloutList = wire.RolloutList
	// RolloutMember is one tenant of a rollout.
	RolloutMember = wire.RolloutMember
	// RolloutMemberList lists a rollout's members, in wave order.
	RolloutMemberList = wire.RolloutMemberList
	// RolloutEvent is one entry of a rollout's own history.
	RolloutEvent = wire.RolloutEvent
	// RolloutEventList is a page of a rollout's history, oldest first.
	RolloutEventList = wire.RolloutEventList
	// WaitingTenant is a member waiting for its maintenance window.
	WaitingTenant = wire.WaitingTenant
	// FleetPlan is what a rollout would do, tenant by tenant.
	FleetPlan = wire.FleetPlan
	// FleetPlanWave is one wave of a fleet plan.
	FleetPlanWave = wire.FleetPlanWave
	// FleetPlanTenant is what a rollout would do to one tenant.
	FleetPlanTenant = wire.FleetPlanTenant
	// FleetPlanDiff is one set of changes of tenants' effective configs,
	// shown once for all the tenants whose configs change so.
	FleetPlanDiff = wire.FleetPlanDiff
	// FleetPlanCounts sum up a fleet plan.
	FleetPlanCounts = wire.FleetPlanCounts
	// PlanTenant is a tenant of a plan that a rollout leaves alone.
	PlanTenant = wire.PlanTenant
	// ConfigChange is one difference between two effective configs.
	ConfigChange = wire.ConfigChange

	// CloudEvent is an event of the feed, as webhooks deliver it too: a
	// CloudEvents 1.0 event in the structured JSON format. Its Type is one
	// of EventTypes, its Sequence its place in the feed.
	CloudEvent = wire.CloudEvent
	// TenantEventData is the Data of a tenant's CloudEvent: the tenant as
	// the API showed it when the event was written, and the entry of its
	// history the event stands for.
	TenantEventData = wire.TenantEventData
	// EventFeed is a page of the event feed, oldest first.
	EventFeed = wire.EventFeed
	// Subscription is a webhook subscription, its secrets shown by their
	// dates only.
	Subscription = wire.Subscription
	// SubscriptionList lists the webhook subscriptions.
	SubscriptionList = wire.SubscriptionList
	// SecretInfo is when one of a subscription's signing secrets was made
	// and when it stops signing.
	SecretInfo = wire.SecretInfo
	// DeliveryCount counts a subscription's deliveries by state.
	DeliveryCount = wire.DeliveryCount
	// CreateSubscriptionRequest is the body of a subscription's create.
	CreateSubscriptionRequest = wire.CreateSubscriptionRequest
	// UpdateSubscriptionRequest is the body of a subscription's change:
	// what it leaves nil is kept.
	UpdateSubscriptionRequest = wire.UpdateSubscriptionRequest
	// RotateSecretRequest is the body of a secret's rotation.
	RotateSecretRequest = wire.RotateSecretRequest
	// RedeliverRequest chooses the events to send again: one by id, or
	// those of a time range.
	RedeliverRequest = wire.RedeliverRequest
	// RedeliverResponse counts the deliveries a redelivery made pending.
	RedeliverResponse = wire.RedeliverResponse
	// Delivery is one event sent, or to send, to a subscription.
	Delivery = wire.Delivery
	// DeliveryAttempt is one try at a delivery.
	DeliveryAttempt = wire.DeliveryAttempt
	// DeliveryList is a page of a subscription's deliveries, newest first.
	DeliveryList = wire.DeliveryList
)

// What a fleet plan says a provider would do to a tenant's workload, the
// values of FleetPlanTenant.Action.
const (
	ActionNone    = wire.ActionNone
	ActionInPlace = wire.ActionInPlace
	ActionReplace = wire.ActionReplace
	ActionMove    = wire.ActionMove
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

// Rollout states, the values of Rollout.State.
const (
	RolloutRunning   = wire.RolloutRunning
	RolloutPaused    = wire.RolloutPaused
	RolloutHalted    = wire.RolloutHalted
	RolloutAborting  = wire.RolloutAborting
	RolloutAborted   = wire.RolloutAborted
	RolloutCompleted = wire.RolloutCompleted
)

// Member states, the values of RolloutMember.State and the keys of
// Rollout.Counts and RolloutWave.Counts.
const (
	MemberPending    = wire.MemberPending
	MemberChanging   = wire.MemberChanging
	MemberDone       = wire.MemberDone
	MemberFailed     = wire.MemberFailed
	MemberSkipped    = wire.MemberSkipped
	MemberRolledBack = wire.MemberRolledBack
)
