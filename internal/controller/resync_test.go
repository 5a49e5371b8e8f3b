package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// manualClock is a controller's clock that moves only when the test says:
// a wait for a time returns once Advance has reached it.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	waits   []time.Time // every time waited for, in order
	waiters []manualWaiter
}

type manualWaiter struct {
	until time.Time
	done  chan struct{}
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Wait(ctx context.Context, until time.Time) error {
	c.mu.Lock()
	c.waits = append(c.waits, until)
	if !until.After(c.now) {
		c.mu.Unlock()
		return nil
	}
	w := manualWaiter{until: until, done: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Advance moves the clock on by d and lets go of the waits it reaches.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waiters = slices.DeleteFunc(c.waiters, func(w manualWaiter) bool {
		if w.until.After(c.now) {
			return false
		}
		close(w.done)
		return true
	})
}

// waiting reports whether something waits for a time still to come.
func (c *manualClock) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters) > 0
}

// A resync spreads its checks evenly over 80% of the period, as many as
// the tenants it checks: each starts when its time comes on the
// controller's clock, not before, and at most Workers run at once.
func TestResyncSpreadsChecksOverThePeriod(t *testing.T) {
	const n = 20
	e := newEnv(t, openSQLite(t), ``)
	stop := e.run(t, fast())
	ids := e.createMany(t, "t", n, appConfig)
	e.waitStatus(t, 30*time.Second, tenant.StatusReady, ids...)
	stop()

	clock := newManualClock()
	counter := &checkCounter{Manager: e.manager}
	opts := fast()
	// The resync starts on a timer of its own; the spread of its checks
	// follows the controller's clock, which only the test moves.
	opts.Resync = 10 * time.Millisecond
	opts.Now = clock.Now
	c := controller.New(e.store, counter, opts)
	controller.SetWait(c, clock.Wait)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	begin := clock.Now()
	step := opts.Resync * 80 / 100 / n // 0.4ms of the clock between starts
	// checked waits until exactly want checks have started and the resync
	// waits for the clock to start the next.
	checked := func(want int64) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d checks started, the next waiting", want), func() (bool, string) {
			got := counter.checks.Load()
			return got >= want && clock.waiting(), fmt.Sprintf("%d checks, waiting %t", got, clock.waiting())
		})
		if got := counter.checks.Load(); got != want {
			t.Fatalf("%d checks started by %s of the clock, want %d", got, clock.Now().Sub(begin), want)
		}
	}
	checked(1) // the first at once
	clock.Advance(step - 1)
	checked(1) // not one before its time
	clock.Advance(1)
	checked(2)
	clock.Advance(8 * step) // halfway through the spread
	checked(10)
	clock.Advance(10 * step)
	eventually(t, "every tenant checked", func() (bool, string) {
		got := counter.checks.Load()
		return got >= n, fmt.Sprintf("%d checks", got)
	})

	clock.mu.Lock()
	waits := slices.Clone(clock.waits[:n])
	clock.mu.Unlock()
	for i, got := range waits {
		if want := begin.Add(time.Duration(i) * step); !got.Equal(want) {
			t.Errorf("check %d waited until %s, want %s (the clock's start plus %d·%s)", i, got.Sub(begin), want.Sub(begin), i, step)
		}
	}
}
