package mock

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Inspect compares the simulated workload with spec, container by
// container, as the real providers compare what their platforms run.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	st, err := p.GetStatus(ctx, spec.TenantID)
	if err != nil {
		return nil, err
	}
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	w, ok := p.pl.workloads[spec.TenantID]
	if !ok {
		return nil, fmt.Errorf("mock: inspect tenant %s: %w", spec.TenantID, provider.ErrTenantNotFound)
	}
	var found provider.DriftCollector
	found.CompareContainers(spec, w.spec.Containers, w.spec.Secrets)
	for _, c := range w.containers {
		if c.State != provider.ContainerRunning {
			found.Compare("containers/"+c.Name+"/state", provider.DriftState, string(provider.ContainerRunning), string(c.State))
		}
	}
	return &provider.Inspection{Status: st, Drift: found.Drift()}, nil
}

// Tamper changes the tenant's running workload behind landlord's back, as
// an operator with the platform's own tools would: change edits a copy of
// what runs, which then runs instead. It returns ErrTenantNotFound when
// the tenant has no workload.
func (p *Provider) Tamper(tenantID string, change func(w *workload.Workload)) error {
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	w, ok := p.pl.workloads[tenantID]
	if !ok {
		return fmt.Errorf("mock: tamper with tenant %s: %w", tenantID, provider.ErrTenantNotFound)
	}
	p.alter(w, change)
	p.logger.Info("mock workload changed behind landlord's back", slog.String("tenant_id", tenantID))
	return nil
}

// Fight tampers with the tenant's workload as Tamper does, and goes on
// doing it after every Provision and Update, as another controller that
// owns the same field would: a drift no repair can cure.
func (p *Provider) Fight(tenantID string, change func(w *workload.Workload)) error {
	if err := p.Tamper(tenantID, change); err != nil {
		return err
	}
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	p.pl.fights[tenantID] = change
	return nil
}

// alter makes w run what change makes of what it runs; p.pl.mu is held.
func (p *Provider) alter(w *simulated, change func(w *workload.Workload)) {
	live := w.spec.Clone()
	change(&live.Workload)
	w.spec = live
	w.hash = "" // what runs is no spec landlord applied
	for i := range w.containers {
		for _, c := range live.Containers {
			if c.Name == w.containers[i].Name {
				w.containers[i].Image = c.Image
			}
		}
	}
	w.updated = p.now()
}

var _ provider.DriftDetector = (*Provider)(nil)
