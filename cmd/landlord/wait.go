package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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

// stderrIsTerminal is whether progress may rewrite its line; tests set it.
var stderrIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// waitFor waits until the tenant meets until, showing progress on stderr:
// on a terminal one line rewritten in place, otherwise a line per change.
// A tenant that ends failed is an error saying why; running out of time is
// exitTimeout.
func waitFor(cmd *cobra.Command, c *client.Client, t client.Tenant, timeout time.Duration, until func(client.Tenant) (bool, error)) (*client.Tenant, error) {
	ctx, cancel := context.WithTimeout(contextOf(cmd), timeout)
	defer cancel()
	p := newProgress(cmd.ErrOrStderr(), stderrIsTerminal(cmd.ErrOrStderr()))
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

// progress shows a tenant's changes while waiting.
type progress struct {
	w        io.Writer
	terminal bool
	start    time.Time

	mu   sync.Mutex
	line string // the last line shown
	done chan struct{}
	wg   sync.WaitGroup
}

func newProgress(w io.Writer, terminal bool) *progress {
	p := &progress{w: w, terminal: terminal, start: time.Now(), done: make(chan struct{})}
	if terminal {
		// Keep the elapsed time moving while nothing changes.
		p.wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-p.done:
					return
				case <-tick.C:
					p.mu.Lock()
					p.redraw()
					p.mu.Unlock()
				}
			}
		})
	}
	return p
}

func (p *progress) show(t client.Tenant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := t.Name + ": " + progressLine(t)
	if line == p.line {
		return
	}
	p.line = line
	if !p.terminal {
		fmt.Fprintln(p.w, line)
		return
	}
	p.redraw()
}

// redraw rewrites the terminal's line; called with mu held.
func (p *progress) redraw() {
	if p.line == "" {
		return
	}
	elapsed := time.Since(p.start).Truncate(time.Second)
	fmt.Fprintf(p.w, "\r\033[K%s", oneLine(fmt.Sprintf("[%s] %s", elapsed, p.line), 120))
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
	if p.terminal && p.line != "" {
		fmt.Fprintln(p.w)
	}
}

// progressLine is a tenant's status, attempt and message.
func progressLine(t client.Tenant) string {
	s := t.Status
	if (t.Status == client.StatusReady || t.Status == client.StatusFailed) && t.ObservedGeneration < t.Generation {
		s += fmt.Sprintf(" (generation %d pending)", t.Generation)
	}
	if t.Attempts > 0 {
		s += fmt.Sprintf(" (attempt %d)", t.Attempts)
	}
	if t.StatusMessage != "" {
		s += ": " + t.StatusMessage
	}
	return s
}
