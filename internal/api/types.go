package api

import "github.com/jaxxstorm/landlord/internal/wire"

// The wire types of API v1. They are the one description of the API: the
// handlers read and write them, the OpenAPI document is generated from them,
// and the Go client decodes into them. They live in package wire, which
// imports only the standard library, so that the client does not import the
// server; here they keep their short names.
type (
	// Tenant is a tenant as the API shows it.
	Tenant = wire.Tenant
	// CreateTenantRequest is the body of POST /v1/tenants.
	CreateTenantRequest = wire.CreateTenantRequest
	// ReplaceTenantRequest is the body of PUT /v1/tenants/{tenant}.
	ReplaceTenantRequest = wire.ReplaceTenantRequest
	// TenantList is a page of tenants.
	TenantList = wire.TenantList
	// Event is one entry of a tenant's history.
	Event = wire.Event
	// EventList is a page of events.
	EventList = wire.EventList
	// Provider is an enabled compute provider.
	Provider = wire.Provider
	// ProviderList lists the enabled compute providers.
	ProviderList = wire.ProviderList
	// ComputeConfig describes a provider's tenant compute_config.
	ComputeConfig = wire.ComputeConfig
	// ComputeStatus is the live state of a tenant's workload; computeStatus
	// makes it from the provider's compute.ComputeStatus.
	ComputeStatus = wire.ComputeStatus
	// Health is the answer of /healthz and /readyz.
	Health = wire.Health
	// Identity is the answer of /v1/whoami.
	Identity = wire.Identity
	// TenantPlan is the plan a tenant follows.
	TenantPlan = wire.TenantPlan
	// PlanChoice is the plan a request asks a tenant to follow.
	PlanChoice = wire.PlanChoice
	// MaintenanceWindow is a tenant's weekly maintenance window.
	MaintenanceWindow = wire.MaintenanceWindow
	// ConfigLayers are the layers of a tenant's effective config.
	ConfigLayers = wire.ConfigLayers
	// Plan is a named line of compute config versions.
	Plan = wire.Plan
	// PlanList lists the plans.
	PlanList = wire.PlanList
	// CreatePlanRequest is the body of POST /v1/plans.
	CreatePlanRequest = wire.CreatePlanRequest
	// PlanVersion is one published version of a plan.
	PlanVersion = wire.PlanVersion
	// PlanVersionList lists a plan's versions.
	PlanVersionList = wire.PlanVersionList
	// PublishVersionRequest is the body of POST /v1/plans/{plan}/versions.
	PublishVersionRequest = wire.PublishVersionRequest
	// WaveSpec chooses the members of a wave.
	WaveSpec = wire.WaveSpec
	// CreateRolloutRequest is the body of POST /v1/rollouts.
	CreateRolloutRequest = wire.CreateRolloutRequest
	// AbortRolloutRequest is the body of POST /v1/rollouts/{rollout}/abort.
	AbortRolloutRequest = wire.AbortRolloutRequest
	// Rollout is a rollout as the API shows it.
	Rollout = wire.Rollout
	// RolloutWave is a wave of a rollout as assigned.
	RolloutWave = wire.RolloutWave
	// WaitingTenant is a member waiting for its maintenance window.
	WaitingTenant = wire.WaitingTenant
	// RolloutList lists rollouts.
	RolloutList = wire.RolloutList
	// RolloutMember is one tenant of a rollout.
	RolloutMember = wire.RolloutMember
	// RolloutMemberList lists a rollout's members.
	RolloutMemberList = wire.RolloutMemberList
	// RolloutEvent is one entry of a rollout's history.
	RolloutEvent = wire.RolloutEvent
	// RolloutEventList is a page of a rollout's history.
	RolloutEventList = wire.RolloutEventList
	// ConfigChange is one difference between two effective configs.
	ConfigChange = wire.ConfigChange
	// FleetPlan is what a rollout would do: a dry run's answer.
	FleetPlan = wire.FleetPlan
	// FleetPlanWave is one wave of a fleet plan.
	FleetPlanWave = wire.FleetPlanWave
	// FleetPlanTenant is what a rollout would do to one tenant.
	FleetPlanTenant = wire.FleetPlanTenant
	// FleetPlanDiff is one set of changes of tenants' effective configs.
	FleetPlanDiff = wire.FleetPlanDiff
	// FleetPlanCounts sum up a fleet plan.
	FleetPlanCounts = wire.FleetPlanCounts
	// PlanTenant is a tenant a rollout leaves alone.
	PlanTenant = wire.PlanTenant
	// Problem is an RFC 9457 problem detail with a stable code.
	Problem = wire.Problem
	// FieldError is one problem with one field of a request.
	FieldError = wire.FieldError
)
