package poll_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	poll.Until(t, "the third call", time.Minute, func() (bool, string) {
		n++
		return n == 3, fmt.Sprint(n)
	})
	if n != 3 {
		t.Errorf("cond asked %d times, want 3", n)
	}
}

// recorder is a testing.TB that records a failure instead of failing the
// goroutine's test; its Fatalf panics with it, to stop as Fatalf does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}

func TestUntilFailsWithWhatItLastSaw(t *testing.T) {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != r {
				panic(p)
			}
		}()
		poll.Until(r, "a condition that never holds", 30*time.Millisecond, func() (bool, string) { return false, "still 0" })
	}()
	if !strings.Contains(r.msg, "a condition that never holds: not within 30ms; last: still 0") {
		t.Errorf("failure %q", r.msg)
	}
}

func TestEventuallyReportsWhatItLastSawAndCarriesOn(t *testing.T) {
	r := &recorder{TB: t}
	if poll.Eventually(r, "a condition that never holds", 30*time.Millisecond, func() (bool, string) { return false, "still 0" }) {
		t.Error("Eventually = true for a condition that never holds")
	}
	if !strings.Contains(r.msg, "a condition that never holds: not within 30ms; last: still 0") {
		t.Errorf("failure %q", r.msg)
	}
}

func TestEventuallyReturnsTrueOnceTheConditionHolds(t *testing.T) {
	n := 0
	if !poll.Eventually(t, "the third call", time.Minute, func() (bool, string) {
		n++
		return n == 3, fmt.Sprint(n)
	}) {
		t.Error("Eventually = false for a condition that holds")
	}
	if n != 3 {
		t.Errorf("cond asked %d times, want 3", n)
	}
}
