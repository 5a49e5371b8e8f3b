package nomad

import (
	"context"
	"fmt"
	"slices"
)

// CheckHealth asks Nomad for its leader, and checks that the block's region
// and namespace exist: a typo there is a configuration error landlord
// reports at start-up, not a failure of every tenant.
func (p *Provider) CheckHealth(ctx context.Context) error {
	if p.settings.Region != "" {
		regions, err := p.client.Regions().List()
		if err != nil {
			return fmt.Errorf("nomad: %s does not answer: %w", p.settings.Address, apiError("list regions", err))
		}
		if !slices.Contains(regions, p.settings.Region) {
			return fmt.Errorf("nomad: region %q is not one of the cluster's (%v); fix region in the nomad block", p.settings.Region, regions)
		}
	}
	leader, err := p.client.Status().Leader()
	if err != nil {
		return fmt.Errorf("nomad: %s does not answer: %w", p.settings.Address, apiError("read the leader", err))
	}
	if leader == "" {
		return fmt.Errorf("nomad: %s has no leader", p.settings.Address)
	}
	if _, _, err := p.client.Namespaces().Info(p.settings.Namespace, query(ctx)); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("nomad: namespace %q does not exist; create it (nomad namespace apply %s) or fix namespace in the nomad block", p.settings.Namespace, p.settings.Namespace)
		}
		return fmt.Errorf("nomad: %w", apiError("read namespace "+p.settings.Namespace, err))
	}
	return nil
}
