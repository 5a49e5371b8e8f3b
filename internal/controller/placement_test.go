package controller_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// createPlaced stores a tenant of the named placements on the mock, each
// with config.
func (e *env) createPlaced(t testing.TB, name, config string, placements ...string) *tenant.Tenant {
	t.Helper()
	in := &tenant.Tenant{Name: name}
	for _, p := range placements {
		in.Placements = append(in.Placements, tenant.Placement{Name: p, Provider: mock.Name, ComputeConfig: json.RawMessage(config)})
	}
	out, err := e.store.Create(ctx, in, "test")
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return out
}

// placementStatuses is each placement's status, by name.
func placementStatuses(t *tenant.Tenant) string {
	var out []string
	for _, p := range t.Placements {
		out = append(out, fmt.Sprintf("%s=%s", p.Name, p.Status))
	}
	return strings.Join(out, " ")
}

// TestPlacementsLifecycle: a tenant of two placements reaches ready when
// both run, each with its own workload and endpoints; a placement left
// out of a change is destroyed and goes; deleting the tenant destroys the
// rest.
func TestPlacementsLifecycle(t *testing.T) {
	for _, st := range []struct {
		name string
		open func(testing.TB) tenant.Store
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}} {
		t.Run(st.name, func(t *testing.T) {
			e := newEnv(t, st.open(t), ``)
			opts := fast()
			opts.Resync = 50 * time.Millisecond // the mock tells of no change: a resync finds drift
			drift := &placementDrift{}
			opts.Observer = drift
			e.run(t, opts)
			tn := e.createPlaced(t, "acme", appConfig, "web", "worker")
			e.waitStatus(t, 30*time.Second, tenant.StatusReady, tn.ID)

			got := e.get(t, tn.ID)
			if got.Simple() || len(got.Placements) != 2 {
				t.Fatalf("placements %+v", got.Placements)
			}
			seen := map[string]bool{}
			for _, p := range got.Placements {
				if p.Status != tenant.StatusReady || p.ObservedGeneration != got.Generation || len(p.Endpoints) == 0 {
					t.Errorf("placement %s: %s at %d/%d, endpoints %v", p.Name, p.Status, p.ObservedGeneration, got.Generation, p.Endpoints)
				}
				if p.WorkloadID == tn.ID || seen[p.WorkloadID] {
					t.Errorf("placement %s has workload %s, not one of its own", p.Name, p.WorkloadID)
				}
				seen[p.WorkloadID] = true
				if p.ResourceIDs["workload"] != "mock-"+p.WorkloadID {
					t.Errorf("placement %s records %v", p.Name, p.ResourceIDs)
				}
				if n := e.mock.Calls(p.WorkloadID, mock.OpProvision); n != 1 {
					t.Errorf("placement %s: %d provisions", p.Name, n)
				}
			}
			if len(got.Endpoints) != len(got.Placements[0].Endpoints)+len(got.Placements[1].Endpoints) {
				t.Errorf("the tenant's endpoints %v are not every placement's", got.Endpoints)
			}
			if e.mock.Workloads() != 2 {
				t.Errorf("%d workloads, want 2", e.mock.Workloads())
			}
			var placed []string
			for _, ev := range e.events(t, tn.ID, tenant.EventStatus) {
				placed = append(placed, fmt.Sprintf("%s:%s", ev.Placement, ev.To))
			}
			if joined := strings.Join(placed, " "); !strings.Contains(joined, "web:ready") || !strings.Contains(joined, "worker:ready") || !strings.HasSuffix(joined, ":ready") {
				t.Errorf("status events %s: want each placement's and the tenant's", joined)
			}

			// worker out, web changed.
			worker := got.Placement("worker").WorkloadID
			next, err := e.store.UpdateDesired(ctx, tn.ID, tenant.DesiredChange{Version: got.Version, Actor: "test",
				Placements: []tenant.PlacementSpec{{Name: "web", Provider: mock.Name, ComputeConfig: json.RawMessage(`{"image":"example.com/app:2","ports":[{"container_port":8080}]}`)}}})
			if err != nil {
				t.Fatal(err)
			}
			poll.Until(t, "worker removed and web updated", 30*time.Second, func() (bool, string) {
				got := e.get(t, tn.ID)
				return got.Status == tenant.StatusReady && got.ObservedGeneration == next.Generation && len(got.Placements) == 1,
					fmt.Sprintf("%s at %d/%d: %s", got.Status, got.ObservedGeneration, got.Generation, placementStatuses(got))
			})
			if n := e.mock.Calls(worker, mock.OpDestroy); n != 1 {
				t.Errorf("the removed placement's workload: %d destroys", n)
			}
			if e.mock.Workloads() != 1 {
				t.Errorf("%d workloads after the removal, want 1", e.mock.Workloads())
			}

			// A hand change of a placement's workload is put back.
			web := e.get(t, tn.ID).Placement("web").WorkloadID
			if err := e.mock.Tamper(web, func(w *workload.Workload) { w.Containers[0].Image = "evil:1" }); err != nil {
				t.Fatal(err)
			}
			poll.Until(t, "the placement's drift repaired", 30*time.Second, func() (bool, string) {
				p := e.get(t, tn.ID).Placement("web")
				return p.Drift != nil && p.Drift.ResolvedAt != nil, fmt.Sprintf("drift %+v", p.Drift)
			})
			if n := drift.count("web/mock/" + string(provider.DriftImage)); n == 0 {
				t.Errorf("the drift of placement web was not counted as web's: %v", drift.snapshot())
			}

			cur := e.get(t, tn.ID)
			if _, err := e.store.RequestDeletion(ctx, tn.ID, cur.Version, "test"); err != nil {
				t.Fatal(err)
			}
			e.waitStatus(t, 30*time.Second, tenant.StatusDeleted, tn.ID)
			if e.mock.Workloads() != 0 {
				t.Errorf("%d workloads after the deletion", e.mock.Workloads())
			}
		})
	}
}

// TestPlacementFailureIsTheTenants: a placement that fails fails the
// tenant, while the other placement runs.
func TestPlacementFailureIsTheTenants(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	e.run(t, fast())
	in := &tenant.Tenant{Name: "half", Placements: []tenant.Placement{
		{Name: "web", Provider: mock.Name, ComputeConfig: json.RawMessage(appConfig)},
		{Name: "worker", Provider: mock.Name, ComputeConfig: json.RawMessage(`{"image":"a","x-mock":{"fail":"terminal"}}`)},
	}}
	tn, err := e.store.Create(ctx, in, "test")
	if err != nil {
		t.Fatal(err)
	}
	e.waitStatus(t, 30*time.Second, tenant.StatusFailed, tn.ID)
	got := e.get(t, tn.ID)
	if web, worker := got.Placement("web"), got.Placement("worker"); worker.Status != tenant.StatusFailed || !strings.HasPrefix(got.StatusMessage, "worker: ") {
		t.Errorf("web %s, worker %s; tenant message %q", web.Status, worker.Status, got.StatusMessage)
	}
	poll.Until(t, "web ready beside the failed worker", 30*time.Second, func() (bool, string) {
		p := e.get(t, tn.ID).Placement("web")
		return p.Status == tenant.StatusReady, string(p.Status)
	})
}

// placementDrift counts drift by placement, provider and kind, as the
// metrics do.
type placementDrift struct {
	mu    sync.Mutex
	kinds map[string]int
}

func (p *placementDrift) ObserveReconcile(string, time.Duration) {}

func (p *placementDrift) ObservePlacementDrift(placement, prov string, kind provider.DriftKind) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kinds == nil {
		p.kinds = map[string]int{}
	}
	p.kinds[placement+"/"+prov+"/"+string(kind)]++
}

func (p *placementDrift) count(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kinds[key]
}

func (p *placementDrift) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.kinds)
}
