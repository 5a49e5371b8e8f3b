package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func BenchmarkStore(b *testing.B) {
	open := func(b *testing.B) tenant.Store {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	storetest.Benchmark(b, open, seed)
}

// seed inserts n tenants in one transaction.
func seed(b *testing.B, st tenant.Store, n int) {
	s := st.(*Store)
	ctx := context.Background()
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, insertTenant)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range storetest.SeedTenants(n) {
		vals, err := tenantValues(t)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStatusTransition is the controller's write that changes a
// tenant's status, as 4 of the 5 writes of a lifecycle do: 500 tenants of
// 10,000 go from ready to provisioning and back, so that every write moves
// the tenant in and out of the indexes that read its status.
func BenchmarkStatusTransition(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	seed(b, s, 10_000)
	ctx := context.Background()
	page, err := s.List(ctx, tenant.ListOptions{PageSize: tenant.MaxPageSize})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, len(page.Tenants))
	for i, t := range page.Tenants {
		ids[i] = t.ID
		for _, st := range []tenant.Status{tenant.StatusProvisioning, tenant.StatusReady} {
			if _, err := s.UpdateObserved(ctx, t.ID, tenant.Observation{Generation: 1, Status: st, Settles: st == tenant.StatusReady, Actor: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// Each tenant's turn comes every len(ids) writes: ready to
		// provisioning on odd rounds, back on even ones.
		obs := tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Message: "repairing", Actor: "bench"}
		if (i/len(ids))%2 == 1 {
			obs = tenant.Observation{Generation: 1, Status: tenant.StatusReady, Settles: true, Actor: "bench"}
		}
		if _, err := s.UpdateObserved(ctx, ids[i%len(ids)], obs); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMemberSummary compares a rollout's summary with reading its
// 5,000 members.
func BenchmarkMemberSummary(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	storetest.BenchmarkMemberSummary(b, s)
}

// BenchmarkOutboxCost: what the outbox's triggers cost a lifecycle
// (storetest.BenchmarkOutboxCost).
func BenchmarkOutboxCost(b *testing.B) {
	storetest.BenchmarkOutboxCost(b, func(b *testing.B) tenant.Store {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}, func(b *testing.B, st tenant.Store) {
		for _, trigger := range storetest.OutboxTriggers {
			if _, err := st.(*Store).write.Exec(`DROP TRIGGER ` + trigger); err != nil {
				b.Fatal(err)
			}
		}
	})
}
