package api

import "github.com/jaxxstorm/landlord/internal/api/wire"

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
	// Problem is an RFC 9457 problem detail with a stable code.
	Problem = wire.Problem
	// FieldError is one problem with one field of a request.
	FieldError = wire.FieldError
)
