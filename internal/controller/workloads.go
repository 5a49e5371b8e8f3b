package controller

import (
	"sync"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// workloads maps the workload ids of the placements of tenants of several
// placements to their tenants' ids, so that a provider's change
// notification, which names the workload (provider.Change), queues the
// tenant. The workload of a tenant of one placement is the tenant's own,
// and is not kept. It is a routing table, filled as reconciles and
// resyncs read tenants: a notification about a workload not seen yet
// since a start is not routed, and the first resync (which reads every
// tenant) finds what it was about.
type workloads struct {
	m sync.Map // workload id → tenant id
}

// remember maps t's placements' workloads, and their moves', to t; a
// deleted tenant's are forgotten.
func (w *workloads) remember(t *tenant.Tenant) {
	for _, p := range t.Placements {
		ids := []string{p.WorkloadID}
		if p.Move != nil {
			ids = append(ids, p.Move.Other.WorkloadID)
		}
		for _, id := range ids {
			switch {
			case id == t.ID:
			case t.Status == tenant.StatusDeleted:
				w.m.Delete(id)
			default:
				w.m.Store(id, t.ID)
			}
		}
	}
}

// tenantOf returns the id of the tenant whose workload has id, which is
// the id itself for a tenant of one placement.
func (w *workloads) tenantOf(id string) string {
	if t, ok := w.m.Load(id); ok {
		return t.(string)
	}
	return id
}
