package controller

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// backoff is the delay before retrying after the given failed attempt
// (1-based): base·2^(attempt-1) capped at max, then "equal jitter" — half
// fixed, half random — so that tenants failing together do not retry
// together.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// jitter spreads a period by ±10%.
func jitter(d time.Duration) time.Duration {
	spread := int64(d) / 10
	return d - time.Duration(spread) + time.Duration(rand.Int64N(2*spread+1))
}

func itoa(i int) string { return strconv.Itoa(i) }
