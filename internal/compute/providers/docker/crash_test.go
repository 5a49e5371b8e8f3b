package docker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
)

// TestCrashWhileProvisioning kills `landlord serve` with SIGKILL while 20
// tenants are provisioning, starts it again on the same database, and checks
// that every tenant ends ready with exactly one container and that no
// managed container is left without a tenant.
func TestCrashWhileProvisioning(t *testing.T) {
	const n = 20
	cli, images, l, ctx := startServe(t)
	tenants := l.Client().Tenants()

	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tn, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: fmt.Sprintf("crash-%02d", i), ComputeConfig: echoConfig(images[0], fmt.Sprint(i))}, llclient.CreateOptions{})
			if err == nil {
				ids[i] = tn.ID
			}
			errs[i] = err
		})
	}
	// Kill once a few tenants are provisioning and containers are being
	// created, while some are not done yet.
	managed := client.Filters{}.Add("label", testPrefix+".managed-by=landlord")
	created := make(chan struct{})
	go func() { wg.Wait(); close(created) }()
	var busy int
	waitServe(ctx, t, "3 tenants provisioning and a managed container created", func() (bool, string) {
		select {
		case <-created:
			for i, err := range errs {
				if err != nil {
					t.Fatalf("create tenant %d: %v", i, err)
				}
			}
		default:
		}
		list, err := tenants.List(ctx, llclient.ListOptions{NamePrefix: "crash-", PageSize: 100})
		if err != nil {
			return false, err.Error()
		}
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: managed})
		if err != nil {
			return false, err.Error()
		}
		busy = 0
		for _, tn := range list.Tenants {
			if tn.Status == llclient.StatusProvisioning {
				busy++
			}
		}
		return busy >= 3 && len(cs.Items) > 0, fmt.Sprintf("%d tenants provisioning, %d managed containers", busy, len(cs.Items))
	})
	<-created
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create tenant %d: %v", i, err)
		}
	}
	l.Kill()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: managed})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed landlord serve with %d of %d tenants provisioning; %d containers existed", busy, n, len(list.Items))

	l.Start()
	// Without the crash all 20 are ready in about 5 s (longer on a loaded
	// two-core CI machine, where the Kubernetes control plane's tests run
	// beside these); a tenant whose container the killed process created
	// but never started is left pending by the controller, so wait well
	// short of the progress deadline (10 m).
	readyCtx, readyCancel := context.WithTimeout(ctx, 90*time.Second)
	defer readyCancel()
	var wait sync.WaitGroup
	for i, id := range ids {
		wait.Go(func() {
			if _, err := tenants.Wait(readyCtx, id, llclient.UntilReady, nil); err != nil {
				t.Errorf("tenant %d after the restart: %v", i, err)
			}
		})
	}
	wait.Wait()
	if t.Failed() {
		return
	}

	owned := map[string]bool{}
	for i, id := range ids {
		owned[id] = true
		if cs := tenantContainers(t, cli, id); len(cs) != 1 {
			t.Errorf("tenant %d has %d containers, want exactly 1", i, len(cs))
		}
	}
	all, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: managed})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all.Items {
		if !owned[c.Labels[testPrefix+".tenant_id"]] {
			t.Errorf("orphan container %s %v belongs to no tenant", c.ID[:12], c.Names)
		}
	}
	if len(all.Items) != n {
		t.Errorf("docker ps -a shows %d managed containers, want %d", len(all.Items), n)
	}

	// Delete everything through landlord; cleanupByLabel removes the rest
	// should this fail.
	for _, id := range ids {
		wait.Go(func() {
			if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
				t.Errorf("delete %s: %v", id, err)
				return
			}
			if _, err := tenants.Wait(ctx, id, llclient.UntilDeleted, nil); err != nil {
				t.Errorf("wait deleted %s: %v", id, err)
			}
		})
	}
	wait.Wait()
}
