package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// A tenant whose first provision failed for good is tried again by Retry,
// with the config it has, and becomes ready.
func TestRetry(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Controller: true}).Client(t, "")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	config := json.RawMessage(`{"image":"a","x-mock":{"fail":"terminal","fail_times":1,"operations":["provision"]}}`)
	created, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: config}, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tenants().Wait(ctx, created.ID, client.UntilReady, nil)
	var failed *client.TenantFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("wait for the first provision: %v, want it failed", err)
	}

	retried, err := c.Tenants().Retry(ctx, "acme", client.UpdateOptions{IfMatch: failed.Tenant.Version})
	if err != nil {
		t.Fatal(err)
	}
	if retried.Generation != failed.Tenant.Generation+1 || retried.Annotations[client.RetryAnnotation] == "" || string(retried.ComputeConfig) != string(created.ComputeConfig) {
		t.Errorf("retried: generation %d (was %d), annotations %v, config %s", retried.Generation, failed.Tenant.Generation, retried.Annotations, retried.ComputeConfig)
	}
	if _, err := c.Tenants().Wait(ctx, created.ID, client.UntilReady, nil); err != nil {
		t.Errorf("after the retry: %v", err)
	}
	// A stale version is refused.
	if _, err := c.Tenants().Retry(ctx, "acme", client.UpdateOptions{IfMatch: failed.Tenant.Version}); !client.IsPreconditionFailed(err) {
		t.Errorf("retry of a stale version: %v, want 412", err)
	}
}
