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

// CreateReady creates a tenant through the public client and waits until
// it is ready with an endpoint, failing tb otherwise.
func CreateReady(ctx context.Context, tb testing.TB, tenants *llclient.Tenants, name string, config json.RawMessage) *llclient.Tenant {
	tb.Helper()
	created := CreateTenant(ctx, tb, tenants, name, config)
	if created.ID == "" {
		tb.FailNow()
	}
	tn, err := tenants.Wait(ctx, created.ID, llclient.UntilReady, nil)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	if len(tn.Endpoints) == 0 {
		tb.Fatalf("%s is ready without an endpoint", name)
	}
	return tn
}
