package provider

import (
	"context"
	"encoding/json"
)

// TenantRef is a tenant as landlord has recorded it: enough for a provider
// to find the tenant's workload without resolving its config again.
type TenantRef struct {
	// ID is the tenant's immutable id.
	ID string
	// Name is the tenant's name.
	Name string
	// Provider is the name of the provider the tenant runs on.
	Provider string
	// Config is the tenant's stored compute_config, without the provider's
	// defaults: where the tenant's config says its workload runs.
	Config json.RawMessage
	// ResourceIDs are what the last successful Provision or Update of the
	// tenant returned: where its workload does run. Empty when no result was
	// recorded (a crash between the call and the store write).
	ResourceIDs map[string]string
}

// Locator is implemented by providers that cannot find a tenant's workload
// from its id alone: the tenant's config chooses where it runs (an ECS
// cluster, a region, an account) and the platform cannot search for a tag
// across them. The Manager calls GetStatusOf and DestroyOf in place of
// GetStatus and Destroy, with the same contracts; the plain methods stay
// for callers that know nothing but the id and may cost more (a scan of the
// provider's default placement).
//
// A Locator's Provision and Update find an existing workload where the
// spec's ResourceIDs say it is, so that a change of placement in the config
// (or in the provider's defaults) is refused or carried out, never answered
// by a second workload beside a forgotten first one.
type Locator interface {
	GetStatusOf(ctx context.Context, t TenantRef) (*ComputeStatus, error)
	DestroyOf(ctx context.Context, t TenantRef) error
}
