package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ensureNetwork makes sure the plan's network exists and returns its id and
// whether this call created it.
//
// The Engine accepts several networks of one name, and two landlord
// processes on one Engine may both create a network at once. Everyone
// converges on the same one: after creating, ensureNetwork lists the
// networks of that name and keeps the oldest (ties broken by the lowest id);
// a duplicate it created itself is removed, and containers are attached to
// the winner by id, since the name is then ambiguous.
func (p *Provider) ensureNetwork(ctx context.Context, pl *plan) (id string, created bool, err error) {
	if pl.network == "" {
		return "", false, nil
	}
	if !pl.ownNetwork {
		// Within this process one look-then-create at a time.
		defer p.lock("network:" + pl.network)()
	}
	// A subnet of the address pool that another process is taking (its
	// network not listed yet) is refused by the Engine: look again, since
	// that process may be creating this very network, and pick among other
	// subnets.
	var refused []netip.Prefix
	for attempt := 1; ; attempt++ {
		id, created, err = p.ensureNetworkOnce(ctx, pl, &refused)
		if !errors.Is(err, errPoolTaken) || attempt == maxSubnetAttempts {
			return id, created, err
		}
	}
}

// maxSubnetAttempts bounds how many subnets a network create tries when
// other processes take them first.
const maxSubnetAttempts = 8

// ensureNetworkOnce is one look-then-create; a subnet the Engine refuses
// is added to refused, and not picked again.
func (p *Provider) ensureNetworkOnce(ctx context.Context, pl *plan, refused *[]netip.Prefix) (id string, created bool, err error) {
	var nets, all []network.Summary
	if p.settings.AddressPool == nil {
		nets, err = p.networksNamed(ctx, pl.network)
	} else {
		// Within this process one look-pick-create at a time, so that two
		// tenants' networks do not pick the same subnet; one listing of
		// every network finds both the network and the subnets in use.
		defer p.lock("address-pool")()
		if all, err = p.listNetworks(ctx); err == nil {
			nets = named(all, pl.network)
		}
	}
	if err != nil {
		return "", false, err
	}
	if len(nets) > 0 {
		winner := oldestNetwork(nets)
		p.removeDuplicateNetworks(ctx, pl, nets, winner.ID)
		return winner.ID, false, nil
	}
	opts := client.NetworkCreateOptions{Driver: p.settings.NetworkDriver, Labels: map[string]string{pl.n.label(labelManagedBy): managedBy}}
	if pl.ownNetwork {
		opts.Labels = pl.n.labels(pl.spec.Generation)
	}
	if p.settings.AddressPool != nil {
		subnet, err := p.pickSubnet(all, *refused)
		if err != nil {
			return "", false, err
		}
		withSubnet(&opts, subnet)
	}
	res, err := p.client.NetworkCreate(ctx, pl.network, opts)
	if err != nil {
		switch {
		case p.settings.AddressPool != nil && isPoolOverlap(err):
			subnet := opts.IPAM.Config[0].Subnet
			*refused = append(*refused, subnet)
			return "", false, fmt.Errorf("create network %s on %s: %w: %w", pl.network, subnet, errPoolTaken, err)
		case isNotFound(err) && strings.Contains(err.Error(), "address pool"):
			// Every address pool is in use (the Engine answers 404 for
			// that too): networks that are removed free them, so retry.
			return "", false, poolError(pl.network, err)
		case isNotFound(err):
			// The Engine has no such driver: retrying cannot help until the
			// operator changes network_driver or installs the driver's plugin.
			return "", false, provider.Terminal(fmt.Errorf("create network %s: the Engine has no network driver %q; set network_driver to one it has, such as bridge: %w", pl.network, opts.Driver, err))
		}
		return "", false, fmt.Errorf("create network %s with driver %s: %w", pl.network, opts.Driver, err)
	}
	nets, err = p.networksNamed(ctx, pl.network)
	if err != nil {
		return res.ID, true, err
	}
	winner := oldestNetwork(nets)
	if winner.ID == "" || winner.ID == res.ID {
		return res.ID, true, nil
	}
	// Another process created one too, and theirs is older: use it; ours,
	// which nothing uses yet, goes with the other duplicates (listed or not).
	if !slices.ContainsFunc(nets, func(n network.Summary) bool { return n.ID == res.ID }) {
		nets = append(nets, network.Summary{Network: network.Network{ID: res.ID, Labels: opts.Labels}})
	}
	p.removeDuplicateNetworks(ctx, pl, nets, winner.ID)
	return winner.ID, false, nil
}

// removeDuplicateNetworks removes, best effort, the networks landlord made
// that share the winner's name but lost: left by two processes that each
// saw only their own network when they created it. One still in use is
// kept; its containers move to the winner when next converged (see
// run.apply) and a later call removes it.
func (p *Provider) removeDuplicateNetworks(ctx context.Context, pl *plan, nets []network.Summary, winnerID string) {
	for _, n := range nets {
		if n.ID == winnerID || n.Labels[pl.n.label(labelManagedBy)] != managedBy {
			continue
		}
		log := p.log(pl.spec.TenantID).With(slog.String("network", pl.network), slog.String("id", n.ID))
		switch _, err := p.client.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); {
		case err == nil:
			log.Info("docker removed a duplicate network", slog.String("kept", winnerID))
		case !isNotFound(err):
			log.Warn("docker could not remove a duplicate network; a later converge retries", slog.String("error", err.Error()))
		}
	}
}

// onNetwork reports whether a container is attached to the network with id
// netID; true when the plan has no network of its own to check.
func onNetwork(c container.Summary, netID string) bool {
	if netID == "" || c.NetworkSettings == nil {
		return true
	}
	for _, ep := range c.NetworkSettings.Networks {
		if ep != nil && ep.NetworkID == netID {
			return true
		}
	}
	return false
}

// networksNamed lists the networks named exactly name.
func (p *Provider) networksNamed(ctx context.Context, name string) ([]network.Summary, error) {
	res, err := p.client.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", name)})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	return named(res.Items, name), nil // the filter matches substrings
}

// listNetworks lists every network on the Engine.
func (p *Provider) listNetworks(ctx context.Context) ([]network.Summary, error) {
	res, err := p.client.NetworkList(ctx, client.NetworkListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	return res.Items, nil
}

// named is the networks of nets named exactly name.
func named(nets []network.Summary, name string) []network.Summary {
	var out []network.Summary
	for _, n := range nets {
		if n.Name == name {
			out = append(out, n)
		}
	}
	return out
}

// oldestNetwork is the network every process keeps among several of one
// name: the oldest, ties broken by the lowest id.
func oldestNetwork(nets []network.Summary) network.Summary {
	var best network.Summary
	for i, n := range nets {
		if i == 0 || n.Created.Before(best.Created) || (n.Created.Equal(best.Created) && strings.Compare(n.ID, best.ID) < 0) {
			best = n
		}
	}
	return best
}

// removeNetworks removes the tenant's own networks, found by label.
func (p *Provider) removeNetworks(ctx context.Context, n naming) error {
	nets, err := p.tenantNetworks(ctx, n)
	if err != nil {
		return err
	}
	return p.removeNetworkList(ctx, nets)
}

// tenantNetworks lists the tenant's own networks, found by label.
func (p *Provider) tenantNetworks(ctx context.Context, n naming) ([]network.Summary, error) {
	res, err := p.client.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", n.tenantFilter())})
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	return res.Items, nil
}

func (p *Provider) removeNetworkList(ctx context.Context, nets []network.Summary) error {
	for _, nw := range nets {
		if _, err := p.client.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{}); err != nil && !isNotFound(err) {
			return fmt.Errorf("remove network %s: %w", nw.Name, err)
		}
	}
	return nil
}
