// Package poll waits in tests for a condition to hold: the one
// eventually-style helper of landlord's tests, so that no test waits for
// time instead of for what it needs.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until asks again.
const Interval = 10 * time.Millisecond

// Until asks cond until it holds and fails t (with what, the time allowed
// and what cond last said) when it has not within timeout.
func Until(t testing.TB, what string, timeout time.Duration, cond func() (ok bool, last string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
		}
		time.Sleep(Interval)
	}
}
