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
		if _, err := stmt.ExecContext(ctx, tenantValues(t)...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
