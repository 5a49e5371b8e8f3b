package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// sampleEvery is how often the server's resident set is sampled.
const sampleEvery = 100 * time.Millisecond

// run measures the server as opts say and writes the report to stdout,
// progress to stderr. It fails when the run could not finish or any request
// failed; the report, as far as it got, is written either way.
func run(ctx context.Context, opts options, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	tr := newTransport(max(opts.concurrency, opts.readers) + 4)
	c, err := client.New(client.Config{Address: opts.address, Token: opts.token, HTTPClient: tr.client()})
	if err != nil {
		return err
	}
	mon, err := startMonitor(opts.pid, sampleEvery)
	if err != nil {
		return err
	}
	defer mon.Close()
	l := &loader{c: c, opts: opts, mon: mon, progress: stderr}
	rep, runErr := l.run(ctx)
	if rep != nil {
		rep.Connections = tr.connections()
		var err error
		if opts.json {
			err = rep.writeJSON(stdout)
		} else {
			err = rep.writeTable(stdout)
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil {
		return runErr
	}
	if n := rep.errors(); n > 0 {
		return fmt.Errorf("%d requests failed", n)
	}
	return nil
}

// loader runs the phases of one measurement.
type loader struct {
	c        *client.Client
	opts     options
	mon      *monitor
	progress io.Writer

	rep     *Report
	tenants tenantRefs
	// last is the snapshot at the end of the previous phase.
	last snapshot
}

// notReady are the statuses of a tenant on its way to ready, and failed,
// which stops the wait.
var notReady = []string{client.StatusRequested, client.StatusProvisioning, client.StatusUpdating, client.StatusFailed}

func (l *loader) say(format string, args ...any) {
	fmt.Fprintf(l.progress, "landlord-load: "+format+"\n", args...)
}

// run runs every phase and returns the report, as far as it got when it
// fails.
func (l *loader) run(ctx context.Context) (*Report, error) {
	o := l.opts
	cfg, err := l.c.Compute().Config(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("reach the API: %w", err)
	}
	if err := l.preflight(ctx); err != nil {
		return nil, err
	}
	l.rep = &Report{Address: l.c.Address(), Provider: cfg.Provider, Prefix: o.prefix, Tenants: o.tenants,
		Concurrency: o.concurrency, Started: time.Now().UTC()}
	if l.last, err = l.mon.snapshot(); err != nil {
		return nil, err
	}

	// Reads are timed, paced, from the first create until every tenant
	// is ready.
	loadCtx, stopReads := context.WithCancel(ctx)
	underLoad := &readSet{}
	readsDone := make(chan struct{})
	go func() {
		defer close(readsDone)
		l.readUnderLoad(loadCtx, underLoad)
	}()
	waitReads := func() {
		stopReads()
		<-readsDone
		l.rep.ReadsUnderLoad = underLoad.reads(1)
	}

	l.say("creating %d tenants %s… with %d clients on %s (provider %s)", o.tenants, o.name(0), o.concurrency, l.c.Address(), cfg.Provider)
	firstCreate := time.Now()
	l.rep.Create = l.create(ctx)
	lastCreate := time.Now()
	if err := l.endPhase(phaseCreate); err != nil {
		waitReads()
		return l.rep, err
	}
	if l.rep.Create.OK == 0 {
		waitReads()
		return l.rep, fmt.Errorf("no tenant was created")
	}
	l.say("created %d (%d errors) in %.3fs; waiting until they are ready", l.rep.Create.OK, l.rep.Create.Errors, l.rep.Create.WallS)
	polls, err := l.waitEmpty(ctx, client.ListOptions{NamePrefix: o.prefix, Statuses: notReady})
	allReady := time.Now()
	waitReads()
	l.rep.Ready = Settle{FromFirstS: seconds(allReady.Sub(firstCreate)), FromLastS: seconds(allReady.Sub(lastCreate)), Polls: polls}
	if err == nil {
		err = l.endPhase(phaseReady)
	}
	if err != nil {
		return l.rep, fmt.Errorf("wait until ready: %w (the tenants %s* remain)", err, o.prefix)
	}
	l.say("all ready %.3fs after the first create, %.3fs after the last", l.rep.Ready.FromFirstS, l.rep.Ready.FromLastS)

	l.say("timing %d reads of each kind with %d client%s", o.samples, o.readers, plural(o.readers))
	l.rep.Reads = l.readAtRest(ctx)
	if err := l.endPhase(phaseReads); err != nil {
		return l.rep, err
	}

	if o.pid != 0 && o.idle > 0 {
		l.say("measuring the idle server for %s", o.idle)
		select {
		case <-ctx.Done():
			return l.rep, ctx.Err()
		case <-time.After(o.idle):
		}
		if err := l.endPhase(phaseIdle); err != nil {
			return l.rep, err
		}
	}

	if !o.keep {
		l.say("deleting %d tenants with %d clients", l.rep.Create.OK, o.concurrency)
		firstDelete := time.Now()
		l.rep.Delete = l.delete(ctx)
		lastDelete := time.Now()
		if err := l.endPhase(phaseDelete); err != nil {
			return l.rep, err
		}
		polls, err := l.waitEmpty(ctx, client.ListOptions{NamePrefix: o.prefix})
		allDeleted := time.Now()
		l.rep.Deleted = Settle{FromFirstS: seconds(allDeleted.Sub(firstDelete)), FromLastS: seconds(allDeleted.Sub(lastDelete)), Polls: polls}
		if err == nil {
			err = l.endPhase(phaseDeleted)
		}
		if err != nil {
			return l.rep, fmt.Errorf("wait until deleted: %w", err)
		}
		l.say("all deleted %.3fs after the first delete, %.3fs after the last", l.rep.Deleted.FromFirstS, l.rep.Deleted.FromLastS)
	}
	l.rep.Server = l.serverSummary()
	return l.rep, nil
}

// preflight checks, before anything is timed, that the token may create
// tenants with this config and that no tenant has the run's prefix.
func (l *loader) preflight(ctx context.Context) error {
	page, err := l.c.Tenants().List(ctx, client.ListOptions{NamePrefix: l.opts.prefix, PageSize: 1})
	if err != nil {
		return fmt.Errorf("list tenants: %w", err)
	}
	if len(page.Tenants) > 0 {
		return fmt.Errorf("--prefix %q: tenant %s already has it; choose another prefix", l.opts.prefix, page.Tenants[0].Name)
	}
	req := client.CreateTenantRequest{Name: l.opts.name(0), ComputeConfig: l.opts.config}
	if _, err := l.c.Tenants().Create(ctx, req, client.CreateOptions{DryRun: true}); err != nil {
		return fmt.Errorf("a dry-run create with --config: %w", err)
	}
	return nil
}

// endPhase records the phase that ends now.
func (l *loader) endPhase(name string) error {
	s, err := l.mon.snapshot()
	if err != nil {
		return err
	}
	l.rep.Phases = append(l.rep.Phases, phaseBetween(name, l.last, s, l.opts.pid != 0))
	l.last = s
	return nil
}

// phaseBetween is what was used between snapshots a and b.
func phaseBetween(name string, a, b snapshot, server bool) Phase {
	wall := b.at.Sub(a.at)
	tool := b.toolCPU - a.toolCPU
	p := Phase{Name: name, WallS: seconds(wall), ToolCPUS: seconds(tool)}
	other := b.hostBusy - a.hostBusy - tool
	if server {
		cpu := b.server.CPU - a.server.CPU
		other -= cpu
		p.Server = &PhaseServer{
			CPUS:       seconds(cpu),
			CPUPercent: percentOf(cpu, wall),
			MaxRSSMiB:  mib(b.serverMaxRSS),
			// VmHWM is updated lazily, so a sample can pass it.
			PeakRSSMiB: mib(max(b.server.HWM, b.serverMaxRSS)),
		}
	}
	if a.hostBusy > 0 && b.hostBusy > 0 {
		p.OtherCPUS = seconds(max(0, other))
	}
	return p
}

// percentOf is 100 × a / b, to a hundredth.
func percentOf(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int64(10000*float64(a)/float64(b)+0.5)) / 100
}

// serverSummary sums the phases up, when the server was watched.
func (l *loader) serverSummary() *Server {
	if l.opts.pid == 0 {
		return nil
	}
	s := &Server{PID: l.opts.pid, PeakRSSMiB: mib(l.last.server.HWM)}
	var lifecycle float64
	seen := 0
	for _, p := range l.rep.Phases {
		s.PeakRSSMiB = max(s.PeakRSSMiB, p.Server.PeakRSSMiB)
		switch p.Name {
		case phaseIdle:
			s.IdleS = p.WallS
			pct := p.Server.CPUPercent
			s.IdleCPUPercent = &pct
		case phaseCreate, phaseReady, phaseDelete, phaseDeleted:
			lifecycle += p.Server.CPUS
			seen++
		}
	}
	if seen == len(lifecyclePhases) && l.rep.Create.OK > 0 {
		ms := float64(int64(1000*1000*lifecycle/float64(l.rep.Create.OK)+0.5)) / 1000
		s.CPUPerTenantMS = &ms
	}
	return s
}

// waitEmpty lists one tenant that opts select every --poll until there is
// none. A failed tenant stops it: it would never be ready or gone.
func (l *loader) waitEmpty(ctx context.Context, opts client.ListOptions) (polls int, err error) {
	opts.PageSize = 1
	t := time.NewTicker(l.opts.poll)
	defer t.Stop()
	for {
		polls++
		page, err := l.c.Tenants().List(ctx, opts)
		if err != nil {
			return polls, err
		}
		if len(page.Tenants) == 0 {
			return polls, nil
		}
		if first := page.Tenants[0]; first.Status == client.StatusFailed {
			return polls, fmt.Errorf("tenant %s failed: %s", first.Name, first.StatusMessage)
		}
		select {
		case <-ctx.Done():
			return polls, ctx.Err()
		case <-t.C:
		}
	}
}
