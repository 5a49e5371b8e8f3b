package oidctest

import (
	"sync"
	"time"
)

// Clock is a clock that a test moves, for a verifier's Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at now, to the second.
func NewClock() *Clock { return &Clock{now: time.Now().Truncate(time.Second)} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
