package compute

import (
	"context"
	"log/slog"
	"sync"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// WatchChanges runs the change watch of every registered provider that is
// a ChangeNotifier, calling changed with the id of each tenant whose
// workload changed, until ctx ends. A provider whose watch fails is logged
// and left to the controller's polling and resync.
func (m *Manager) WatchChanges(ctx context.Context, changed func(tenantID string)) {
	var wg sync.WaitGroup
	for _, p := range m.registry.List() {
		n, ok := p.(provider.ChangeNotifier)
		if !ok {
			continue
		}
		wg.Go(func() {
			if err := n.WatchChanges(ctx, changed); err != nil && ctx.Err() == nil {
				m.logger.Warn("the provider cannot report changes as they happen; its tenants are polled and resynced only",
					slog.String("provider", p.Name()), slog.Any("error", err))
			}
		})
	}
	wg.Wait()
}
