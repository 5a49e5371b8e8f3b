package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms(float64(i + 1))
	}
	for _, tt := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one value, any percentile", []time.Duration{ms(7)}, 99, ms(7)},
		{"p0 is the smallest", hundred, 0, ms(1)},
		{"p50 of 1..100", hundred, 50, ms(50)},
		{"p90 of 1..100", hundred, 90, ms(90)},
		{"p99 of 1..100", hundred, 99, ms(99)},
		{"p100 is the largest", hundred, 100, ms(100)},
		{"nearest rank rounds up", []time.Duration{ms(1), ms(2), ms(3)}, 50, ms(2)},
		{"p99 of 10 is the largest", hundred[:10], 99, ms(10)},
		{"never interpolates", []time.Duration{ms(1), ms(10)}, 50, ms(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d values, %g) = %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	in := []time.Duration{ms(5), ms(1), ms(3), ms(2), ms(4)}
	want := Summary{Count: 5, Mean: 3, P50: 3, P90: 5, P99: 5, Max: 5}
	if diff := cmp.Diff(want, summarize(in)); diff != "" {
		t.Errorf("summarize (-want +got):\n%s", diff)
	}
	if in[0] != ms(5) {
		t.Error("summarize sorted its argument")
	}
	if got := summarize(nil); got != (Summary{}) {
		t.Errorf("summarize(nil) = %+v", got)
	}
	if got := summarize([]time.Duration{1234567 * time.Nanosecond}); got.P50 != 1.235 {
		t.Errorf("1234567ns is %g ms, want 1.235 (to the microsecond)", got.P50)
	}
}

func TestSamplesFromManyGoroutines(t *testing.T) {
	var s samples
	var e errorCount
	done := make(chan struct{})
	for range 8 {
		go func() {
			for i := range 100 {
				s.add(ms(float64(i)))
				e.add(errBoom)
			}
			done <- struct{}{}
		}()
	}
	for range 8 {
		<-done
	}
	if got := s.summary().Count; got != 800 {
		t.Errorf("count %d, want 800", got)
	}
	if n, first := e.count(); n != 800 || len(first) != maxErrorSamples {
		t.Errorf("errors %d with %d samples, want 800 with %d", n, len(first), maxErrorSamples)
	}
}

type boom struct{}

func (boom) Error() string { return "boom" }

var errBoom error = boom{}
