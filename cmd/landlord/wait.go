package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// defaultWaitTimeout matches the controller's default progress deadline.
const defaultWaitTimeout = 10 * time.Minute

// waitFlags are --wait and --timeout.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

func addWaitFlags(cmd *cobra.Command, until string) *waitFlags {
	f := &waitFlags{}
	cmd.Flags().BoolVar(&f.wait, "wait", false, "wait until the tenant is "+until+", showing progress; fail if it ends failed")
	cmd.Flags().DurationVar(&f.timeout, "timeout", defaultWaitTimeout, "how long --wait waits (exit code 4 when it runs out)")
	return f
}

// ready waits, when --wait asks, until t is ready with the change just
// made, then prints it.
func (f *waitFlags) ready(cmd *cobra.Command, c *client.Client, t *client.Tenant, output string) error {
	if f.wait {
		var err error
		if t, err = waitFor(cmd, c, *t, f.timeout, client.UntilReady); err != nil {
			return exitFor(err)
		}
	}
	return printTenant(cmd, output, *t)
}

func (f *waitFlags) check(cmd *cobra.Command) error {
	if cmd.Flags().Changed("timeout") && !f.wait {
		return withExitCode(exitUsage, errors.New("--timeout needs --wait"))
	}
	if f.timeout <= 0 {
		return withExitCode(exitUsage, fmt.Errorf("--timeout %s: must be positive", f.timeout))
	}
	return nil
}

// waitFor waits until the tenant meets until, showing progress on stderr:
// on a terminal one line rewritten in place, otherwise a line per change.
// A tenant that ends failed is an error saying why; running out of time is
// exitTimeout.
func waitFor(cmd *cobra.Command, c *client.Client, t client.Tenant, timeout time.Duration, until func(client.Tenant) (bool, error)) (*client.Tenant, error) {
	ctx, cancel := context.WithTimeout(contextOf(cmd), timeout)
	defer cancel()
	stderr := cmd.ErrOrStderr()
	p := newProgress(stderr, stderrIsTerminal(stderr), terminalWidth(stderr))
	p.show(t) // the state the change left it in, before the controller moves it on
	last, err := c.Tenants().Wait(ctx, t.ID, until, p.show)
	p.stop()
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		msg := fmt.Sprintf("gave up waiting for tenant %s after %s", t.Name, timeout)
		if last != nil {
			msg += ": it is still " + progressLine(*last)
		}
		return last, withExitCode(exitTimeout, errors.New(msg))
	}
	return last, err
}

// progress shows a tenant's changes while waiting. On a terminal it is one
// line rewritten in place, every second and on each change, fitted to the
// terminal's width so that it never wraps (a wrapped line leaves a line
// behind at every rewrite). Elsewhere (a file, a pipe, CI) it writes a whole
// line each time the tenant changes, and nothing in between.
type progress struct {
	liveOutput
	t    *client.Tenant // the last state shown
	line string         // the last line shown, without the elapsed time
}

func newProgress(w io.Writer, terminal bool, width int) *progress {
	p := &progress{}
	p.open(w, terminal, width, p.redraw)
	return p
}

func (p *progress) show(t client.Tenant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := t.Name + ": " + progressLine(t)
	if line == p.line {
		return
	}
	p.t, p.line = &t, line
	if !p.terminal {
		fmt.Fprintln(p.w, line)
		return
	}
	p.redraw()
}

// redraw rewrites the terminal's line; called with mu held. The line is
// one column short of the width: some terminals wrap on the last column.
func (p *progress) redraw() {
	if p.t == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", fit(fmt.Sprintf("[%s] %s: %s", p.elapsed(), p.t.Name, progressLine(*p.t)), p.width-1))
}

// stop stops the ticker and ends the terminal's line.
func (p *progress) stop() {
	p.liveOutput.stop()
	if p.terminal && p.t != nil {
		fmt.Fprintln(p.w)
	}
}

// progressLine is a tenant's status, then why: its message, whose cause
// comes first (the controller writes it so), so that a line cut to fit
// keeps the cause.
func progressLine(t client.Tenant) string {
	s := t.Status
	if (t.Status == client.StatusReady || t.Status == client.StatusFailed) && t.ObservedGeneration < t.Generation {
		s += fmt.Sprintf(" (generation %d pending)", t.Generation)
	}
	if t.StatusMessage != "" {
		s += ": " + t.StatusMessage
	}
	return s
}
