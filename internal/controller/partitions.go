package controller

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// part is a partition this controller works, under one epoch of its lease.
// A partition gained again, even at the same epoch, is a new part.
type part struct {
	p     int
	epoch int64 // fences writes to its tenants; 0 when running alone
	// ctx is the context of the partition's operations: it ends when the
	// partition is dropped, so that no provider call outlives the lease.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	draining bool           // being given up: no new tenant is taken
	busy     sync.WaitGroup // tenants being reconciled
}

// Causes with which a partition's operations are cancelled.
var (
	errPartitionLost     = errors.New("controller: the partition's lease was lost")
	errPartitionHandover = errors.New("controller: the partition was handed over before its in-flight work finished")
	errPartitionReplaced = errors.New("controller: the partition was gained again")
)

// begin admits one tenant of the partition to a worker; false when the
// partition is being given up.
func (pt *part) begin() bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.draining || pt.ctx.Err() != nil {
		return false
	}
	pt.busy.Add(1)
	return true
}

func (pt *part) end() { pt.busy.Done() }

// working reports whether the partition's tenants are taken.
func (pt *part) working() bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return !pt.draining && pt.ctx.Err() == nil
}

// owner returns the part the run works for partition p, nil when none.
func (r *run) owner(p int) *part { return r.parts[p].Load() }

// working returns the part of the tenant's partition when its tenants are
// taken, else nil.
func (r *run) working(id string) *part {
	if pt := r.owner(tenant.PartitionOf(id)); pt != nil && pt.working() {
		return pt
	}
	return nil
}

// add queues the tenant when its partition is worked here; the holder of
// another partition finds its tenants itself.
func (r *run) add(id string) {
	if r.working(id) != nil {
		r.queue.Add(id)
	}
}

// gain starts working partition p under epoch, and asks for a sweep, so
// that the partition's tenants that need work are found at once.
func (r *run) gain(p int, epoch int64) {
	ctx, cancel := context.WithCancelCause(r.opCtx)
	pt := &part{p: p, epoch: epoch, ctx: ctx, cancel: cancel}
	if old := r.parts[p].Swap(pt); old != nil {
		old.cancel(errPartitionReplaced)
	}
	r.sweepSoon()
}

// lose stops working partition p at once, cancelling its in-flight
// operations with cause, when its part is still pt (any part when pt is
// nil). It reports whether it stopped one.
func (r *run) lose(p int, pt *part, cause error) bool {
	cur := r.owner(p)
	if cur == nil || (pt != nil && cur != pt) || !r.parts[p].CompareAndSwap(cur, nil) {
		return false
	}
	cur.cancel(cause)
	return true
}

// drain stops admitting partition p's tenants, waits up to timeout for
// those in flight, then cancels whatever still runs and stops working the
// partition. It reports whether everything finished in time.
func (r *run) drain(p int, timeout time.Duration) bool {
	pt := r.owner(p)
	if pt == nil {
		return true
	}
	pt.mu.Lock()
	pt.draining = true
	pt.mu.Unlock()
	done := make(chan struct{})
	go func() { pt.busy.Wait(); close(done) }()
	finished := true
	select {
	case <-done:
	case <-pt.ctx.Done(): // lost meanwhile: cancelled already
		<-done
	case <-time.After(timeout):
		finished = false
		pt.cancel(errPartitionHandover)
		<-done
	}
	r.lose(p, pt, errPartitionHandover)
	return finished
}

// held counts the partitions the run works.
func (r *run) held() int {
	n := 0
	for p := range r.parts {
		if r.parts[p].Load() != nil {
			n++
		}
	}
	return n
}

// sweepSoon asks for a sweep; requests made while one is pending are one.
func (r *run) sweepSoon() {
	select {
	case r.sweeps <- struct{}{}:
	default:
	}
}
