package poll

import (
	"testing"
	"time"
)

// Until asks again after 1, 2, 4 and 8 ms, then every Interval.
func TestWaitsDoubleUpToInterval(t *testing.T) {
	var got []time.Duration
	for wait := first; len(got) < 6; wait = next(wait) {
		got = append(got, wait)
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, Interval, Interval}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
}
