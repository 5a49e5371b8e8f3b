package nomad_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestCrashWhileProvisioning kills `landlord serve` with SIGKILL while it
// registers tenants' jobs (a proxy slows each register down, so that some
// tenants have their job and some not yet), starts it again on the same
// database, and checks that every tenant ends ready with exactly one job,
// and that delete leaves nothing.
func TestCrashWhileProvisioning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	a, images := start(t)
	proxy := newAPIProxy(t, a.Address)
	proxy.slowRegisters(300 * time.Millisecond)
	l := startServe(t, proxy.URL, "workers: 2", "lease_ttl: 2s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()

	const n = 8
	ids := make([]string, n)
	for i := range n {
		ids[i] = servetest.CreateTenant(ctx, t, tenants, fmt.Sprintf("crash-%02d", i), appConfig(images[i%2], strconv.Itoa(i), "")).ID
	}
	if t.Failed() {
		t.FailNow()
	}
	poll.Until(t, "some tenants' jobs registered", time.Minute, func() (bool, string) {
		jobs := landlordJobs(t, a)
		if len(jobs) == n {
			t.Fatal("every tenant's job was registered before landlord serve could be killed")
		}
		if len(jobs) > 0 {
			t.Logf("killing landlord serve with %d of %d tenants' jobs registered", len(jobs), n)
			return true, ""
		}
		return false, "no job registered"
	})
	l.Kill()
	proxy.slowRegisters(0)
	l.Start()
	waitAllTenants(ctx, t, tenants, ids, llclient.UntilReady)
	for i, id := range ids {
		jobID := fmt.Sprintf("landlord-crash-%02d", i)
		if got := countJobs(t, a, id); got != 1 {
			t.Errorf("tenant %d has %d jobs after the crash, want 1", i, got)
		}
		if got := len(a.Containers(t, jobID)); got != 1 {
			t.Errorf("tenant %d has %d containers after the crash, want 1", i, got)
		}
	}
	for _, id := range ids {
		if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
	waitAllTenants(ctx, t, tenants, ids, llclient.UntilDeleted)
	for i, id := range ids {
		if got := countResources(t, a, id, fmt.Sprintf("landlord-crash-%02d", i)); got != 0 {
			t.Errorf("tenant %d has %d resources after delete", i, got)
		}
	}
}

// landlordJobs lists the jobs landlord made, by their meta.
func landlordJobs(t testing.TB, a *nomadtest.Agent) []*api.JobListStub {
	t.Helper()
	q := &api.QueryOptions{Filter: `Meta.landlord_managed_by == "landlord"`}
	jobs, _, err := a.Client.Jobs().ListOptions(&api.JobListOptions{Fields: &api.JobListFields{Meta: true}}, q)
	if err != nil {
		t.Fatalf("list jobs: %v", err)
	}
	return jobs
}

// countJobs counts the jobs with the tenant's id in their meta.
func countJobs(t testing.TB, a *nomadtest.Agent, tenantID string) int {
	t.Helper()
	n := 0
	for _, j := range landlordJobs(t, a) {
		if j.Meta["landlord_tenant_id"] == tenantID {
			n++
		}
	}
	return n
}

// waitAllTenants waits until done holds for every tenant.
func waitAllTenants(ctx context.Context, t *testing.T, tenants *llclient.Tenants, ids []string, done func(llclient.Tenant) (bool, error)) {
	t.Helper()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			// A deleted tenant may already read as not found.
			if _, err := tenants.Wait(ctx, id, done, nil); err != nil && !llclient.IsNotFound(err) {
				t.Errorf("tenant %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
