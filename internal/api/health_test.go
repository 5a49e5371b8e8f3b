package api

import (
	"sync"
	"testing"
	"time"
)

// TestReadyCache: callers without credentials share one run per
// anonReadyTTL, and concurrent ones wait for it rather than start their
// own.
func TestReadyCache(t *testing.T) {
	var c readyCache
	runs := 0
	run := func() bool { runs++; return runs%2 == 1 }
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if !c.get(run) {
				t.Error("a caller did not get the first run's result")
			}
		})
	}
	wg.Wait()
	if runs != 1 {
		t.Errorf("%d runs for 20 callers within the TTL, want 1", runs)
	}
	c.at = c.at.Add(-anonReadyTTL - time.Millisecond)
	if c.get(run) || runs != 2 {
		t.Errorf("after the TTL: %d runs", runs)
	}
}
