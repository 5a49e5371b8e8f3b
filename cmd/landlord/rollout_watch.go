package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// Polling intervals of a watch: pollMin after each change, slowing down to
// pollMax while nothing changes.
const (
	watchPollMin = 250 * time.Millisecond
	watchPollMax = 2 * time.Second
)

// watchRollout follows a rollout until it is over, showing each wave's
// progress on stderr (see rolloutProgress), and returns it as it ended. A
// rollout that completes is success; one that ends aborted, or halts on
// its failure budget (it waits for someone then), is an error saying so;
// a paused one is followed until it is resumed. With a timeout, running
// out of it is exitTimeout.
func watchRollout(cmd *cobra.Command, c *client.Client, id string, timeout time.Duration) (*client.Rollout, error) {
	ctx := contextOf(cmd)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stderr := cmd.ErrOrStderr()
	p := newRolloutProgress(stderr, stderrIsTerminal(stderr), terminalWidth(stderr))
	defer p.stop()
	var last *client.Rollout
	interval := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return last, watchEnded(ctx, id, timeout, last)
		case <-time.After(interval):
		}
		ro, err := c.Rollouts().Get(ctx, id)
		switch {
		case ctx.Err() != nil:
			return last, watchEnded(ctx, id, timeout, last)
		case err != nil && last != nil && transientError(err):
			interval = min(max(interval*2, watchPollMin), watchPollMax)
			continue
		case err != nil:
			return last, exitFor(fmt.Errorf("rollout %s: %w", id, err))
		}
		if p.show(*ro) {
			interval = watchPollMin
		} else {
			interval = min(max(interval*3/2, watchPollMin), watchPollMax)
		}
		last = ro
		switch ro.State {
		case client.RolloutCompleted:
			return ro, nil
		case client.RolloutAborted:
			return ro, withExitCode(exitFailure, fmt.Errorf("rollout %s was aborted%s", ro.ID, rolledBack(*ro)))
		case client.RolloutHalted:
			return ro, withExitCode(exitFailure, fmt.Errorf("rollout %s halted: %s failed, more than its failure budget (--max-failures %d); resume it with landlord rollout resume %s, or abort it with landlord rollout abort %s --rollback",
				ro.ID, plural(len(ro.Failed), "tenant"), ro.MaxFailures, ro.ID, ro.ID))
		}
	}
}

// rolledBack says how many tenants an aborted rollout moved back, if any.
func rolledBack(ro client.Rollout) string {
	if n := ro.Counts[client.MemberRolledBack]; n > 0 {
		return fmt.Sprintf(", and %s rolled back", plural(n, "tenant"))
	}
	return ""
}

// watchEnded is the error of a watch whose context ended: exitTimeout when
// its timeout ran out.
func watchEnded(ctx context.Context, id string, timeout time.Duration, last *client.Rollout) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && timeout > 0 {
		msg := fmt.Sprintf("gave up watching rollout %s after %s", id, timeout)
		if last != nil {
			msg += ": it is " + stateText(*last)
		}
		return withExitCode(exitTimeout, errors.New(msg))
	}
	return exitFor(fmt.Errorf("rollout %s: %w", id, ctx.Err()))
}

// transientError reports whether err may pass if the request is made again:
// the API could not be reached, or answered 502, 503 or 504.
func transientError(err error) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return true
	}
	switch ce.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// rolloutProgress shows a rollout's progress while watching: a line for
// the rollout, one per wave, and one naming the tenants that failed. On a
// terminal the lines are a block redrawn in place, every second and on
// each change, each line fitted to the terminal's width so that none
// wraps. Elsewhere (a file, a pipe, CI) each line is written when it
// changes, and nothing in between.
type rolloutProgress struct {
	liveOutput
	ro    *client.Rollout // the last state shown
	last  []string        // the last lines shown, without the elapsed time
	drawn int             // the lines of the block on the terminal
}

func newRolloutProgress(w io.Writer, terminal bool, width int) *rolloutProgress {
	p := &rolloutProgress{}
	p.open(w, terminal, width, p.redraw)
	return p
}

// show shows ro, and reports whether anything shown changed.
func (p *rolloutProgress) show(ro client.Rollout) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := progressLines(ro, now(), p.terminal)
	changed := len(lines) != len(p.last)
	for i, l := range lines {
		if i >= len(p.last) || p.last[i] != l {
			changed = true
			if !p.terminal {
				fmt.Fprintln(p.w, l)
			}
		}
	}
	p.ro, p.last = &ro, lines
	if p.terminal && changed {
		p.redraw()
	}
	return changed
}

// redraw rewrites the block on the terminal; called with mu held. It goes
// up to the block's first line, erases to the end of the screen and writes
// the lines, each one column short of the width (some terminals wrap on
// the last column).
func (p *rolloutProgress) redraw() {
	if p.ro == nil {
		return
	}
	lines := progressLines(*p.ro, now(), true)
	lines[0] = fmt.Sprintf("[%s] %s", p.elapsed(), lines[0])
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\r\033[%dA", p.drawn)
	}
	b.WriteString("\r\033[J")
	for _, l := range lines {
		b.WriteString(fit(l, p.width-1))
		b.WriteByte('\n')
	}
	p.drawn = len(lines)
	_, _ = io.WriteString(p.w, b.String())
}

// progressLines are the lines that show a rollout's progress: the
// rollout's, each wave's, and the failed tenants' when there are any.
// Without a terminal, a bake's end is a time, so that a line does not
// change every minute.
func progressLines(ro client.Rollout, at time.Time, terminal bool) []string {
	// The state comes first, so that a line cut to fit keeps it; the id
	// is the one asked for, or printed above.
	lines := []string{fmt.Sprintf("%s (plan %s, %s)", stateText(ro), ro.Plan, versionsCell(ro.FromVersion, ro.ToVersion))}
	for i, wv := range ro.Waves {
		l := fmt.Sprintf("wave %s: %s: %s", wv.Name, waveStatus(ro, i, at, terminal), countsText(wv.Counts, wv.Size))
		if i == ro.Wave && len(ro.Waiting) > 0 {
			ns := make([]string, len(ro.Waiting))
			for j, t := range ro.Waiting {
				ns[j] = t.TenantName
			}
			l += fmt.Sprintf("; %d waiting for their maintenance windows (%s)", len(ns), names(ns))
		}
		lines = append(lines, l)
	}
	if len(ro.Failed) > 0 {
		lines = append(lines, fmt.Sprintf("failed: %s", names(ro.Failed)))
	}
	return lines
}
