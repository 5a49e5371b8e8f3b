package tenantlock

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestOneHolderPerTenant(t *testing.T) {
	var l Locks
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			defer l.Lock("a")()
			n := inside.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			inside.Add(-1)
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d goroutines held one tenant's lock at once, want 1", most.Load())
	}
	if l.Len() != 0 {
		t.Errorf("%d locks kept after every holder left, want 0", l.Len())
	}
}

func TestTenantsDoNotWaitForEachOther(t *testing.T) {
	var l Locks
	unlockA := l.Lock("a")
	done := make(chan struct{})
	go func() { l.Lock("b")(); close(done) }()
	<-done // would hang if b waited for a
	unlockA()
}
