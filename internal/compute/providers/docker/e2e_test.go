package docker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
)

// TestEndToEndThroughServe drives `landlord serve` with the docker provider
// through the public client: create, replace, drift repair and delete.
func TestEndToEndThroughServe(t *testing.T) {
	cli, images, l, ctx := startServe(t)
	tenants := l.Client().Tenants()

	// Create and wait for ready; the published endpoint echoes the env.
	created, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: "e2e-echo", ComputeConfig: echoConfig(images[0], "first")}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	id := created.ID
	tn, err := tenants.Wait(ctx, id, llclient.UntilReady, nil)
	if err != nil {
		t.Fatalf("wait ready: %v", err)
	}
	waitEnv(t, httpEndpoint(t, tn), "first")
	first := tenantContainers(t, cli, id)
	if len(first) != 1 {
		t.Fatalf("after create the tenant has %d containers, want 1", len(first))
	}

	// Replace the env: the container is replaced and serves the new value.
	replaced, err := tenants.Replace(ctx, id, llclient.ReplaceTenantRequest{ComputeConfig: echoConfig(images[0], "second")}, llclient.UpdateOptions{})
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	tn, err = tenants.Wait(ctx, id, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < replaced.Generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil)
	if err != nil {
		t.Fatalf("wait ready at generation %d: %v", replaced.Generation, err)
	}
	waitEnv(t, httpEndpoint(t, tn), "second")
	second := tenantContainers(t, cli, id)
	if len(second) != 1 || second[0] == first[0] {
		t.Fatalf("after replace the containers are %v, want one new container (was %v)", second, first)
	}

	// Remove the container behind landlord's back: the resync repairs it.
	if _, err := cli.ContainerRemove(ctx, second[0], client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatalf("docker rm -f: %v", err)
	}
	waitServe(ctx, t, "the controller to repair the removed container", func() (bool, string) {
		ids := tenantContainers(t, cli, id)
		if len(ids) != 1 || slices.Contains(second, ids[0]) {
			return false, fmt.Sprintf("containers %v", ids)
		}
		tn, err := tenants.Get(ctx, id, llclient.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if tn.Status != llclient.StatusReady {
			return false, "tenant " + tn.Status
		}
		repaired, last := false, "no endpoint for port 8080"
		for _, e := range tn.Endpoints {
			if e.ContainerPort != 8080 {
				continue
			}
			pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
			env, err := getEnv(pctx, e.Address)
			pcancel()
			repaired = err == nil && env["GREETING"] == "second"
			last = fmt.Sprintf("GET http://%s/env: env %v, error %v", e.Address, env, err)
		}
		return repaired, last
	})

	// Delete: no container or network with the tenant's label remains.
	if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := tenants.Wait(ctx, id, llclient.UntilDeleted, nil); err != nil {
		t.Fatalf("wait deleted: %v", err)
	}
	if cs, ns := tenantContainers(t, cli, id), tenantNetworks(t, cli, id); len(cs) != 0 || len(ns) != 0 {
		t.Errorf("after delete %d containers and %d networks with the tenant's label remain", len(cs), len(ns))
	}
}
