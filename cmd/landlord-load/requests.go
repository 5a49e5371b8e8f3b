package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// tenantRef is a tenant the run created.
type tenantRef struct{ id, name string }

// tenantRefs are the tenants created so far, shared by the workers and the
// readers.
type tenantRefs struct {
	mu   sync.Mutex
	list []tenantRef
}

func (r *tenantRefs) add(t tenantRef) {
	r.mu.Lock()
	r.list = append(r.list, t)
	r.mu.Unlock()
}

// random returns one of the tenants, if there is one.
func (r *tenantRefs) random() (tenantRef, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.list) == 0 {
		return tenantRef{}, false
	}
	return r.list[rand.IntN(len(r.list))], true
}

func (r *tenantRefs) all() []tenantRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]tenantRef(nil), r.list...)
}

// parallel calls do for every i in [0, n) from c goroutines, numbered by
// worker, and returns when all are done or ctx ends.
func parallel(ctx context.Context, n, c int, do func(ctx context.Context, worker, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(c, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(ctx, w, i)
			}
		})
	}
	wg.Wait()
}

// timed runs the requests of a phase: latency of each success, failures
// counted, and the phase's throughput.
func timed(ctx context.Context, n, c int, do func(ctx context.Context, i int) error) Requests {
	var lat samples
	var errs errorCount
	start := time.Now()
	parallel(ctx, n, c, func(ctx context.Context, _, i int) {
		t0 := time.Now()
		if err := do(ctx, i); err != nil {
			errs.add(err)
			return
		}
		lat.add(time.Since(t0))
	})
	wall := time.Since(start)
	out := Requests{Latency: lat.summary(), WallS: seconds(wall)}
	out.OK = out.Latency.Count
	out.Errors, out.ErrorSamples = errs.count()
	if wall > 0 {
		out.PerSecond = float64(int64(10*float64(out.OK)/wall.Seconds()+0.5)) / 10
	}
	return out
}

// create creates the run's tenants.
func (l *loader) create(ctx context.Context) Requests {
	return timed(ctx, l.opts.tenants, l.opts.concurrency, func(ctx context.Context, i int) error {
		t, err := l.c.Tenants().Create(ctx, client.CreateTenantRequest{Name: l.opts.name(i), ComputeConfig: l.opts.config}, client.CreateOptions{})
		if err != nil {
			return err
		}
		l.tenants.add(tenantRef{id: t.ID, name: t.Name})
		return nil
	})
}

// delete asks for the deletion of every tenant created.
func (l *loader) delete(ctx context.Context) Requests {
	all := l.tenants.all()
	return timed(ctx, len(all), l.opts.concurrency, func(ctx context.Context, i int) error {
		_, err := l.c.Tenants().Delete(ctx, all[i].id, client.DeleteOptions{})
		return err
	})
}
