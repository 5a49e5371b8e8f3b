package nomad

import (
	"context"
	"fmt"
	"slices"
)

// CheckHealth asks Nomad for its regions and the block's namespace, within
// ctx: a Nomad that does not answer, or a region or namespace it does not
// have (a configuration error, reported at start-up rather than as a
// failure of every tenant), fails it with what to fix. Reading the
// namespace also needs a leader.
func (p *Provider) CheckHealth(ctx context.Context) error {
	var regions []string
	if _, err := p.client.Raw().Query("/v1/regions", &regions, query(ctx)); err != nil {
		return fmt.Errorf("nomad: %s does not answer: %w", p.settings.Address, apiError("list regions", err))
	}
	if p.settings.Region != "" && !slices.Contains(regions, p.settings.Region) {
		return fmt.Errorf("nomad: region %q is not one of the cluster's (%v); fix region in the nomad block", p.settings.Region, regions)
	}
	if _, _, err := p.client.Namespaces().Info(p.settings.Namespace, query(ctx)); err != nil {
		if isNotFound(err) {
			return fmt.Errorf("nomad: namespace %q does not exist; create it (nomad namespace apply %s) or fix namespace in the nomad block", p.settings.Namespace, p.settings.Namespace)
		}
		return fmt.Errorf("nomad: %w", apiError("read namespace "+p.settings.Namespace, err))
	}
	return nil
}
