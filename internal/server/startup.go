package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// warnStranded says at start-up, in one line, how many tenants use a
// provider that is not enabled (landlord was switched to another) and what
// to do: the controller leaves them as they are. Stores that cannot count
// by provider say nothing.
func warnStranded(ctx context.Context, s tenant.Store, registry *compute.Registry, log *slog.Logger) {
	pc, ok := s.(tenant.ProviderCounter)
	if !ok {
		return
	}
	counts, err := pc.CountByProvider(ctx)
	if err != nil {
		log.Warn("could not count the tenants of each compute provider", slog.Any("error", err))
		return
	}
	n := 0
	var names, which []string
	for _, p := range slices.Sorted(maps.Keys(counts)) {
		if _, err := registry.Get(p); err != nil {
			n += counts[p]
			names = append(names, p)
			which = append(which, fmt.Sprintf("%s: %d", p, counts[p]))
		}
	}
	if n == 0 {
		return
	}
	tenants := "tenants use compute providers"
	if n == 1 {
		tenants = "tenant uses a compute provider"
	}
	log.Warn(fmt.Sprintf("%d %s this server has not enabled (%s): landlord leaves them as they are, their workloads untouched; "+
		"enable the provider again, or remove a record with landlord delete NAME --forget (landlord list marks them)", n, tenants, strings.Join(which, ", ")),
		slog.Int("tenants", n), slog.String("providers", strings.Join(names, ",")))
}
