package controller

import (
	"context"
	"time"
)

// resyncSpread is the share of the resync period, in percent, over which a
// resync spreads its checks. Providers count their API calls against rate
// limits refilled by the second (ECS: 20 reads a second, after a burst of
// 100), so a resync that asked about every tenant at once would be
// throttled for much of what it asks, however few the calls a tenant
// costs; spread out, it asks at a steady rate. The rest of the period
// leaves room for the jitter of the next start (±10%) and the last checks
// to finish.
const resyncSpread = 80

// pacer spreads n starts evenly over span from begin: start i (from 0) is
// due at begin + span·i/n. Starts past the n-th are due at begin + span,
// when the resync meant to be done: a fleet grown since n was counted is
// checked then, Workers at a time, not spread over a longer span.
type pacer struct {
	begin time.Time
	span  time.Duration
	n     int
}

// due is when start i may begin.
func (p pacer) due(i int) time.Time {
	if p.n <= 0 {
		return p.begin
	}
	return p.begin.Add(time.Duration(int64(p.span) * int64(min(i, p.n)) / int64(p.n)))
}

// waitUntil waits until the controller's clock says t, or ctx ends.
func (c *Controller) waitUntil(ctx context.Context, t time.Time) error {
	if c.wait != nil {
		return c.wait(ctx, t)
	}
	d := t.Sub(c.opts.Now())
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
