// Package poll waits in tests for a condition to hold: the one
// eventually-style helper of landlord's tests, so that no test waits for
// time instead of for what it needs.
package poll

import (
	"testing"
	"time"
)

// Interval is how often Until asks again once it has waited a while.
const Interval = 10 * time.Millisecond

// first is Until's first wait, which doubles up to Interval: a test that
// acts as soon as the condition holds (stops a controller between
// attempts a millisecond apart) sees it within a millisecond or two, and a
// long wait still asks every Interval.
const first = time.Millisecond

// Until asks cond until it holds and fails t (with what, the time allowed
// and what cond last said) when it has not within timeout.
func Until(t testing.TB, what string, timeout time.Duration, cond func() (ok bool, last string)) {
	t.Helper()
	if ok, last := ask(timeout, cond); !ok {
		t.Fatalf("%s: not within %s; last: %s", what, timeout, last)
	}
}

// Eventually is Until for a check after which the test carries on (as
// testify's assert.Eventually is to require.Eventually): when cond has not
// held within timeout, it marks t failed with the same message and returns
// false.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() (ok bool, last string)) bool {
	t.Helper()
	ok, last := ask(timeout, cond)
	if !ok {
		t.Errorf("%s: not within %s; last: %s", what, timeout, last)
	}
	return ok
}

// ask asks cond until it holds or timeout has passed, and returns whether
// it held and what it last said.
func ask(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	for wait := first; ; wait = next(wait) {
		ok, last := cond()
		if ok || time.Now().After(deadline) {
			return ok, last
		}
		time.Sleep(wait)
	}
}

// next is the wait after wait: twice as long, at most Interval.
func next(wait time.Duration) time.Duration { return min(2*wait, Interval) }
