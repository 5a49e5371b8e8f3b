package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func fixedReport() *Report {
	perTenant, idle := 0.85, 0.42
	srv := func(cpu, pct, maxRSS, peak float64) *PhaseServer {
		return &PhaseServer{CPUS: cpu, CPUPercent: pct, MaxRSSMiB: maxRSS, PeakRSSMiB: peak}
	}
	return &Report{
		Address: "http://127.0.0.1:8080", Provider: "mock", Prefix: "load-abc123-", Tenants: 1000, Concurrency: 16,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Connections: 21,
		Create: Requests{OK: 999, Errors: 1, ErrorSamples: []string{"name is taken (409 name_taken)"}, WallS: 1.25, PerSecond: 799.2,
			Latency: Summary{Count: 999, Mean: 1.9, P50: 1.5, P90: 3.25, P99: 8.125, Max: 20.5}},
		Ready:          Settle{FromFirstS: 1.75, FromLastS: 0.5, Polls: 25},
		ReadsUnderLoad: Reads{Clients: 1, ListFirst: Summary{Count: 40, P50: 2, P90: 3, P99: 4, Max: 5}, GetByID: Summary{Count: 30, P50: 0.5, P90: 0.75, P99: 1, Max: 1.5}},
		Reads: Reads{Clients: 1, ListFirst: Summary{Count: 2000, P50: 1.25, P90: 1.5, P99: 2, Max: 3}, ListCursor: Summary{Count: 2000, P50: 1.3, P90: 1.6, P99: 2.1, Max: 4},
			GetByID: Summary{Count: 2000, P50: 0.25, P90: 0.3, P99: 0.5, Max: 1}, GetByName: Summary{Count: 2000, P50: 0.26, P90: 0.31, P99: 0.55, Max: 1.2}},
		Delete:  Requests{OK: 999, WallS: 1, PerSecond: 999, Latency: Summary{Count: 999, Mean: 1, P50: 1, P90: 2, P99: 5, Max: 9}},
		Deleted: Settle{FromFirstS: 1.5, FromLastS: 0.5, Polls: 20},
		Phases: []Phase{
			{Name: phaseCreate, WallS: 1.25, ToolCPUS: 0.3, OtherCPUS: 0.05, Server: srv(0.5, 40, 45.5, 45.5)},
			{Name: phaseReady, WallS: 0.5, ToolCPUS: 0.01, Server: srv(0.2, 40, 46, 46)},
			{Name: phaseReads, WallS: 5, ToolCPUS: 1, Server: srv(2, 40, 46, 46)},
			{Name: phaseIdle, WallS: 30, ToolCPUS: 0, Server: srv(0.13, 0.42, 46, 46)},
			{Name: phaseDelete, WallS: 1, ToolCPUS: 0.2, Server: srv(0.1, 10, 46, 46)},
			{Name: phaseDeleted, WallS: 0.5, ToolCPUS: 0, Server: srv(0.05, 10, 46, 46)},
		},
		Server: &Server{PID: 4242, CPUPerTenantMS: &perTenant, PeakRSSMiB: 46, PeakAnonMiB: 30, IdleS: 30, IdleCPUPercent: &idle},
	}
}

func TestTableGolden(t *testing.T) {
	for _, tt := range []struct {
		name   string
		report func() *Report
	}{
		{"table.golden", fixedReport},
		{"table_database.golden", func() *Report {
			r := fixedReport()
			perTenant := 1.875
			r.Database = &Database{PID: 5151, CPUPerTenantMS: &perTenant}
			for i := range r.Phases {
				r.Phases[i].Database = &PhaseDatabase{CPUS: 0.5 * float64(i), CPUPercent: 12.5 * float64(i)}
			}
			return r
		}},
		{"table_no_pid.golden", func() *Report {
			r := fixedReport()
			r.Server = nil
			for i := range r.Phases {
				r.Phases[i].Server = nil
			}
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.report().writeTable(&b); err != nil {
				t.Fatal(err)
			}
			mustMatchGolden(t, filepath.Join("testdata", tt.name), b.Bytes())
		})
	}
}

func mustMatchGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/landlord-load -update)", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("differs from %s; if meant, run go test ./cmd/landlord-load -update (-want +got):\n%s", golden, diff)
	}
}

func TestJSONReport(t *testing.T) {
	var b bytes.Buffer
	if err := fixedReport().writeJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fixedReport(), &back); diff != "" {
		t.Errorf("the report does not survive JSON (-want +got):\n%s", diff)
	}
	if dec.More() {
		t.Error("more than one JSON document")
	}
	// Scripts read these names: keep them.
	var raw map[string]any
	b.Reset()
	_ = fixedReport().writeJSON(&b)
	_ = json.Unmarshal(b.Bytes(), &raw)
	create := raw["create"].(map[string]any)["latency"].(map[string]any)
	server := raw["server"].(map[string]any)
	for key, v := range map[string]any{"p99_ms": create["p99_ms"], "cpu_per_tenant_ms": server["cpu_per_tenant_ms"],
		"peak_rss_mib": server["peak_rss_mib"], "idle_cpu_percent": server["idle_cpu_percent"], "from_last_s": raw["ready"].(map[string]any)["from_last_s"]} {
		if v == nil {
			t.Errorf("no %s in the JSON report", key)
		}
	}
}

func TestPhaseBetween(t *testing.T) {
	at := time.Unix(100, 0)
	a := snapshot{at: at, toolCPU: time.Second, hostBusy: 100 * time.Second, server: procSample{CPU: 10 * time.Second, RSS: 30 << 20, HWM: 40 << 20}}
	b := snapshot{at: at.Add(4 * time.Second), toolCPU: 1500 * time.Millisecond, hostBusy: 105 * time.Second,
		server: procSample{CPU: 11 * time.Second, RSS: 35 << 20, HWM: 60 << 20}, serverMaxRSS: 61 << 20}
	got := phaseBetween("create", a, b, true, false)
	// 5 s busy: 0.5 the tool's, 1 the server's, 3.5 someone else's.
	want := Phase{Name: "create", WallS: 4, ToolCPUS: 0.5, OtherCPUS: 3.5, Server: &PhaseServer{CPUS: 1, CPUPercent: 25, MaxRSSMiB: 61, PeakRSSMiB: 61}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phaseBetween (-want +got):\n%s", diff)
	}
	if got := phaseBetween("create", a, b, false, false); got.Server != nil || got.Database != nil || got.OtherCPUS != 4.5 {
		t.Errorf("no server watched: server %+v, other CPU %g s, want none and 4.5", got.Server, got.OtherCPUS)
	}
	// 2 s of the 3.5 were the database server's.
	a.database, b.database = 20*time.Second, 22*time.Second
	want.OtherCPUS, want.Database = 1.5, &PhaseDatabase{CPUS: 2, CPUPercent: 50}
	if diff := cmp.Diff(want, phaseBetween("create", a, b, true, true)); diff != "" {
		t.Errorf("phaseBetween with the database (-want +got):\n%s", diff)
	}
}

func TestServerSummary(t *testing.T) {
	l := &loader{opts: options{pid: 4242}, rep: fixedReport()}
	l.rep.Server = nil
	l.last.server.HWM = 46 << 20
	got := l.serverSummary()
	// (0.5 + 0.2 + 0.1 + 0.05) CPU seconds over 999 tenants; reads and
	// idle are not part of a lifecycle.
	if got.CPUPerTenantMS == nil || *got.CPUPerTenantMS != 0.851 {
		t.Errorf("CPU per tenant %v, want 0.851 ms", got.CPUPerTenantMS)
	}
	if got.IdleCPUPercent == nil || *got.IdleCPUPercent != 0.42 || got.IdleS != 30 || got.PeakRSSMiB != 46 {
		t.Errorf("summary %+v", got)
	}

	if got := l.databaseSummary(); got != nil {
		t.Errorf("no database watched, summary %+v", got)
	}
	l.opts.dbPid = 77
	for i := range l.rep.Phases {
		l.rep.Phases[i].Database = &PhaseDatabase{CPUS: float64(i + 1)}
	}
	// create 1, ready 2, delete 5, deleted 6: 14 s over 999 tenants.
	if got := l.databaseSummary(); got == nil || got.PID != 77 || got.CPUPerTenantMS == nil || *got.CPUPerTenantMS != 14.014 {
		t.Errorf("database summary %+v, want 14.014 ms per tenant", got)
	}

	l.rep.Phases = l.rep.Phases[:4] // --keep: no delete phases
	if got := l.serverSummary(); got.CPUPerTenantMS != nil {
		t.Errorf("without deletes, CPU per tenant %v; want none", *got.CPUPerTenantMS)
	}
	if got := l.databaseSummary(); got.CPUPerTenantMS != nil {
		t.Errorf("without deletes, database CPU per tenant %v; want none", *got.CPUPerTenantMS)
	}
}
