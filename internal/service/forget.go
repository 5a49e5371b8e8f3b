package service

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// forgetTenant deletes the record of a tenant whose provider is not
// enabled, at once and destroying nothing: the way out for tenants
// stranded by a switch of provider, which the controller cannot delete. A
// tenant whose provider is enabled is refused, so that a workload landlord
// can destroy is never left running by mistake. The tenant's history says
// who forgot it and what may be left running.
func (s *Service) forgetTenant(ctx context.Context, cur *tenant.Tenant, d Deletion) (*tenant.Tenant, error) {
	for _, name := range liveProviders(cur) {
		if _, err := s.compute.Registry().Get(name); err == nil {
			return nil, refuse(KindConflict, wire.CodeProviderEnabled,
				fmt.Sprintf("the tenant's provider %s is enabled on this server: delete the tenant without forget, so that its workload is destroyed", name),
				Field{Parameter: "forget", Message: "only for a tenant whose provider is not enabled"})
		}
	}
	if !tenant.LeftAlone(cur) {
		// This replica lacks the provider, but the controller has not said
		// it does: the leader may have it (a rolling change of
		// configuration) and be running the workload.
		return nil, refuse(KindConflict, wire.CodeProviderEnabled,
			fmt.Sprintf("the controller has not recorded that provider %s is not enabled where it runs; it may still manage the tenant (replicas with different providers?): forget it once landlord get shows it left as it is", cur.Provider),
			Field{Parameter: "forget", Message: "only for a tenant the controller leaves alone"})
	}
	f, ok := s.tenants.(tenant.Forgetter)
	if !ok {
		return nil, fmt.Errorf("service: the store %T cannot forget tenants", s.tenants)
	}
	msg := fmt.Sprintf("forgotten: the record was deleted without destroying anything, as compute provider %s is not enabled on this server",
		strings.Join(liveProviders(cur), ", "))
	if left := LeftRunning(cur); left != "" {
		msg += "; these may still run there: " + left
	}
	out, err := f.Forget(ctx, cur.ID, d.Expect.expected(cur.Version), d.Actor, msg)
	if errors.Is(err, tenant.ErrConflict) && !d.Expect.Any() {
		return nil, &StaleError{What: "tenant"}
	}
	return out, err
}

// liveProviders lists, once each, the providers of the workloads of t that
// may still run: every placement's that is not deleted, and its move's
// other workload's.
func liveProviders(t *tenant.Tenant) []string {
	if t.Simple() {
		return []string{t.Provider}
	}
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, p := range t.Placements {
		if p.Status != tenant.StatusDeleted {
			add(p.Provider)
		}
		if p.Move != nil && p.Move.Other.Status != tenant.StatusDeleted {
			add(p.Move.Other.Provider)
		}
	}
	return out
}

// LeftRunning names what a tenant's workload had on its platform, as far
// as landlord knows: its resource ids and endpoints.
func LeftRunning(t *tenant.Tenant) string {
	if t.Simple() {
		return leftRunning("", t.ResourceIDs, t.Endpoints)
	}
	var parts []string
	for _, p := range t.Placements {
		parts = append(parts, leftRunning("placement "+p.Name+" (workload "+p.WorkloadID+" on "+p.Provider+"): ", p.ResourceIDs, p.Endpoints))
		if m := p.Move; m != nil {
			parts = append(parts, leftRunning("placement "+p.Name+"'s move (workload "+m.Other.WorkloadID+" on "+m.Other.Provider+"): ",
				m.Other.ResourceIDs, m.Other.Endpoints))
		}
	}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "; ")
}

// leftRunning lists resource ids and endpoints after prefix; "" when
// there are none.
func leftRunning(prefix string, ids map[string]string, endpoints []provider.Endpoint) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(ids)) {
		parts = append(parts, k+"="+ids[k])
	}
	for _, e := range endpoints {
		parts = append(parts, "endpoint "+e.Address)
	}
	if len(parts) == 0 {
		return ""
	}
	return prefix + strings.Join(parts, ", ")
}
