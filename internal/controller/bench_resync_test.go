package controller_test

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// checkCounter is the compute manager, counting the controller's checks of
// tenants' workloads (status reads and inspections).
type checkCounter struct {
	*compute.Manager
	checks atomic.Int64
}

func (c *checkCounter) GetTenantStatus(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	c.checks.Add(1)
	return c.Manager.GetTenantStatus(ctx, t)
}

func (c *checkCounter) InspectTenant(ctx context.Context, t provider.TenantRef, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	c.checks.Add(1)
	return c.Manager.InspectTenant(ctx, t, spec)
}

// BenchmarkResync measures the CPU the controller spends on one resync
// cycle over 10,000 ready tenants (SQLite, mock provider): every ready
// tenant's workload checked against its provider, none drifted. It reports
// the process's CPU time (user and system, from getrusage) per tenant per
// cycle.
// Run it: go test -run '^$' -bench Resync -benchtime 5x ./internal/controller/
func BenchmarkResync(b *testing.B) {
	const n = 10_000
	e := newEnv(b, openSQLite(b), ``)
	stop := e.run(b, fast())
	e.createMany(b, "t", n, appConfig)
	waitNoWork(b, e.store)
	stop()

	counter := &checkCounter{Manager: e.manager}
	opts := fast()
	opts.Resync = 100 * time.Millisecond
	c := controller.New(e.store, counter, opts)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	cycle := func() {
		start := counter.checks.Load()
		for counter.checks.Load() < start+n {
			time.Sleep(time.Millisecond)
		}
	}
	cycle() // the first, after the start's sweep
	var total time.Duration
	for b.Loop() {
		before := cpuTime(b)
		cycle()
		total += cpuTime(b) - before
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/n, "cpu-µs/tenant")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
