package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

var (
	fleetTenants = flag.Int("fleet.tenants", 10_000, "BenchmarkFleetResync: tenants in the cluster")
	fleetWorkers = flag.Int("fleet.workers", 64, "BenchmarkFleetResync: Inspect calls at once (the controller's workers)")
	fleetSpread  = flag.Duration("fleet.spread", 0, "BenchmarkFleetResync: spread the starts evenly over this long, as the controller's resync does (0: all at once)")
)

// warpClock is the fake's clock: wall time plus an offset that seeding
// moves on quickly, so that the fake's token buckets refill and its tasks
// start at once; the resync that is measured runs on wall time.
type warpClock struct{ offset atomic.Int64 }

func (c *warpClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// warp moves the clock on by 10s every millisecond until the returned
// function is called.
func (c *warpClock) warp() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				c.offset.Add(int64(10 * time.Second))
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// BenchmarkFleetResync measures what one resync of a fleet costs on ECS:
// -fleet.tenants services (default 10,000) of one task each in one cluster,
// each tenant inspected once (status and drift, as the controller's resync
// asks), -fleet.workers at a time (default 64), against the fake with
// ECS's documented request throttling on (Options.Throttling). The fleet
// is created and inspected once beforehand with the fake's clock racing, so
// the provider's caches are warm and its buckets are full when the
// measured resync starts, on wall time. It reports the ECS calls per tenant,
// by operation and in all, the calls ECS throttled (each a request sent
// and refused; the SDK retries it), the tenants whose Inspect failed, and
// the wall time of the whole resync. Run it once:
//
//	go test -run '^$' -bench FleetResync -benchtime 1x -timeout 2h ./internal/compute/providers/ecs/
//
// -args -fleet.spread 48s spreads the starts as the controller's resync
// does over 80% of a 60s period.
func BenchmarkFleetResync(b *testing.B) {
	n, workers := *fleetTenants, *fleetWorkers
	clock := &warpClock{}
	srv := ecsfake.Start(b, ecsfake.Options{Now: clock.Now, StepTime: time.Millisecond, DrainTime: time.Millisecond, Throttling: ecsfake.DocumentedRates()})
	p, err := ecs.New(context.Background(), ecs.Options{Block: json.RawMessage(fargateBlock(srv)), HashKey: hashKey, Credentials: fakeCredentials})
	if err != nil {
		b.Fatal(err)
	}
	manager := computetest.Manager(b, p, compute.ManagerOptions{DefaultProvider: ecs.Name})
	ctx := context.Background()
	specs := make([]*provider.TenantComputeSpec, n)
	for i := range specs {
		res, err := manager.Resolve(ctx, compute.ResolveRequest{
			TenantID: fmt.Sprintf("0190d3c2-0000-7000-8000-%012d", i), TenantName: fmt.Sprintf("fleet-%05d", i), Generation: 1,
			ComputeConfig: json.RawMessage(`{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}]}`)})
		if err != nil {
			b.Fatal(err)
		}
		specs[i] = res.Spec
	}

	stopWarp := clock.warp()
	start := time.Now()
	fleetParallel(workers, n, 0, func(i int) {
		if _, err := p.Provision(ctx, specs[i]); err != nil {
			b.Errorf("provision %s: %v", specs[i].TenantName, err)
		}
	})
	if b.Failed() {
		b.FailNow()
	}
	for round := 0; ; round++ {
		r := fleetInspect(ctx, p, specs, workers, 0)
		if r.running == n {
			break
		}
		if round == 100 {
			b.Fatalf("after %d rounds %d of %d tenants run: %s", round, r.running, n, r)
		}
	}
	stopWarp()
	b.Logf("%d tenants created and running in %s; throttled meanwhile: %v", n, time.Since(start).Round(time.Millisecond), srv.Throttled())

	for b.Loop() {
		srv.ResetCalls()
		start := time.Now()
		r := fleetInspect(ctx, p, specs, workers, *fleetSpread)
		elapsed := time.Since(start)
		calls, throttled := srv.Calls(), srv.Throttled()
		total, refused := 0, 0
		var lines []string
		for _, op := range slices.Sorted(maps.Keys(calls)) {
			total += calls[op]
			refused += throttled[op]
			b.ReportMetric(float64(calls[op])/float64(n), op+"-calls/tenant")
			lines = append(lines, fmt.Sprintf("%-24s %8d calls %8.3f/tenant %8d throttled", op, calls[op], float64(calls[op])/float64(n), throttled[op]))
		}
		b.ReportMetric(float64(total)/float64(n), "calls/tenant")
		b.ReportMetric(float64(refused), "throttled-calls")
		b.ReportMetric(float64(r.failed), "failed-inspects")
		b.ReportMetric(elapsed.Seconds(), "s/resync")
		b.Logf("resync of %d tenants, %d workers, spread %s: %s in %s\n%s\n%-24s %8d calls %8.3f/tenant %8d throttled",
			n, workers, *fleetSpread, r, elapsed.Round(time.Millisecond), strings.Join(lines, "\n"), "all", total, float64(total)/float64(n), refused)
	}
}

// fleetResult is what a round of Inspects found.
type fleetResult struct {
	running, drifted, failed int
	firstErr                 error
}

func (r fleetResult) String() string {
	s := fmt.Sprintf("%d running, %d drifted, %d failed", r.running, r.drifted, r.failed)
	if r.firstErr != nil {
		s += fmt.Sprintf(" (first: %v)", r.firstErr)
	}
	return s
}

// fleetInspect inspects every tenant, workers at a time, the starts spread
// evenly over spread.
func fleetInspect(ctx context.Context, p *ecs.Provider, specs []*provider.TenantComputeSpec, workers int, spread time.Duration) fleetResult {
	var mu sync.Mutex
	var r fleetResult
	fleetParallel(workers, len(specs), spread, func(i int) {
		in, err := p.Inspect(ctx, specs[i])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			r.failed++
			if r.firstErr == nil || errors.Is(r.firstErr, provider.ErrTenantNotFound) {
				r.firstErr = err
			}
		case in.Status.State == provider.StateRunning && len(in.Drift) == 0:
			r.running++
		case len(in.Drift) > 0:
			r.drifted++
		}
	})
	return r
}

// fleetParallel calls f(0) … f(n-1), at most workers at once, starting
// f(i) no sooner than spread·i/n after the first.
func fleetParallel(workers, n int, spread time.Duration, f func(i int)) {
	limit := make(chan struct{}, workers)
	var wg sync.WaitGroup
	begin := time.Now()
	for i := range n {
		if d := time.Until(begin.Add(time.Duration(int64(spread) * int64(i) / int64(n)))); d > 0 {
			time.Sleep(d)
		}
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			f(i)
		})
	}
	wg.Wait()
}
