package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/moby/moby/api/types/network"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Destroy stops the tenant's containers with the configured grace period
// and removes them and the tenant's network. It returns nil when nothing
// exists, and finishes even when ctx is cancelled.
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	defer p.lock(tenantID)()
	dctx, cancel := p.detached(ctx)
	defer cancel()
	n := p.naming(tenantID, "")
	ex, err := p.find(dctx, n)
	if err != nil {
		return provider.Retryable(fmt.Errorf("docker: destroy tenant %s: find containers: %w", tenantID, err))
	}
	all := append(ex.stale, mapValues(ex.current)...)
	errs := make([]error, len(all))
	var nets []network.Summary
	var netErr error
	var wg sync.WaitGroup
	// The networks are listed while the containers stop, and removed once
	// nothing is attached to them.
	wg.Go(func() { nets, netErr = p.tenantNetworks(dctx, n) })
	for i, c := range all {
		wg.Go(func() { errs[i] = p.removeContainer(dctx, c) })
	}
	wg.Wait()
	if netErr == nil {
		netErr = p.removeNetworkList(dctx, nets)
	}
	errs = append(errs, netErr)
	if err := errors.Join(errs...); err != nil {
		p.log(tenantID).Warn("docker destroy incomplete", slog.String("error", err.Error()))
		return provider.Retryable(fmt.Errorf("docker: destroy tenant %s: %w", tenantID, err))
	}
	p.log(tenantID).Info("docker destroy", slog.Int("containers", len(all)))
	return nil
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
