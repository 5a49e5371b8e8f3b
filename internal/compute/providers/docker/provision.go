package docker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Provision creates the tenant's containers and network, or converges the
// ones that exist (found by label) to spec. A matching, running workload is
// left alone.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	defer p.lock(spec.TenantID)()
	log := p.log(spec.TenantID)
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, provider.ErrProvisionFailed, spec.TenantID, "provision", err)
	}
	pl := p.plan(spec)
	ex, err := p.find(ctx, pl.n)
	if err != nil {
		return nil, fail(ctx, provider.ErrProvisionFailed, spec.TenantID, "find containers", err)
	}
	r, err := p.converge(ctx, pl, ex, provider.ErrProvisionFailed)
	if err != nil {
		log.Warn("docker provision failed", slog.String("error", err.Error()))
		return nil, err
	}
	message := "created"
	switch {
	case !ex.empty() && len(r.changes) == 0:
		message = "already provisioned"
	case !ex.empty():
		message = fmt.Sprintf("adopted the existing workload and applied %d changes", len(r.changes))
	}
	log.Info("docker provision", slog.String("result", message), slog.Int64("generation", spec.Generation))
	res := &provider.ProvisionResult{
		TenantID:      spec.TenantID,
		ProviderType:  Name,
		Status:        provider.ProvisionStatusSuccess,
		ResourceIDs:   r.ids,
		Message:       message,
		ProvisionedAt: p.now(),
	}
	if st, err := r.status(ctx); err == nil {
		res.Endpoints = st.Endpoints
	}
	return res, nil
}

// Update converges the tenant's existing containers to spec, recreating only
// those whose configuration changed.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	if spec.TenantID != tenantID {
		return nil, provider.Invalid("/tenant_id", "spec is for tenant %q, not %q", spec.TenantID, tenantID)
	}
	defer p.lock(tenantID)()
	log := p.log(tenantID)
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, provider.ErrUpdateFailed, tenantID, "update", err)
	}
	pl := p.plan(spec)
	ex, err := p.find(ctx, pl.n)
	if err != nil {
		return nil, fail(ctx, provider.ErrUpdateFailed, tenantID, "find containers", err)
	}
	if ex.empty() {
		return nil, fmt.Errorf("docker: update tenant %s: %w", tenantID, provider.ErrTenantNotFound)
	}
	r, err := p.converge(ctx, pl, ex, provider.ErrUpdateFailed)
	if err != nil {
		log.Warn("docker update failed", slog.String("error", err.Error()))
		return nil, err
	}
	log.Info("docker update", slog.Int("changes", len(r.changes)), slog.Int64("generation", spec.Generation))
	res := &provider.UpdateResult{
		TenantID:     tenantID,
		ProviderType: Name,
		Status:       provider.ProvisionStatusSuccess,
		Changes:      r.changes,
		ResourceIDs:  r.ids,
		UpdatedAt:    p.now(),
	}
	if st, err := r.status(ctx); err == nil {
		res.Endpoints = st.Endpoints
	}
	return res, nil
}
