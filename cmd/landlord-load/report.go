package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Report is what a run measured. Durations are in seconds (_s) or
// milliseconds (_ms); sizes in MiB.
type Report struct {
	Address     string    `json:"address"`
	Provider    string    `json:"provider"`
	Prefix      string    `json:"prefix"`
	Tenants     int       `json:"tenants"`
	Concurrency int       `json:"concurrency"`
	Started     time.Time `json:"started"`
	// Connections is how many TCP connections the tool opened: about
	// one per worker when they are reused.
	Connections int `json:"connections"`

	Create Requests `json:"create"`
	Ready  Settle   `json:"ready"`
	// ReadsUnderLoad are taken by one client, paced, while the tenants are
	// created and become ready; Reads afterwards, at rest.
	ReadsUnderLoad Reads    `json:"reads_under_load"`
	Reads          Reads    `json:"reads"`
	Delete         Requests `json:"delete"`
	Deleted        Settle   `json:"deleted"`

	Phases []Phase `json:"phases"`
	// Server is nil when the server's pid was not given.
	Server *Server `json:"server,omitempty"`
	// Database is nil when the database server's pid was not given.
	Database *Database `json:"database,omitempty"`
}

// Requests are the creates or the deletes.
type Requests struct {
	OK           int      `json:"ok"`
	Errors       int      `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	WallS        float64  `json:"wall_s"`
	PerSecond    float64  `json:"per_second"`
	Latency      Summary  `json:"latency"`
}

// Settle is how long the tenants took to reach a state (all ready, all
// deleted) after the first and after the last request.
type Settle struct {
	FromFirstS float64 `json:"from_first_s"`
	FromLastS  float64 `json:"from_last_s"`
	// Polls is how many list requests the wait took.
	Polls int `json:"polls"`
}

// Reads are latencies of list pages of 50 and single gets.
type Reads struct {
	// Clients is how many clients read at once.
	Clients int `json:"clients"`
	// ListFirst is the first page; ListCursor pages reached through
	// the cursor, at every depth.
	ListFirst    Summary  `json:"list_first_page"`
	ListCursor   Summary  `json:"list_cursor_page"`
	GetByID      Summary  `json:"get_by_id"`
	GetByName    Summary  `json:"get_by_name"`
	Errors       int      `json:"errors"`
	ErrorSamples []string `json:"error_samples,omitempty"`
}

// Phase is one step of the run and what it cost.
type Phase struct {
	Name     string  `json:"name"`
	WallS    float64 `json:"wall_s"`
	ToolCPUS float64 `json:"tool_cpu_s"`
	// OtherCPUS is the CPU time the rest of the machine used: neither
	// the tool nor the server (when watched). Much of it means the
	// figures of the phase were taken on a busy machine.
	OtherCPUS float64 `json:"other_cpu_s"`
	// Server is nil when the server's pid was not given.
	Server *PhaseServer `json:"server,omitempty"`
	// Database is nil when the database server's pid was not given.
	Database *PhaseDatabase `json:"database,omitempty"`
}

// PhaseDatabase is what the database server (PostgreSQL's postmaster and
// every process it started) used in a phase.
type PhaseDatabase struct {
	CPUS float64 `json:"cpu_s"`
	// CPUPercent is CPU time over wall time: 100 is one core busy.
	CPUPercent float64 `json:"cpu_percent"`
}

// PhaseServer is what the server used in a phase.
type PhaseServer struct {
	CPUS float64 `json:"cpu_s"`
	// CPUPercent is CPU time over wall time: 100 is one core busy.
	CPUPercent float64 `json:"cpu_percent"`
	// MaxRSSMiB is the highest resident set sampled in the phase;
	// PeakRSSMiB the process's peak so far at its end: VmHWM, or a
	// sample above it (the kernel updates VmHWM lazily).
	MaxRSSMiB  float64 `json:"max_rss_mib"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// MaxAnonMiB is the highest anonymous resident set (RssAnon) sampled
	// in the phase: the resident set without the executable's pages.
	MaxAnonMiB float64 `json:"max_anon_mib"`
}

// Server sums up the server's use.
type Server struct {
	PID int `json:"pid"`
	// CPUPerTenantMS is the server's CPU time in the create, ready,
	// delete and deleted phases over the tenants created: one tenant's
	// whole lifecycle.
	CPUPerTenantMS *float64 `json:"cpu_per_tenant_ms,omitempty"`
	// PeakRSSMiB is the highest peak of any phase; PeakAnonMiB the
	// highest anonymous resident set sampled in any.
	PeakRSSMiB  float64 `json:"peak_rss_mib"`
	PeakAnonMiB float64 `json:"peak_anon_mib"`
	// IdleS and IdleCPUPercent are the idle window and the CPU used in
	// it (100 is one core); absent when no idle window was measured.
	IdleS          float64  `json:"idle_s,omitempty"`
	IdleCPUPercent *float64 `json:"idle_cpu_percent,omitempty"`
}

// Database sums up the database server's use.
type Database struct {
	PID int `json:"pid"`
	// CPUPerTenantMS is the database server's CPU time in the create,
	// ready, delete and deleted phases over the tenants created.
	CPUPerTenantMS *float64 `json:"cpu_per_tenant_ms,omitempty"`
}

// phase names.
const (
	phaseCreate  = "create"
	phaseReady   = "ready"
	phaseReads   = "reads"
	phaseIdle    = "idle"
	phaseDelete  = "delete"
	phaseDeleted = "deleted"
)

// lifecyclePhases are the phases one tenant's create → ready → delete →
// deleted spans.
var lifecyclePhases = []string{phaseCreate, phaseReady, phaseDelete, phaseDeleted}

func mib(bytes int64) float64 { return float64(bytes*1000>>20) / 1000 }

// writeJSON writes the report as one indented JSON document.
func (r *Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeTable writes the report for people.
func (r *Report) writeTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "landlord-load: %d tenants, %d clients, provider %s, %s, prefix %s, %d connections\n",
		r.Tenants, r.Concurrency, r.Provider, r.Address, r.Prefix, r.Connections)

	reqs := [][]string{{"requests", "ok", "errors", "wall s", "per s", "p50 ms", "p90 ms", "p99 ms", "max ms"}}
	for _, rq := range []struct {
		name string
		r    Requests
	}{{"create", r.Create}, {"delete", r.Delete}} {
		l := rq.r.Latency
		reqs = append(reqs, []string{rq.name, itoa(rq.r.OK), itoa(rq.r.Errors), f3(rq.r.WallS), f1(rq.r.PerSecond), f3(l.P50), f3(l.P90), f3(l.P99), f3(l.Max)})
	}
	writeRows(&b, reqs)

	writeRows(&b, [][]string{
		{"all settled", "after first s", "after last s", "polls"},
		{"ready", f3(r.Ready.FromFirstS), f3(r.Ready.FromLastS), itoa(r.Ready.Polls)},
		{"deleted", f3(r.Deleted.FromFirstS), f3(r.Deleted.FromLastS), itoa(r.Deleted.Polls)},
	})

	for _, rd := range []struct {
		name string
		r    Reads
	}{{"reads under load", r.ReadsUnderLoad}, {"reads at rest", r.Reads}} {
		rows := [][]string{{fmt.Sprintf("%s (%d client%s, %d errors)", rd.name, rd.r.Clients, plural(rd.r.Clients), rd.r.Errors), "n", "p50 ms", "p90 ms", "p99 ms", "max ms"}}
		for _, s := range []struct {
			name string
			s    Summary
		}{{"list first page", rd.r.ListFirst}, {"list page by cursor", rd.r.ListCursor}, {"get by id", rd.r.GetByID}, {"get by name", rd.r.GetByName}} {
			rows = append(rows, []string{"  " + s.name, itoa(s.s.Count), f3(s.s.P50), f3(s.s.P90), f3(s.s.P99), f3(s.s.Max)})
		}
		writeRows(&b, rows)
	}

	phases := [][]string{{"phase", "wall s", "tool CPU s", "other CPU s", "server CPU s", "server CPU %", "server max RSS MiB", "server peak RSS MiB"}}
	if r.Database != nil {
		phases[0] = append(phases[0], "database CPU s", "database CPU %")
	}
	for _, ph := range r.Phases {
		row := []string{ph.Name, f3(ph.WallS), f3(ph.ToolCPUS), f3(ph.OtherCPUS), "-", "-", "-", "-"}
		if s := ph.Server; s != nil {
			row = append(row[:4], f3(s.CPUS), f1(s.CPUPercent), f1(s.MaxRSSMiB), f1(s.PeakRSSMiB))
		}
		if r.Database != nil {
			row = append(row, "-", "-")
			if d := ph.Database; d != nil {
				row = append(row[:8], f3(d.CPUS), f1(d.CPUPercent))
			}
		}
		phases = append(phases, row)
	}
	writeRows(&b, phases)

	if r.Server != nil {
		perTenant := "no full lifecycle measured (--keep)"
		if r.Server.CPUPerTenantMS != nil {
			perTenant = fmt.Sprintf("%.3f ms CPU per tenant lifecycle", *r.Server.CPUPerTenantMS)
		}
		idle := "no idle window"
		if r.Server.IdleCPUPercent != nil {
			idle = fmt.Sprintf("idle %.2f%% of one core over %gs", *r.Server.IdleCPUPercent, r.Server.IdleS)
		}
		fmt.Fprintf(&b, "\nserver (pid %d): %s, peak RSS %.1f MiB, %s\n", r.Server.PID, perTenant, r.Server.PeakRSSMiB, idle)
	}
	if r.Database != nil {
		perTenant := "no full lifecycle measured (--keep)"
		if r.Database.CPUPerTenantMS != nil {
			perTenant = fmt.Sprintf("%.3f ms CPU per tenant lifecycle", *r.Database.CPUPerTenantMS)
		}
		fmt.Fprintf(&b, "database server (pid %d): %s\n", r.Database.PID, perTenant)
	}
	for _, e := range r.errorSamples() {
		fmt.Fprintf(&b, "error: %s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRows writes a blank line and rows as a table: the first column to
// the left, the others, numbers, to the right.
func writeRows(b *strings.Builder, rows [][]string) {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(cell))
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		for i, cell := range row {
			pad := strings.Repeat(" ", width[i]-len(cell))
			switch {
			case i == 0:
				b.WriteString(cell + pad)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteString("\n")
	}
}

func itoa(n int) string   { return strconv.Itoa(n) }
func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// errorSamples are the first errors of every kind of request.
func (r *Report) errorSamples() []string {
	var out []string
	for _, s := range [][]string{r.Create.ErrorSamples, r.ReadsUnderLoad.ErrorSamples, r.Reads.ErrorSamples, r.Delete.ErrorSamples} {
		for _, e := range s {
			out = append(out, strings.ReplaceAll(e, "\n", " "))
		}
	}
	return out
}

// errors is how many requests failed.
func (r *Report) errors() int {
	return r.Create.Errors + r.ReadsUnderLoad.Errors + r.Reads.Errors + r.Delete.Errors
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
