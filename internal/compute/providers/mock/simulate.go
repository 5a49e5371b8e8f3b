package mock

import (
	"fmt"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// Calls returns how many times op was called for the tenant.
func (p *Provider) Calls(tenantID string, op Operation) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[call{tenantID, op}]
}

// Workloads returns how many tenant workloads exist.
func (p *Provider) Workloads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.workloads)
}

// Crash simulates a container of the tenant exiting with exitCode behind
// landlord's back. It returns ErrTenantNotFound when there is no such
// container.
func (p *Provider) Crash(tenantID, container string, exitCode int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.workloads[tenantID]; ok {
		for i := range w.containers {
			c := &w.containers[i]
			if c.Name == container {
				c.State = compute.ContainerExited
				c.ExitCode = &exitCode
				c.Message = fmt.Sprintf("exited with code %d", exitCode)
				if c.Health != compute.HealthUnknown {
					c.Health = compute.HealthUnhealthy
				}
				w.updated = p.now()
				return nil
			}
		}
	}
	return fmt.Errorf("mock: crash %s of tenant %s: %w", container, tenantID, compute.ErrTenantNotFound)
}

// Remove deletes the tenant's workload behind landlord's back, as an
// operator removing containers by hand would.
func (p *Provider) Remove(tenantID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.workloads, tenantID)
}
