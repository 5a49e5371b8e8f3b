package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixedSuiteReport() *SuiteReport {
	pg := fixedReport()
	pgPerTenant := 1.875
	pg.Database = &Database{PID: 5151, CPUPerTenantMS: &pgPerTenant}
	sqlite := fixedReport()
	sqlite.Tenants = 100000
	resumed, ready, speedUp := 5.2, 41.25, 1.02
	one, two, three := 3000, 0, 1850
	return &SuiteReport{
		Command: "landlord-load suite --landlord /build/landlord --scale 0.1", Scale: 0.1,
		Landlord: Binary{Path: "/build/landlord", Revision: "0123456789abcdef0123", Modified: true, GoVersion: "go1.26.8"},
		Machine:  Machine{CPUs: 2, Model: "AMD EPYC"}, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), WallS: 1234.5,
		PostgresSettings: pgSettings,
		Runs: []DatabaseRun{
			{Database: partSQLite, Tenants: 100000, Command: "landlord-load --address 127.0.0.1:18181 -n 100000 -c 16 --pid $pid", Report: sqlite},
			{Database: partPostgres, Tenants: 1000, Command: "landlord-load --address 127.0.0.1:18181 -n 1000 -c 16 --pid $pid --db-pid $pgpid", Report: pg},
		},
		Replicas: &Replicas{Tenants: 3000, LatencyMS: 200, Workers: 16, LeaseTTLS: 5, ResyncS: 3600, Config: "compute: …",
			Runs: []ReplicaRun{
				{Name: "1 replica", Replicas: 1, Tenants: 3000, ReadyFromFirstS: 76.5, Provisions: []*int{&one},
					Ledger: Ledger{Created: 3000, Found: 3000, Ready: 3000, ReadyOnce: 3000}},
				{Name: "3 replicas", Replicas: 3, Tenants: 3000, ReadyFromFirstS: 75, Provisions: []*int{&one, &two, &two},
					Ledger: Ledger{Created: 3000, Found: 3000, Ready: 3000, ReadyOnce: 3000}},
				{Name: "3 replicas, one killed", Replicas: 3, Tenants: 3000, ReadyFromFirstS: 80.25, Provisions: []*int{nil, &two, &three},
					Ledger: Ledger{Created: 3000, Found: 3000, Ready: 2999, ReadyOnce: 2998, ReadyTwice: 1, Lost: 1},
					Kill: &Kill{Replica: 1, PID: 4321, AtS: 25.5, ReadyAtKill: 1000, PendingAtKill: 2000, Tenants: 2000,
						Leases:            []string{"controller/0", "controller/1", "controller/2", "controller/3", "controller/4", "controller/5"},
						LeasesMovedAfterS: 3.125, ResumedAfterS: &resumed, ReadyAfterS: &ready}},
			},
			SpeedUp: &speedUp},
	}
}

func TestSuiteMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := fixedSuiteReport().writeMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	mustMatchGolden(t, filepath.Join("testdata", "suite.golden"), b.Bytes())
}

func TestSuiteBroken(t *testing.T) {
	r := fixedSuiteReport()
	err := r.broken()
	if err == nil || !strings.Contains(err.Error(), "3 replicas, one killed: not every tenant ended ready exactly once") || strings.Contains(err.Error(), "3 replicas:") {
		t.Errorf("broken: %v; want the killed run's ledger alone", err)
	}
	r.Replicas.Runs[2].Ledger = Ledger{Created: 3000, Found: 3000, Ready: 3000, ReadyOnce: 3000}
	if err := r.broken(); err != nil {
		t.Errorf("every tenant ready once: %v", err)
	}
	r.Replicas.Runs[2].Kill.ReadyAfterS = nil
	if err := r.broken(); err == nil || !strings.Contains(err.Error(), "did not become ready after the kill") {
		t.Errorf("a share that never became ready: %v", err)
	}
	r.Replicas = nil
	if err := r.broken(); err != nil {
		t.Errorf("no replica runs: %v", err)
	}
}

func TestParseProvisions(t *testing.T) {
	metrics := `# HELP landlord_provider_operations_total Compute provider operations by provider, operation and outcome.
# TYPE landlord_provider_operations_total counter
landlord_provider_operations_total{operation="provision",outcome="success",provider="mock"} 160
landlord_provider_operations_total{operation="provision",outcome="success",provider="docker"} 2
landlord_provider_operations_total{operation="provision",outcome="error",provider="mock"} 7
landlord_provider_operations_total{operation="destroy",outcome="success",provider="mock"} 9
landlord_provider_operation_duration_seconds_count{operation="provision",outcome="success"} 99
`
	if got, err := parseProvisions(strings.NewReader(metrics)); err != nil || got != 162 {
		t.Errorf("parseProvisions = %d, %v; want 162", got, err)
	}
	if _, err := parseProvisions(strings.NewReader(`landlord_provider_operations_total{operation="provision",outcome="success"} many`)); err == nil {
		t.Error("a value that is not a number: no error")
	}
}

func TestNumbers(t *testing.T) {
	for x, want := range map[float64]string{0.774: "0.77", 6.333: "6.33", 21.06: "21.1", 80.7: "80.7", 337.4: "337", 1234.5: "1,235"} {
		if got := sig3(x); got != want {
			t.Errorf("sig3(%g) = %q, want %q", x, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -2000: "-2,000"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}
