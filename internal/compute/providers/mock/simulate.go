package mock

import (
	"fmt"
	"slices"
	"sync"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Platform is the memory the mock provisions into: its "Docker Engine".
// Providers made with the same Platform see the same workloads, as two
// landlord processes see the same platform, so tests can restart a provider
// and check that it adopts what exists.
type Platform struct {
	mu        sync.Mutex
	workloads map[string]*simulated
	calls     map[call]int
	failures  map[failure]int
	// listeners serve the endpoints of tenants that asked for "listen".
	listeners map[string]map[endpointKey]*listener
	// inflight counts operations running per tenant; overlaps counts the
	// operations that started while another one ran for the same tenant.
	inflight map[string]int
	overlaps int
	// fights are changes something else puts back at once, by tenant
	// (see Fight).
	fights map[string]func(*workload.Workload)
}

type call struct {
	tenantID string
	op       Operation
}

type failure struct {
	call
	behaviour string
}

// NewPlatform returns an empty platform.
func NewPlatform() *Platform {
	return &Platform{
		workloads: map[string]*simulated{},
		calls:     map[call]int{},
		failures:  map[failure]int{},
		listeners: map[string]map[endpointKey]*listener{},
		inflight:  map[string]int{},
		fights:    map[string]func(*workload.Workload){},
	}
}

// begin records that an operation on the tenant started; call the returned
// function when it ends.
func (pl *Platform) begin(tenantID string) (end func()) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.inflight[tenantID] > 0 {
		pl.overlaps++
	}
	pl.inflight[tenantID]++
	return func() {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if pl.inflight[tenantID]--; pl.inflight[tenantID] == 0 {
			delete(pl.inflight, tenantID)
		}
	}
}

// Overlaps returns how many operations started while another operation on
// the same tenant was running: 0 when every tenant is driven by one caller
// at a time, as the controller promises.
func (p *Provider) Overlaps() int {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	return p.pl.overlaps
}

// Calls returns how many times op was called for the tenant.
func (p *Provider) Calls(tenantID string, op Operation) int {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	return p.pl.calls[call{tenantID, op}]
}

// Workloads returns how many tenant workloads exist.
func (p *Provider) Workloads() int {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	return len(p.pl.workloads)
}

// Containers returns how many containers exist for the tenant, read from the
// platform, not through the provider's operations.
func (p *Provider) Containers(tenantID string) int {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	if w, ok := p.pl.workloads[tenantID]; ok {
		return len(w.containers)
	}
	return 0
}

// Crash simulates a container of the tenant exiting with exitCode behind
// landlord's back: its endpoints go (and its listeners close) until a
// Provision restarts it. It returns ErrTenantNotFound when there is no such
// container.
func (p *Provider) Crash(tenantID, container string, exitCode int) error {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	if w, ok := p.pl.workloads[tenantID]; ok {
		for i := range w.containers {
			c := &w.containers[i]
			if c.Name == container {
				c.State = provider.ContainerExited
				c.ExitCode = &exitCode
				c.Message = fmt.Sprintf("exited with code %d", exitCode)
				if c.Health != provider.HealthUnknown {
					c.Health = provider.HealthUnhealthy
				}
				w.endpoints = slices.DeleteFunc(w.endpoints, func(e provider.Endpoint) bool { return e.Container == container })
				p.pl.closeListeners(tenantID, container)
				w.updated = p.now()
				return nil
			}
		}
	}
	return fmt.Errorf("mock: crash %s of tenant %s: %w", container, tenantID, provider.ErrTenantNotFound)
}

// Remove deletes the tenant's workload behind landlord's back, as an
// operator removing containers by hand would.
func (p *Provider) Remove(tenantID string) {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	delete(p.pl.workloads, tenantID)
	p.pl.closeListeners(tenantID, "")
}
