package ecsfake

import (
	"sync"
	"time"
)

// ManualClock is a clock that moves only when told to, so a test decides
// exactly how far tasks have progressed. Give it to the fake as
// Options.Clock; Server.Advance then moves it and brings the fake up to date.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a ManualClock reading start. Times are kept at
// millisecond precision because that is all the ECS wire format carries.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start.UTC().Truncate(time.Millisecond)}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d; a negative d is ignored because the
// fake's state never runs backwards.
func (c *ManualClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
