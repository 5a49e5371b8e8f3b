package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// results counts reconciles by result.
type results struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *results) ObserveReconcile(result string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[result]++
}

func (r *results) count(result string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[result]
}

// total counts the reconciles of every result.
func (r *results) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.n {
		n += c
	}
	return n
}

// Tenants of a provider that is not enabled (landlord restarted with
// another) are left as they are, each with a message that says so and what
// to do: nothing is attempted or failed, nothing is retried in a loop, and
// the message goes once the provider is back.
func TestProviderNotEnabled(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	// Tenants of the mock provider in every state the controller acts on.
	requested := e.create(t, "requested", appConfig, nil)
	ready := e.create(t, "ready", appConfig, nil)
	ready = mustObserve(t, e, ready, tenant.Observation{Status: tenant.StatusProvisioning})
	ready = mustObserve(t, e, ready, tenant.Observation{Status: tenant.StatusReady, Settles: true})
	deleting, err := e.store.RequestDeletion(ctx, e.create(t, "deleting", appConfig, nil).ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}

	// A landlord whose only provider is another one: an empty registry.
	mockManager := e.manager
	other, err := compute.NewManager(compute.NewRegistry(), compute.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.manager = other
	var seen results
	opts := fast()
	opts.Resync = 20 * time.Millisecond // a drift check for the ready tenant every 20ms
	opts.Sweep = 20 * time.Millisecond
	opts.Observer = &seen
	stop := e.run(t, opts)
	waitMessage(t, e, requested.ID, "compute provider mock is not enabled on this server: the tenant is left as it is")
	waitMessage(t, e, ready.ID, "compute provider mock is not enabled on this server")
	waitMessage(t, e, deleting.ID, "the deletion waits: compute provider mock is not enabled")
	// Resyncs and sweeps come back to the tenants every 20 ms: let them
	// reconcile them 30 times more, however slow the machine.
	base := seen.total()
	poll.Until(t, "30 reconciles", 30*time.Second, func() (bool, string) {
		n := seen.total() - base
		return n >= 30, fmt.Sprintf("%d reconciles", n)
	})
	stop()
	for id, want := range map[string]tenant.Status{requested.ID: tenant.StatusRequested, ready.ID: tenant.StatusReady, deleting.ID: tenant.StatusDeleting} {
		got := e.get(t, id)
		if got.Status != want || got.Attempts != 0 || !strings.Contains(got.StatusMessage, "landlord delete "+got.Name+" --forget") {
			t.Errorf("%s: %s (attempts %d) %q; want it left %s, saying how to forget it", got.Name, got.Status, got.Attempts, got.StatusMessage, want)
		}
		if evs := e.events(t, id, tenant.EventAttempt); len(evs) != 0 {
			t.Errorf("%s: %d failed attempts recorded, want none: %v", got.Name, len(evs), evs)
		}
	}
	if n := seen.count("error"); n != 0 {
		t.Errorf("%d reconciles ended in an error (retried with backoff); want none", n)
	}

	// The provider is back: the ready tenant's message goes at its next
	// drift check.
	e.manager = mockManager
	opts = fast()
	opts.Resync = 20 * time.Millisecond
	e.run(t, opts)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, requested.ID)
	e.waitStatus(t, 30*time.Second, tenant.StatusDeleted, deleting.ID)
	waitMessage(t, e, ready.ID, "")
}

func mustObserve(t *testing.T, e *env, cur *tenant.Tenant, obs tenant.Observation) *tenant.Tenant {
	t.Helper()
	obs.Generation = cur.Generation
	out, err := e.store.UpdateObserved(ctx, cur.ID, obs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitMessage waits until the tenant's status message starts with prefix,
// or is empty when prefix is.
func waitMessage(t *testing.T, e *env, id, prefix string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("a message starting %q", prefix), 30*time.Second, func() (bool, string) {
		got := e.get(t, id)
		return strings.HasPrefix(got.StatusMessage, prefix) && (prefix != "" || got.StatusMessage == ""), fmt.Sprintf("%s: message %q", got.Name, got.StatusMessage)
	})
}

// away is the mock as a provider plugin that is being restarted: while
// down, every Provision fails with ErrProviderUnavailable.
type away struct {
	*mock.Provider
	down  atomic.Bool
	tries atomic.Int32
}

func (a *away) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if a.down.Load() {
		a.tries.Add(1)
		return nil, provider.Retryable(fmt.Errorf("plugin mock: Provision: %w: the plugin's process is being restarted", provider.ErrProviderUnavailable))
	}
	return a.Provider.Provision(ctx, spec)
}

// A provider that cannot be reached (a plugin being restarted) is waited
// for: its tenants' attempts do not count toward failed, however many
// MaxRetries allows, the tenant says what it waits for, and it goes on
// once the provider is back.
func TestUnavailableProviderIsWaitedFor(t *testing.T) {
	e := newEnv(t, openSQLite(t), ``)
	a := &away{Provider: e.mock}
	a.down.Store(true)
	e.manager = computetest.Manager(t, a, compute.ManagerOptions{})
	tn := e.create(t, "acme", appConfig, nil)
	opts := fast()
	opts.MaxRetries = 2
	e.run(t, opts)
	poll.Until(t, "ten attempts at a provider that is away", 30*time.Second, func() (bool, string) {
		return a.tries.Load() >= 10, fmt.Sprint(a.tries.Load())
	})
	got := e.get(t, tn.ID)
	if got.Status == tenant.StatusFailed || got.Attempts != 0 {
		t.Fatalf("after %d calls to a provider that is away, the tenant is %s after %d attempts (%s); want it waiting, no attempt counted", a.tries.Load(), got.Status, got.Attempts, got.StatusMessage)
	}
	waitMessage(t, e, tn.ID, "provision waits: compute provider mock is unavailable")
	a.down.Store(false)
	poll.Until(t, "the tenant ready once the provider is back", 30*time.Second, func() (bool, string) {
		got := e.get(t, tn.ID)
		return got.Status == tenant.StatusReady, string(got.Status) + ": " + got.StatusMessage
	})
}
