package main

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Summary describes a set of latencies, in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

// summarize describes ds; it leaves ds as it is.
func summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var total time.Duration
	for _, d := range s {
		total += d
	}
	return Summary{
		Count: len(s),
		Mean:  millis(total / time.Duration(len(s))),
		P50:   millis(percentile(s, 50)),
		P90:   millis(percentile(s, 90)),
		P99:   millis(percentile(s, 99)),
		Max:   millis(s[len(s)-1]),
	}
}

// percentile is the nearest-rank percentile p (0 to 100) of sorted: the
// smallest value that at least p percent of the values do not exceed. It is
// always one of the values measured, never an interpolation.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)) / 1000
}

// samples collects latencies from many goroutines.
type samples struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
}

func (s *samples) summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return summarize(s.ds)
}

// maxErrorSamples is how many error messages a report keeps.
const maxErrorSamples = 5

// errorCount counts failed requests and keeps the first few messages.
type errorCount struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (e *errorCount) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.first) < maxErrorSamples {
		e.first = append(e.first, err.Error())
	}
}

func (e *errorCount) count() (int, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n, slices.Clone(e.first)
}
