package docker

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"
)

// ensureNetwork creates the plan's network when it is missing and reports
// whether this call created it.
func (p *Provider) ensureNetwork(ctx context.Context, pl *plan) (created bool, err error) {
	if pl.network == "" {
		return false, nil
	}
	if !pl.ownNetwork {
		// A network shared by tenants: Docker allows two networks of one
		// name, so the look-then-create must not race within this process.
		defer p.lock("network:" + pl.network)()
	}
	res, err := p.client.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", pl.network)})
	if err != nil {
		return false, fmt.Errorf("list networks: %w", err)
	}
	for _, n := range res.Items {
		if n.Name == pl.network { // the filter matches substrings
			return false, nil
		}
	}
	opts := client.NetworkCreateOptions{Driver: "bridge"}
	if pl.ownNetwork {
		opts.Labels = pl.n.labels(pl.spec.Generation)
	}
	if _, err := p.client.NetworkCreate(ctx, pl.network, opts); err != nil {
		return false, fmt.Errorf("create network %s: %w", pl.network, err)
	}
	return true, nil
}

// removeNetworks removes the tenant's own networks, found by label.
func (p *Provider) removeNetworks(ctx context.Context, n naming) error {
	res, err := p.client.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", n.tenantFilter())})
	if err != nil {
		return fmt.Errorf("list networks: %w", err)
	}
	for _, nw := range res.Items {
		if _, err := p.client.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
			return fmt.Errorf("remove network %s: %w", nw.Name, err)
		}
	}
	return nil
}
