package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// BenchmarkIdempotentCreate is the API's create with an Idempotency-Key:
// the key's reservation, then the tenant created with its response kept.
func BenchmarkIdempotentCreate(b *testing.B) {
	s, _ := mustOpen(b, Options{})
	respond := func(c *tenant.Tenant) (tenant.IdempotentResponse, error) {
		return tenant.IdempotentResponse{Status: 201, Header: map[string]string{"Location": "/v1/tenants/" + c.ID}, Body: []byte(c.ID)}, nil
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key := fmt.Sprint("bench-", i)
		res, _, err := s.ReserveIdempotent(ctx, "bench", key, "h", tenant.IdempotencyLease)
		if err != nil {
			b.Fatal(err)
		}
		in := &tenant.Tenant{Name: key, Provider: "mock", ComputeConfig: []byte(`{"image":"app:1"}`)}
		if _, err := s.CreateIdempotent(ctx, in, "bench", res, respond); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkUpdateObservedConcurrent is the controller's workers at once:
// 16 goroutines recording fenced observations of 500 tenants, as the
// controller's 16 workers do, so that concurrent calls may share a
// transaction (group.go). trips/op is the round trips per observation.
func BenchmarkUpdateObservedConcurrent(b *testing.B) {
	trips := &roundTrips{}
	s, _ := mustOpen(b, Options{Tracer: trips})
	tenants := seededPage(b, s)
	epochs := map[string]int64{}
	for _, t := range tenants {
		name := tenant.FenceLease(t.ID)
		if _, ok := epochs[name]; ok {
			continue
		}
		lease, err := s.AcquireLease(ctx, name, "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		epochs[name] = lease.Epoch
	}
	var next atomic.Int64
	b.SetParallelism(8) // 16 goroutines on 2 cores
	b.ReportAllocs()
	before := trips.n.Load()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			t := tenants[(i*7919)%int64(len(tenants))]
			obs := tenant.Observation{Generation: t.Generation, Status: t.Status, Message: fmt.Sprint("attempt ", i), Actor: "bench", Epoch: epochs[tenant.FenceLease(t.ID)]}
			if _, err := s.UpdateObserved(ctx, t.ID, obs); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(trips.n.Load()-before)/float64(b.N), "trips/op")
}

// BenchmarkUpdateObservedConcurrentEvents is BenchmarkUpdateObservedConcurrent
// with a status transition in every observation, so that each records an
// event (and is announced on the change feed) rather than a progress
// message alone. Each goroutine moves tenants of its own between
// provisioning and ready, unfenced.
func BenchmarkUpdateObservedConcurrentEvents(b *testing.B) {
	s, _ := mustOpen(b, Options{})
	tenants := seededPage(b, s)
	const goroutines = 16
	b.SetParallelism(goroutines / 2) // 16 goroutines on 2 cores
	var gid atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(gid.Add(1)-1) % goroutines
		var mine []*tenant.Tenant
		for i := g; i < len(tenants); i += goroutines {
			mine = append(mine, tenants[i])
		}
		for i := 0; pb.Next(); i++ {
			t := mine[i%len(mine)]
			status := tenant.StatusProvisioning
			if t.Status == tenant.StatusProvisioning {
				status = tenant.StatusReady
			}
			obs := tenant.Observation{Generation: t.Generation, Status: status, Settles: status.Settled(), Actor: "bench"}
			next, err := s.UpdateObserved(ctx, t.ID, obs)
			if err != nil {
				b.Error(err)
				return
			}
			mine[i%len(mine)] = next
		}
	})
}
