package docker

import (
	"context"
	"fmt"
	"strings"

	"github.com/moby/moby/api/types/container"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Inspect compares the tenant's containers and network, found by label and
// inspected live, with what Provision would create for spec: each
// container's image, command, arguments, environment and secrets (compared
// by value, reported redacted), port bindings, resources, health check,
// restart policy, privileged mode, bind mounts, the labels the provider
// finds it by, its attachment to the tenant's network and to no other, and
// its state; the tenant's network; and containers the spec does not have.
// It changes nothing. It returns an error wrapping ErrTenantNotFound when
// the tenant has no container.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	// Within this process, an Inspect waits for a Provision or Update of the
	// tenant to finish rather than report its half-done replacement.
	defer p.lock(spec.TenantID)()
	pl := p.plan(spec)
	ex, err := p.find(ctx, pl.n)
	if err != nil {
		return nil, fail(ctx, nil, spec.TenantID, "inspect: find containers", err)
	}
	if len(ex.current) == 0 {
		return nil, fmt.Errorf("docker: inspect tenant %s: %w", spec.TenantID, provider.ErrTenantNotFound)
	}
	var col provider.DriftCollector
	netID, err := p.liveNetwork(ctx, pl, &col)
	if err != nil {
		return nil, fail(ctx, nil, spec.TenantID, "inspect: network", err)
	}
	ids := make(map[string]string, len(ex.current))
	for name, c := range ex.current {
		ids[name] = c.ID
	}
	inspected, err := p.inspectContainers(ctx, pl.n, ids)
	if err != nil {
		return nil, err
	}
	st, err := p.statusOf(ctx, pl.n, inspected)
	if err != nil {
		return nil, err
	}
	wanted := map[string]bool{}
	for _, d := range pl.containers {
		wanted[d.spec.Name] = true
		c, ok := inspected[d.spec.Name]
		if !ok {
			col.Missing("containers/"+d.spec.Name, d.spec.Image)
			continue
		}
		img, err := p.imageDefaults(ctx, c.Image)
		if err != nil {
			return nil, fail(ctx, nil, spec.TenantID, "inspect: container "+d.spec.Name, err)
		}
		pl.compareContainer(&col, d, live{c: c, image: img}, netID, true)
	}
	// What the spec does not have, which converge removes: a container
	// taken out of the spec, or one left aside by an interrupted
	// replacement.
	for name, c := range ex.current {
		if !wanted[name] {
			col.Add(provider.Drift{Path: "containers/" + name, Kind: provider.DriftScale, Found: string(c.State)})
		}
	}
	for _, c := range ex.stale {
		col.Add(provider.Drift{Path: "containers/" + dockerName(c), Kind: provider.DriftScale, Found: string(c.State)})
	}
	return &provider.Inspection{Status: st, Drift: col.Drift()}, nil
}

// liveNetwork returns the id of the network the plan's containers join, the
// one ensureNetwork would keep, recording its absence in col; "" with host
// networking or when it is missing.
func (p *Provider) liveNetwork(ctx context.Context, pl *plan, col *provider.DriftCollector) (string, error) {
	if pl.network == "" {
		return "", nil
	}
	nets, err := p.networksNamed(ctx, pl.network)
	if err != nil {
		return "", err
	}
	if len(nets) == 0 {
		col.Missing("network", pl.network)
		return "", nil
	}
	return oldestNetwork(nets).ID, nil
}

// dockerName is a listed container's name, without the leading slash.
func dockerName(c container.Summary) string {
	if len(c.Names) == 0 {
		return c.ID
	}
	return strings.TrimPrefix(c.Names[0], "/")
}
