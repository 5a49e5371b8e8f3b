package servetest

import (
	"context"
	"encoding/json"
	"testing"

	llclient "github.com/jaxxstorm/landlord/client"
)

// CreateTenant creates a tenant through the public client. A failure is
// reported with tb.Errorf, so that it may be called from any goroutine,
// and answered with an empty tenant.
func CreateTenant(ctx context.Context, tb testing.TB, tenants *llclient.Tenants, name string, config json.RawMessage) *llclient.Tenant {
	tb.Helper()
	tn, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: name, ComputeConfig: config}, llclient.CreateOptions{})
	if err != nil {
		tb.Errorf("create %s: %v", name, err)
		return &llclient.Tenant{}
	}
	return tn
}
