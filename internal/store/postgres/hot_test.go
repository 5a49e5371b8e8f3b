package postgres

import (
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's status transitions, and its deletion request, are HOT updates:
// no index reads a column they change (migration 00005). Only the last
// write of a lifecycle, which sets deleted_at, writes index entries. On one
// connection, so that the counts this backend flushes are all of them.
func TestTransitionsAreHOT(t *testing.T) {
	s, _ := mustOpen(t, Options{MaxConns: 1})
	created := mustCreate(t, s, "hot")
	steps := []func(cur *tenant.Tenant) (*tenant.Tenant, error){
		func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning, Actor: "test"})
		},
		func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: 1, Status: tenant.StatusReady, Settles: true, Actor: "test"})
		},
		func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.RequestDeletion(ctx, cur.ID, cur.Version, "test")
		},
		func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleting, Actor: "test"})
		},
		func(cur *tenant.Tenant) (*tenant.Tenant, error) {
			return s.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleted, Settles: true, Actor: "test"})
		},
	}
	cur := created
	for i, step := range steps {
		next, err := step(cur)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		cur = next
	}
	// The backend reports its counts when it goes idle, at most once a
	// second unless told to at the next chance.
	if _, err := s.pool.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	var updates, hot int64
	err := s.pool.QueryRow(ctx, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'tenants'").Scan(&updates, &hot)
	if err != nil {
		t.Fatal(err)
	}
	if updates != 5 || hot != 4 {
		t.Errorf("%d updates of which %d HOT, want 5 of which 4", updates, hot)
	}
}
