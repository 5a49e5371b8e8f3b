package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// OutboxTriggers are the triggers that write the outbox, on both stores.
var OutboxTriggers = []string{"outbox_tenant_events", "outbox_rollout_events", "outbox_plan_versions"}

// BenchmarkOutboxCost measures a tenant's lifecycle (create, provisioning,
// ready, deletion asked for, deleted: five writes, of which four publish an
// event) on stores open makes, with the outbox's triggers ("outbox") and
// with them dropped by drop ("without"): the difference is what the outbox
// costs a lifecycle. open closes the store when its benchmark ends. 16 goroutines write at once, as the load tool's
// clients do (-c 16), so that SQLite's group commit shares commits as it
// does under load.
func BenchmarkOutboxCost(b *testing.B, open func(b *testing.B) tenant.Store, drop func(b *testing.B, s tenant.Store)) {
	for _, mode := range []string{"outbox", "without"} {
		b.Run(mode, func(b *testing.B) {
			s := open(b) // open closes it when b ends
			if mode == "without" {
				drop(b, s)
			}
			var n atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if err := lifecycle(ctx, s, fmt.Sprintf("bench-%d", n.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// lifecycle takes one new tenant through its whole life.
func lifecycle(ctx context.Context, s tenant.Store, name string) error {
	t, err := s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: json.RawMessage(`{"image":"app:1"}`),
		Labels: map[string]string{"tier": "gold"}}, "bench")
	if err != nil {
		return err
	}
	for _, st := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
		if t, err = s.UpdateObserved(ctx, t.ID, tenant.Observation{Generation: t.Generation, Status: st, Settles: st == tenant.StatusReady, Actor: "bench"}); err != nil {
			return err
		}
	}
	if t, err = s.RequestDeletion(ctx, t.ID, t.Version, "bench"); err != nil {
		return err
	}
	_, err = s.UpdateObserved(ctx, t.ID, tenant.Observation{Generation: t.Generation, Status: tenant.StatusDeleted, Settles: true, Actor: "bench"})
	return err
}
