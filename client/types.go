package client

import (
	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The API's wire types, under the client's names.
type (
	// Tenant is a tenant as the API shows it.
	Tenant = api.Tenant
	// CreateTenantRequest is the body of a create.
	CreateTenantRequest = api.CreateTenantRequest
	// ReplaceTenantRequest is the whole desired state of a tenant.
	ReplaceTenantRequest = api.ReplaceTenantRequest
	// TenantList is a page of tenants.
	TenantList = api.TenantList
	// Event is one entry of a tenant's history.
	Event = api.Event
	// EventList is a page of events.
	EventList = api.EventList
	// Provider is an enabled compute provider.
	Provider = api.Provider
	// ProviderList lists the enabled compute providers.
	ProviderList = api.ProviderList
	// ComputeConfig is a provider's compute_config schema and defaults.
	ComputeConfig = api.ComputeConfig
	// ComputeStatus is the live status of a tenant's workload.
	ComputeStatus = compute.ComputeStatus
	// Problem is an API error body (RFC 9457).
	Problem = api.Problem
	// FieldError is one field at fault in a Problem.
	FieldError = api.FieldError
)

// Tenant statuses.
const (
	StatusRequested    = string(tenant.StatusRequested)
	StatusProvisioning = string(tenant.StatusProvisioning)
	StatusReady        = string(tenant.StatusReady)
	StatusUpdating     = string(tenant.StatusUpdating)
	StatusDeleting     = string(tenant.StatusDeleting)
	StatusDeleted      = string(tenant.StatusDeleted)
	StatusFailed       = string(tenant.StatusFailed)
)
