package controller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkTenantsToReady creates 10,000 tenants from 16 concurrent clients
// with the controller running (mock provider, zero latency) and reports the
// time from the first and from the last create until every tenant is ready.
// Run it once: go test -run '^$' -bench TenantsToReady -benchtime 1x ./internal/controller/
func BenchmarkTenantsToReady(b *testing.B) {
	const n = 10_000
	for _, db := range []struct {
		name string
		open func(testing.TB) tenant.Store
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}} {
		b.Run(db.name, func(b *testing.B) {
			for b.Loop() {
				e := newEnv(b, db.open(b), ``)
				e.lead(b, controller.Options{}) // under a lease: every write fenced, as in production
				first := time.Now()
				ids := e.createMany(b, "t", n, appConfig)
				last := time.Now()
				waitNoWork(b, e.store)
				done := time.Now()
				if ready := countStatus(b, e.store, tenant.StatusReady); ready != len(ids) {
					b.Fatalf("%d of %d tenants ready", ready, len(ids))
				}
				b.ReportMetric(last.Sub(first).Seconds(), "s-creating")
				b.ReportMetric(done.Sub(last).Seconds(), "s-last-create-to-all-ready")
				b.ReportMetric(done.Sub(first).Seconds(), "s-first-create-to-all-ready")
			}
		})
	}
}

// waitNoWork waits until no tenant needs the controller.
func waitNoWork(b *testing.B, s tenant.Store) {
	poll.Until(b, "no tenant needs work", 10*time.Minute, func() (bool, string) {
		ids, err := s.ListWork(ctx, tenant.WorkOptions{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		return len(ids) == 0, fmt.Sprintf("%d need work", len(ids))
	})
}

func countStatus(b *testing.B, s tenant.Store, status tenant.Status) int {
	n := 0
	opts := tenant.ListOptions{Statuses: []tenant.Status{status}, PageSize: tenant.MaxPageSize}
	for {
		page, err := s.List(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		n += len(page.Tenants)
		if page.NextPageToken == "" {
			return n
		}
		opts.PageToken = page.NextPageToken
	}
}
