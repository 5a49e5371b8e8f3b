package ecs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
)

// benchTenants is how many tenants BenchmarkThousandTenants runs.
const benchTenants = 1000

// BenchmarkThousandTenants creates 1,000 tenants through `landlord serve`
// with the ecs provider against the fake (tasks start in 2×10ms), waits
// until all are ready, deletes them and waits until all are deleted. It
// reports the time from the first create until all are ready and until
// all are deleted, and the ECS API calls one tenant's lifecycle costs, in
// all and by operation, from the fake's count. The controller's resync is
// off for the run, so the calls are those of create → ready → delete alone.
// Run it once:
//
//	go test -run '^$' -bench ThousandTenants -benchtime 1x ./internal/compute/providers/ecs/
func BenchmarkThousandTenants(b *testing.B) {
	srv := ecsfake.Start(b, ecsfake.Options{StepTime: 10 * time.Millisecond, DrainTime: 50 * time.Millisecond})
	l := startServeECS(b, srv, `controller:
  workers: 64
  resync: 1h
  lease_ttl: 3s
`)
	tenants := l.Client().Tenants()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var ready, deleted time.Duration
	calls := map[string]int{}
	round := 0
	for b.Loop() {
		round++
		prefix := fmt.Sprintf("bench-%d-", round)
		srv.ResetCalls()
		start := time.Now()
		ids := benchCreate(ctx, b, tenants, prefix, benchTenants)
		benchWaitAll(ctx, b, tenants, prefix, llclient.StatusReady)
		ready += time.Since(start)

		start = time.Now()
		benchParallel(benchTenants, func(i int) {
			if _, err := tenants.Delete(ctx, ids[i], llclient.DeleteOptions{}); err != nil {
				b.Errorf("delete %s: %v", ids[i], err)
			}
		})
		benchWaitAll(ctx, b, tenants, prefix, llclient.StatusDeleted)
		deleted += time.Since(start)
		for op, n := range srv.Calls() {
			calls[op] += n
		}
	}

	perRound := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(round) }
	b.ReportMetric(perRound(ready), "ns-to-all-ready/op")
	b.ReportMetric(perRound(deleted), "ns-to-all-deleted/op")
	lifecycles := float64(round * benchTenants)
	total := 0
	for _, op := range slices.Sorted(maps.Keys(calls)) {
		total += calls[op]
		b.ReportMetric(float64(calls[op])/lifecycles, op+"-calls/tenant")
	}
	b.ReportMetric(float64(total)/lifecycles, "calls/tenant")
}

// benchCreate creates n tenants named prefix0000… from 32 goroutines and
// returns their ids.
func benchCreate(ctx context.Context, b *testing.B, tenants *llclient.Tenants, prefix string, n int) []string {
	b.Helper()
	ids := make([]string, n)
	benchParallel(n, func(i int) {
		name := fmt.Sprintf("%s%04d", prefix, i)
		tn, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: name, ComputeConfig: appConfig(fmt.Sprintf("ghcr.io/example/app:1.%d", i%10))}, llclient.CreateOptions{})
		if err != nil {
			b.Errorf("create %s: %v", name, err)
			return
		}
		ids[i] = tn.ID
	})
	if b.Failed() {
		b.FailNow()
	}
	return ids
}

// benchParallel calls f(0) … f(n-1) from 32 goroutines.
func benchParallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// benchWaitAll polls the tenants named prefix… until every one is in status
// (deleted tenants leave the list); a failed one fails b.
func benchWaitAll(ctx context.Context, b *testing.B, tenants *llclient.Tenants, prefix, status string) {
	b.Helper()
	for {
		counts := map[string]int{}
		var failed *llclient.Tenant
		for tn, err := range tenants.All(ctx, llclient.ListOptions{NamePrefix: prefix, PageSize: 500}) {
			if err != nil {
				b.Fatalf("list %s…: %v", prefix, err)
			}
			counts[tn.Status]++
			if tn.Status == llclient.StatusFailed && failed == nil {
				failed = &tn
			}
		}
		switch {
		case failed != nil:
			b.Fatalf("tenant %s failed: %s", failed.Name, failed.StatusMessage)
		case status == llclient.StatusDeleted && len(counts) == 0:
			return
		case status != llclient.StatusDeleted && counts[status] == benchTenants:
			return
		}
		select {
		case <-ctx.Done():
			b.Fatalf("waiting for %d tenants %s… to be %s: %v; now %v", benchTenants, prefix, status, ctx.Err(), counts)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
