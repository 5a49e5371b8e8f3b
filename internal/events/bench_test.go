package events_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// dispatchStore is what the throughput benchmark needs of a store.
type dispatchStore interface {
	tenant.Store
	tenant.LeaseStore
	events.Store
}

// BenchmarkDispatch measures deliveries per second to a local receiver
// that answers 204 at once: 500 tenants' created and ready events (1,000
// per op) written first, then delivered by one dispatcher with its
// default 16 workers, each tenant's two in order. It reports
// events_per_s.
func BenchmarkDispatch(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		benchDispatch(b, func(b *testing.B) dispatchStore { return openStoreTB(b) })
	})
	b.Run("postgres", func(b *testing.B) {
		benchDispatch(b, func(b *testing.B) dispatchStore { return openPG(b) })
	})
}

func benchDispatch(b *testing.B, open func(b *testing.B) dispatchStore) {
	const tenants = 500
	var got atomic.Int64
	srv := httptest.NewServer(httpHandlerFunc(func() { got.Add(1) }))
	b.Cleanup(srv.Close)
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := open(b)
		secret := events.NewSecret()
		if _, err := s.CreateSubscription(context.Background(), &events.Subscription{ID: tenant.NewID(), Name: "bench", URL: srv.URL, Enabled: true,
			Secrets: []events.Secret{{Value: secret, CreatedAt: time.Now()}}}); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for j := w; j < tenants; j += 8 {
					lifecycle(b, s, fmt.Sprintf("t%d-%d", i, j))
				}
			})
		}
		wg.Wait()
		got.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		d := events.New(events.Options{Store: s, Leases: s, Identity: "bench", Encoder: &events.Encoder{Source: "bench",
			Tenant: func(t *tenant.Tenant) wire.Tenant {
				return wire.Tenant{ID: t.ID, Name: t.Name, Status: string(t.Status)}
			}},
			Guard: events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}), Poll: 10 * time.Millisecond})
		b.StartTimer()
		began := time.Now()
		var run sync.WaitGroup
		run.Go(func() { d.Run(ctx) })
		for got.Load() < 2*tenants {
			time.Sleep(time.Millisecond)
		}
		elapsed += time.Since(began)
		b.StopTimer()
		cancel()
		run.Wait()
	}
	b.ReportMetric(float64(2*tenants*b.N)/elapsed.Seconds(), "events_per_s")
}

// openStoreTB is openStore for a benchmark.
func openStoreTB(b *testing.B) dispatchStore {
	b.Helper()
	return openStoreT(b)
}

// openPG opens a PostgreSQL store on a new database, or skips b.
func openPG(b *testing.B) dispatchStore {
	s, err := postgres.Open(context.Background(), pgtest.NewDatabase(b), postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
