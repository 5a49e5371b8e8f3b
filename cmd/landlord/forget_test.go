package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// A tenant of a provider the server has not enabled (it was restarted with
// another) is marked by list, and delete --forget removes its record after
// saying what may still run there.
func TestForgetStrandedTenant(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	ctx := context.Background()
	acme, err := srv.Store.Create(ctx, &tenant.Tenant{Name: "acme", Provider: "docker", ComputeConfig: json.RawMessage(`{"image":"nginx"}`)}, "ops")
	if err != nil {
		t.Fatal(err)
	}
	// As the controller leaves it, saying so.
	_, err = srv.Store.UpdateObserved(ctx, acme.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: tenant.ProviderMissing(acme),
		ResourceIDs: map[string]string{"container/app": "c0ffee"},
		Endpoints:   []provider.Endpoint{{Container: "app", ContainerPort: 80, Protocol: "tcp", Address: "127.0.0.1:32768"}}})
	if err != nil {
		t.Fatal(err)
	}
	mustRunCLI(t, srv, exitOK, "", "create", "live", "--config", "image: a")

	res := mustRunCLI(t, srv, exitOK, "", "list")
	mustContain(t, "list", res.stdout, "acme  provisioning  docker (not enabled)", "live  requested     mock ")
	mustContain(t, "list's note", res.stderr, "1 of these tenants use a provider this server has not enabled", "landlord delete NAME --forget")

	res = mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--config", "image: b")
	mustContain(t, "set", res.stderr, "the tenant's provider docker is not enabled on this server", "landlord delete acme --forget")

	res = mustRunCLI(t, srv, exitUsage, "", "delete", "acme", "--forget", "--wait")
	mustContain(t, "stderr", res.stderr, "forget", "wait")
	res = mustRunCLI(t, srv, exitFailure, "", "delete", "live", "--forget")
	mustContain(t, "stderr", res.stderr, "its provider mock is enabled", "landlord delete live")
	if strings.Contains(res.stderr, "may still run") {
		t.Errorf("a tenant whose provider is enabled is not forgotten, and nothing is said to be left running:\n%s", res.stderr)
	}

	// A plain deletion is recorded, but waits for the provider: --wait
	// says so at once rather than wait for nothing.
	res = mustRunCLI(t, srv, exitFailure, "", "delete", "acme", "--wait", "--timeout", "30s")
	mustContain(t, "delete --wait", res.stderr, "the deletion of tenant acme waits for its provider docker", "landlord delete acme --forget")
	// The controller says the deletion waits.
	deleting, err := srv.Store.Get(ctx, acme.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Store.UpdateObserved(ctx, acme.ID, tenant.Observation{Generation: deleting.Generation, Status: deleting.Status, Message: tenant.ProviderMissing(deleting),
		ResourceIDs: deleting.ResourceIDs, Endpoints: deleting.Endpoints}); err != nil {
		t.Fatal(err)
	}

	res = mustRunCLI(t, srv, exitOK, "", "delete", "acme", "--forget")
	mustContain(t, "warning", res.stderr, "tenant acme ran on compute provider docker, which this server has not enabled",
		"These may still run on docker", "  container/app c0ffee\n", "  endpoint 127.0.0.1:32768 (app 80/tcp)\n")
	mustContain(t, "stdout", res.stdout, "tenant acme forgotten")
	mustRunCLI(t, srv, exitNotFound, "", "get", "acme")
	res = mustRunCLI(t, srv, exitOK, "", "history", acme.ID)
	mustContain(t, "history", res.stdout, "forgotten", "deleting → deleted")
	res = mustRunCLI(t, srv, exitOK, "", "list")
	if strings.Contains(res.stdout, "acme") || res.stderr != "" {
		t.Errorf("list after forget:\n%s\n%s", res.stdout, res.stderr)
	}
}
