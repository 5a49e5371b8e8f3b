package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkStore runs the shared store benchmarks (create, get, update
// observed, a page of 50) at 10,000 and 100,000 tenants.
func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) tenant.Store {
		s, _ := mustOpen(b, Options{})
		return s
	}, seedCopy)
}

// seedCopy loads n tenants with one COPY, in about a second for 100,000,
// and updates the planner's statistics as autovacuum would by and by.
func seedCopy(b *testing.B, ts tenant.Store, n int) {
	b.Helper()
	s := ts.(*Store)
	ctx := context.Background()
	seed := storetest.SeedTenants(n)
	rows := make([][]any, len(seed))
	for i, t := range seed {
		j, err := encodeJSON(t)
		if err != nil {
			b.Fatal(err)
		}
		rows[i] = tenantArgs(t, j)
	}
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"tenants"}, tenantColumns, pgx.CopyFromRows(rows)); err != nil {
		b.Fatalf("seed: %v", err)
	}
	if _, err := s.pool.Exec(ctx, "ANALYZE tenants"); err != nil {
		b.Fatalf("seed: %v", err)
	}
}

// seededPage seeds s with a page of tenants (seedCopy) and returns them.
func seededPage(b *testing.B, s *Store) []*tenant.Tenant {
	seedCopy(b, s, tenant.MaxPageSize)
	page, err := s.List(context.Background(), tenant.ListOptions{PageSize: tenant.MaxPageSize})
	if err != nil {
		b.Fatal(err)
	}
	return page.Tenants
}

// BenchmarkUpdateObservedFenced is the controller's write: an observation
// that carries the epoch of its tenant's partition lease, so that the store
// checks the fence in the same transaction as the tenant's row lock.
func BenchmarkUpdateObservedFenced(b *testing.B) {
	s, _ := mustOpen(b, Options{})
	ctx := context.Background()
	tenants := seededPage(b, s)
	fence := holdPartitions(b, s, "bench")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t := tenants[(i*7919)%len(tenants)]
		obs := tenant.Observation{Generation: t.Generation, Status: t.Status, Message: fmt.Sprint("attempt ", i), Actor: "bench", Epoch: fence(t.ID)}
		if _, err := s.UpdateObserved(ctx, t.ID, obs); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkUpdateDesired is the API's write of a tenant's desired state: a
// new label each time, so that every call writes the row, an event and an
// announcement to watchers.
func BenchmarkUpdateDesired(b *testing.B) {
	s, _ := mustOpen(b, Options{})
	ctx := context.Background()
	tenants := seededPage(b, s)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t := tenants[(i*7919)%len(tenants)]
		next, err := s.UpdateDesired(ctx, t.ID, tenant.DesiredChange{
			Version: t.Version, ComputeConfig: t.ComputeConfig, Annotations: t.Annotations,
			Labels: map[string]string{"bench": fmt.Sprint(i)}, Actor: "bench",
		})
		if err != nil {
			b.Fatal(err)
		}
		tenants[(i*7919)%len(tenants)] = next
		i++
	}
}

// BenchmarkMemberSummary compares a rollout's summary, in one query, with
// reading its 5,000 members.
func BenchmarkMemberSummary(b *testing.B) {
	s, _ := mustOpen(b, Options{})
	storetest.BenchmarkMemberSummary(b, s)
}

// BenchmarkOutboxCost: what the outbox's triggers cost a lifecycle
// (storetest.BenchmarkOutboxCost).
func BenchmarkOutboxCost(b *testing.B) {
	tables := map[string]string{"outbox_tenant_events": "events", "outbox_rollout_events": "rollout_events", "outbox_plan_versions": "plan_versions"}
	storetest.BenchmarkOutboxCost(b, func(b *testing.B) tenant.Store {
		s, _ := mustOpen(b, Options{})
		return s
	}, func(b *testing.B, st tenant.Store) {
		for _, trigger := range storetest.OutboxTriggers {
			if _, err := st.(*Store).pool.Exec(context.Background(), `DROP TRIGGER `+trigger+` ON `+tables[trigger]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
