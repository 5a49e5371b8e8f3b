package main

import (
	"bytes"
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// SuiteReport is what the suite measured. Durations are in seconds (_s) or
// milliseconds (_ms); sizes in MiB.
type SuiteReport struct {
	// Command is the suite's command line.
	Command  string    `json:"command"`
	Scale    float64   `json:"scale"`
	Landlord Binary    `json:"landlord"`
	Machine  Machine   `json:"machine"`
	Started  time.Time `json:"started"`
	WallS    float64   `json:"wall_s"`
	// PostgresSettings are the cluster's settings beside pgtest's own;
	// absent when no PostgreSQL part ran.
	PostgresSettings []string      `json:"postgres_settings,omitempty"`
	Runs             []DatabaseRun `json:"runs"`
	// Replicas is nil when the replica part did not run.
	Replicas *Replicas `json:"replicas,omitempty"`
}

// Binary is the landlord binary the suite ran.
type Binary struct {
	Path string `json:"path"`
	// Revision and Modified are the commit it was built from and whether
	// the tree had changes, when the build recorded them.
	Revision  string `json:"revision,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
}

// Machine is where the suite ran.
type Machine struct {
	CPUs  int    `json:"cpus"`
	Model string `json:"model,omitempty"`
}

// DatabaseRun is one measurement on one database.
type DatabaseRun struct {
	// Database is sqlite or postgres.
	Database string `json:"database"`
	Tenants  int    `json:"tenants"`
	// Command is the landlord-load command that measures the same way
	// against a server started by hand.
	Command string  `json:"command"`
	Report  *Report `json:"report"`
}

// Replicas are the replica runs and their settings.
type Replicas struct {
	Tenants int `json:"tenants"`
	// LatencyMS is what the mock provider adds to each call.
	LatencyMS float64 `json:"latency_ms"`
	// Workers is controller.workers of each replica.
	Workers   int     `json:"workers"`
	LeaseTTLS float64 `json:"lease_ttl_s"`
	ResyncS   float64 `json:"resync_s"`
	// Config is every replica's configuration file.
	Config string       `json:"config"`
	Runs   []ReplicaRun `json:"runs"`
	// SpeedUp is the 1-replica run's first create → all ready over the
	// 3-replica run's; nil until both ran.
	SpeedUp *float64 `json:"speed_up,omitempty"`
}

// ReplicaRun is one run of replicas sharing a database.
type ReplicaRun struct {
	Name     string `json:"name"`
	Replicas int    `json:"replicas"`
	Tenants  int    `json:"tenants"`
	PIDs     []int  `json:"pids"`
	// LeasesSettledS is how long after the replicas started no lease
	// had changed hands for a lease TTL; LeasesUnsettled says the suite
	// stopped waiting for it.
	LeasesSettledS  float64  `json:"leases_settled_s,omitempty"`
	LeasesUnsettled bool     `json:"leases_unsettled,omitempty"`
	Create          Requests `json:"create"`
	// ReadyFromFirstS is from the first create until every tenant is
	// ready.
	ReadyFromFirstS float64 `json:"ready_from_first_s"`
	// Provisions are, per replica, the provisions that succeeded by its
	// /metrics at the end; null for a killed replica.
	Provisions []*int `json:"provisions"`
	Ledger     Ledger `json:"ledger"`
	// Kill is nil when no replica was killed.
	Kill *Kill `json:"kill,omitempty"`
}

// Ledger counts the tenants of a replica run at its end.
type Ledger struct {
	// Created are the creates answered with success; Found the tenants
	// under the run's prefix at the end.
	Created int `json:"created"`
	Found   int `json:"found"`
	// Ready are the found tenants that are ready; ReadyOnce those whose
	// history shows one move to ready, ReadyTwice more than one.
	Ready      int `json:"ready"`
	ReadyOnce  int `json:"ready_once"`
	ReadyTwice int `json:"ready_more_than_once"`
	// Lost were created and not found; Unexpected found and not created.
	Lost       int `json:"lost"`
	Unexpected int `json:"unexpected"`
}

// exact reports whether every one of n tenants was created, is there, is
// ready and became ready once.
func (l Ledger) exact(n int) bool {
	return l.Created == n && l.Found == n && l.Ready == n && l.ReadyOnce == n &&
		l.ReadyTwice == 0 && l.Lost == 0 && l.Unexpected == 0
}

// Kill is the replica killed in a run and what became of its share.
type Kill struct {
	// Replica numbers it from 1, in the order the replicas started.
	Replica int `json:"replica"`
	PID     int `json:"pid"`
	// AtS is when it had exited, after the first create.
	AtS float64 `json:"at_s"`
	// ReadyAtKill and PendingAtKill are the tenants ready and not at the
	// kill.
	ReadyAtKill   int `json:"ready_at_kill"`
	PendingAtKill int `json:"pending_at_kill"`
	// Tenants is the killed replica's share: the pending tenants whose
	// fencing lease it held, less those it made ready between the suite's
	// reading of the statuses and its death; Leases the leases it held.
	Tenants int      `json:"tenants"`
	Leases  []string `json:"leases"`
	// LeasesMovedAfterS is from the kill until the suite saw each of
	// Leases held by another replica, polling every 20 ms.
	LeasesMovedAfterS float64 `json:"leases_moved_after_s"`
	// ResumedAfterS is from the kill to the first event of a tenant of
	// its share; ReadyAfterS to the last of them becoming ready. Both
	// include the time the tenants waited behind the other replicas' own
	// work.
	ResumedAfterS *float64 `json:"resumed_after_s,omitempty"`
	ReadyAfterS   *float64 `json:"ready_after_s,omitempty"`

	at time.Time
}

// newSuiteReport starts the report of a suite run with opts.
func newSuiteReport(opts suiteOptions) *SuiteReport {
	r := &SuiteReport{Command: opts.command(), Scale: opts.scale, Started: time.Now().UTC(),
		Landlord: Binary{Path: opts.landlord}, Machine: Machine{CPUs: runtime.NumCPU(), Model: cpuModel()}}
	if info, err := buildinfo.ReadFile(opts.landlord); err == nil {
		r.Landlord.GoVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				r.Landlord.Revision = s.Value
			case "vcs.modified":
				r.Landlord.Modified = s.Value == "true"
			}
		}
	}
	return r
}

// cpuModel is the first model name of /proc/cpuinfo, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// broken says which replica runs did not end with every tenant ready
// exactly once, or what else failed in them; nil when none.
func (r *SuiteReport) broken() error {
	if r.Replicas == nil {
		return nil
	}
	var errs []error
	for _, run := range r.Replicas.Runs {
		if !run.Ledger.exact(run.Tenants) {
			errs = append(errs, fmt.Errorf("suite: %s: not every tenant ended ready exactly once: %+v", run.Name, run.Ledger))
		}
		if k := run.Kill; k != nil && (k.ResumedAfterS == nil || k.ReadyAfterS == nil) {
			errs = append(errs, fmt.Errorf("suite: %s: the killed replica's share did not become ready after the kill", run.Name))
		}
	}
	return errors.Join(errs...)
}

// writeJSON writes the report as one indented JSON document.
func (r *SuiteReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeMarkdown writes the report as Markdown, for docs/performance.md.
func (r *SuiteReport) writeMarkdown(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("## landlord-load suite\n\n")
	fmt.Fprintf(&b, "%s, scale %g, on %d CPUs (%s), started %s, took %s.\n",
		r.Landlord.describe(), r.Scale, r.Machine.CPUs, cmp.Or(r.Machine.Model, "model unknown"),
		r.Started.Format(time.RFC3339), time.Duration(r.WallS*float64(time.Second)).Round(time.Second))
	if len(r.Runs) > 0 {
		b.WriteString("\n")
		r.writeRunsTable(&b)
	}
	if r.Replicas != nil {
		b.WriteString("\n")
		r.Replicas.writeMarkdown(&b)
	}
	b.WriteString("\n")
	r.writeCommands(&b)
	_, err := w.Write(b.Bytes())
	return err
}

// describe names the binary and what it was built from.
func (bi Binary) describe() string {
	s := "landlord " + bi.Path
	if bi.Revision != "" {
		rev := bi.Revision[:min(len(bi.Revision), 12)]
		if bi.Modified {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s
}

// writeRunsTable writes issue 19's table: a column per database run.
func (r *SuiteReport) writeRunsTable(b *bytes.Buffer) {
	header := []string{"figure"}
	for _, run := range r.Runs {
		header = append(header, fmt.Sprintf("%s %s", dbTitle(run.Database), commas(run.Tenants)))
	}
	rows := [][]string{header}
	row := func(name string, cell func(rep *Report) string) {
		cells := []string{name}
		for _, run := range r.Runs {
			c := "—"
			if run.Report != nil {
				c = cell(run.Report)
			}
			cells = append(cells, c)
		}
		rows = append(rows, cells)
	}
	row("first create → all ready", func(rep *Report) string { return sig3(rep.Ready.FromFirstS) + " s" })
	row("landlord CPU per tenant lifecycle", func(rep *Report) string {
		if rep.Server == nil {
			return "—"
		}
		return msOrDash(rep.Server.CPUPerTenantMS)
	})
	row("PostgreSQL CPU per tenant lifecycle", func(rep *Report) string {
		if rep.Database == nil {
			return "—"
		}
		return msOrDash(rep.Database.CPUPerTenantMS)
	})
	row(fmt.Sprintf("create p99 (c = %d)", suiteConcurrency), func(rep *Report) string { return sig3(rep.Create.Latency.P99) + " ms" })
	row("get by id p99 (at rest, 1 client)", func(rep *Report) string { return sig3(rep.Reads.GetByID.P99) + " ms" })
	row("landlord peak RSS", func(rep *Report) string {
		if rep.Server == nil {
			return "—"
		}
		return sig3(rep.Server.PeakRSSMiB) + " MiB"
	})
	row("landlord peak anonymous RSS (without the executable's pages)", func(rep *Report) string {
		if rep.Server == nil {
			return "—"
		}
		return sig3(rep.Server.PeakAnonMiB) + " MiB"
	})
	row("creates per second", func(rep *Report) string { return commas(int(rep.Create.PerSecond + 0.5)) })
	row("other CPU in create + ready (the machine's, besides landlord, PostgreSQL and the tool)", func(rep *Report) string {
		other := 0.0
		for _, p := range rep.Phases {
			if p.Name == phaseCreate || p.Name == phaseReady {
				other += p.OtherCPUS
			}
		}
		return sig3(other) + " s"
	})
	row("tenants created; failed requests", func(rep *Report) string {
		return fmt.Sprintf("%s; %d", commas(rep.Create.OK), rep.errors())
	})
	writeMarkdownTable(b, rows)
}

// writeMarkdown writes the replica runs.
func (r *Replicas) writeMarkdown(b *bytes.Buffer) {
	fmt.Fprintf(b, "### Replicas\n\nOne PostgreSQL database shared by the replicas, a new one per run; %s tenants created by %d clients spread over the replicas; "+
		"the mock provider adds %s ms to every call; per replica controller.workers %d, lease_ttl %gs, resync %gs.\n\n",
		commas(r.Tenants), suiteConcurrency, sig3(r.LatencyMS), r.Workers, r.LeaseTTLS, r.ResyncS)
	rows := [][]string{{"run", "first create → all ready", "provisions per replica", "tenants created / ready / ready once; lost, ready twice, unexpected"}}
	for _, run := range r.Runs {
		var prov []string
		for _, p := range run.Provisions {
			if p == nil {
				prov = append(prov, "killed")
			} else {
				prov = append(prov, commas(*p))
			}
		}
		l := run.Ledger
		rows = append(rows, []string{run.Name, sig3(run.ReadyFromFirstS) + " s", strings.Join(prov, ", "),
			fmt.Sprintf("%s / %s / %s; %d, %d, %d", commas(l.Created), commas(l.Ready), commas(l.ReadyOnce), l.Lost, l.ReadyTwice, l.Unexpected)})
	}
	writeMarkdownTable(b, rows)
	if r.SpeedUp != nil {
		fmt.Fprintf(b, "\n3 replicas against 1: **%.2f×** as fast from the first create to all ready (issue 19's target: at least 2.5×).\n", *r.SpeedUp)
	}
	for _, run := range r.Runs {
		k := run.Kill
		if k == nil {
			continue
		}
		fmt.Fprintf(b, "\nKilled with SIGKILL %s s after the first create: replica %d (pid %d), with %s tenants ready and %s not, holding the fencing leases of %s of these (%s). ",
			sig3(k.AtS), k.Replica, k.PID, commas(k.ReadyAtKill), commas(k.PendingAtKill), commas(k.Tenants), leaseList(k.Leases))
		fmt.Fprintf(b, "Its leases were all held by the others **%s s** after the kill (lease TTL %gs). ", sig3(k.LeasesMovedAfterS), r.LeaseTTLS)
		if k.ResumedAfterS != nil && k.ReadyAfterS != nil {
			fmt.Fprintf(b, "Its tenants progressed again **%s s** after the kill, behind the others' own work, and were all ready %s s after it. ", sig3(*k.ResumedAfterS), sig3(*k.ReadyAfterS))
		} else {
			b.WriteString("They did not all progress after the kill. ")
		}
		if run.Ledger.exact(run.Tenants) {
			fmt.Fprintf(b, "Every one of the %s tenants ended ready exactly once: none lost, none created twice.\n", commas(run.Tenants))
		} else {
			fmt.Fprintf(b, "**Not every tenant ended ready exactly once** (see the table).\n")
		}
	}
}

// leaseList names a few leases.
func leaseList(leases []string) string {
	const shown = 4
	if len(leases) <= shown {
		return strings.Join(leases, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(leases[:shown], ", "), len(leases)-shown)
}

// writeCommands writes how to reproduce the report.
func (r *SuiteReport) writeCommands(b *bytes.Buffer) {
	b.WriteString("### Commands\n\n```sh\ngo build -o /tmp/landlord ./cmd/landlord\ngo build -o /tmp/landlord-load ./cmd/landlord-load\n")
	b.WriteString(strings.Replace(strings.Replace(r.Command, "landlord-load", "/tmp/landlord-load", 1), "--landlord "+r.Landlord.Path, "--landlord /tmp/landlord", 1) + "\n```\n")
	if len(r.Runs) == 0 {
		return
	}
	b.WriteString("\nEach database run by hand, against `landlord serve --config mock.yaml --listen 127.0.0.1:18181 --database \"$db\" 2> serve.log & pid=$!` " +
		"on a new database (mock.yaml: `compute: {default: mock, mock: {}}`; for PostgreSQL, `$pgpid` the postmaster's pid, the first line of `postmaster.pid`")
	if len(r.PostgresSettings) > 0 {
		fmt.Fprintf(b, ", the cluster started with `-c %s` and max_connections 200", strings.Join(r.PostgresSettings, " -c "))
	}
	b.WriteString("):\n\n```sh\n")
	for _, run := range r.Runs {
		fmt.Fprintf(b, "%s    # %s\n", run.Command, dbTitle(run.Database))
	}
	b.WriteString("```\n")
}

// writeMarkdownTable writes rows as a Markdown table, the first row its
// header.
func writeMarkdownTable(b *bytes.Buffer, rows [][]string) {
	for i, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", len(row)) + "\n")
		}
	}
}

// sig3 writes x with three significant digits, or as a whole number from
// 100 on.
func sig3(x float64) string {
	switch {
	case x >= 100:
		return commas(int(x + 0.5))
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func msOrDash(ms *float64) string {
	if ms == nil {
		return "—"
	}
	return sig3(*ms) + " ms"
}

// commas writes n with a comma between thousands: 10,000.
func commas(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
