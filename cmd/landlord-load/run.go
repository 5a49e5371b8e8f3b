package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// sampleEvery is how often the server's resident set is sampled.
const sampleEvery = 100 * time.Millisecond

// run measures the server as opts say and writes the report to stdout,
// progress to stderr. It fails when the run could not finish or any request
// failed; the report, as far as it got, is written either way.
func run(ctx context.Context, opts options, stdout, stderr io.Writer) error {
	rep, runErr := measure(ctx, opts, stderr)
	if rep != nil {
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
	return runErr
}

// measure runs one measurement as opts say, writing progress to progress,
// and returns its report, as far as it got when it fails (nil when nothing
// was measured). It fails when the run could not finish or any request
// failed.
func measure(ctx context.Context, opts options, progress io.Writer) (*Report, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	tr := newTransport(max(opts.concurrency, opts.readers) + 4)
	c, err := client.New(client.Config{Address: opts.address, Token: opts.token, HTTPClient: tr.client()})
	if err != nil {
		return nil, err
	}
	mon, err := startMonitor(opts.pid, opts.dbPid, sampleEvery)
	if err != nil {
		return nil, err
	}
	defer mon.Close()
	l := &loader{c: c, opts: opts, mon: mon, progress: progress}
	rep, err := l.run(ctx)
	if rep != nil {
		rep.Connections = tr.connections()
	}
	if err != nil {
		return rep, err
	}
	if n := rep.errors(); n > 0 {
		return rep, fmt.Errorf("%d requests failed", n)
	}
	return rep, nil
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
	l.rep.Database = l.databaseSummary()
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
	l.rep.Phases = append(l.rep.Phases, phaseBetween(name, l.last, s, l.opts.pid != 0, l.opts.dbPid != 0))
	l.last = s
	return nil
}

// phaseBetween is what was used between snapshots a and b, by the server
// and the database server when they are watched.
func phaseBetween(name string, a, b snapshot, server, database bool) Phase {
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
			MaxAnonMiB: mib(b.serverMaxAnon),
		}
	}
	if database {
		cpu := b.database - a.database
		other -= cpu
		p.Database = &PhaseDatabase{CPUS: seconds(cpu), CPUPercent: percentOf(cpu, wall)}
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
		s.PeakAnonMiB = max(s.PeakAnonMiB, p.Server.MaxAnonMiB)
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
	s.CPUPerTenantMS = l.perTenant(seen, lifecycle)
	return s
}

// databaseSummary sums the phases up, when the database server was
// watched.
func (l *loader) databaseSummary() *Database {
	if l.opts.dbPid == 0 {
		return nil
	}
	var lifecycle float64
	seen := 0
	for _, p := range l.rep.Phases {
		if slices.Contains(lifecyclePhases, p.Name) && p.Database != nil {
			lifecycle += p.Database.CPUS
			seen++
		}
	}
	return &Database{PID: l.opts.dbPid, CPUPerTenantMS: l.perTenant(seen, lifecycle)}
}

// perTenant is cpu seconds over the tenants created, in milliseconds to the
// microsecond, when seen is every phase of a lifecycle; nil otherwise.
func (l *loader) perTenant(seen int, cpu float64) *float64 {
	if seen != len(lifecyclePhases) || l.rep.Create.OK == 0 {
		return nil
	}
	ms := float64(int64(1000*1000*cpu/float64(l.rep.Create.OK)+0.5)) / 1000
	return &ms
}

// waitEmpty lists one tenant that opts select every --poll until there is
// none. A failed tenant stops it: it would never be ready or gone.
func (l *loader) waitEmpty(ctx context.Context, opts client.ListOptions) (polls int, err error) {
	return waitNone(ctx, l.c, opts, l.opts.poll)
}

// waitNone lists one tenant that opts select every poll until there is
// none. A failed tenant stops it: it would never be ready or gone.
func waitNone(ctx context.Context, c *client.Client, opts client.ListOptions, poll time.Duration) (polls int, err error) {
	opts.PageSize = 1
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		polls++
		page, err := c.Tenants().List(ctx, opts)
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
