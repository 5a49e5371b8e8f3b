package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// testScale makes the suite measure 100 and 1,000 tenants, and 30 in the
// replica runs.
const testScale = "0.01"

// testWorkers are the replicas' workers: with 16 each, 3 replicas would take
// all 30 tenants at once and could finish them between the suite's reading
// of the statuses and the kill, leaving no share to take over.
const testWorkers = "2"

// TestSuite runs the whole suite small, against a landlord binary built for
// the test, and checks the report's structure and invariants: every tenant
// created, ready and deleted, every replica run's tenants ready exactly
// once. It checks no timing.
func TestSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord and runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc, which only Linux has")
	}
	bin := servetest.Binary(t)

	t.Run("sqlite", func(t *testing.T) {
		opts, rep, err := runTestSuite(t, bin, partSQLite)
		if err != nil {
			t.Fatal(err)
		}
		checkDatabaseRuns(t, opts, rep, partSQLite)
		if rep.Replicas != nil || rep.PostgresSettings != nil {
			t.Errorf("--only sqlite ran PostgreSQL: %+v, %v", rep.Replicas, rep.PostgresSettings)
		}
	})

	t.Run("postgres and replicas", func(t *testing.T) {
		opts, rep, err := runTestSuite(t, bin, partPostgres+","+partReplicas)
		if errors.Is(err, pgtest.ErrUnavailable) {
			skipOrFailWithoutPostgres(t, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		checkDatabaseRuns(t, opts, rep, partPostgres)
		checkReplicaRuns(t, opts, rep)
	})
}

// runTestSuite runs the parts of the suite with JSON output, checks that
// the report also renders as Markdown, and returns the report as decoded.
func runTestSuite(t *testing.T, bin, parts string) (suiteOptions, *SuiteReport, error) {
	t.Helper()
	opts, err := parseSuiteFlags([]string{"--landlord", bin, "--scale", testScale, "--only", parts, "--lease-ttl", "2s", "--workers", testWorkers, "--json", "--timeout", "5m"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = runSuite(t.Context(), opts, &stdout, &stderr)
	if err != nil {
		t.Logf("progress:\n%s", stderr.String())
		return opts, nil, err
	}
	var rep SuiteReport
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, stdout.String())
	}
	if rep.Command != opts.command() || rep.Scale != opts.scale || rep.Landlord.Path != bin || rep.Machine.CPUs < 1 {
		t.Errorf("report header: command %q, scale %g, landlord %+v, machine %+v", rep.Command, rep.Scale, rep.Landlord, rep.Machine)
	}
	var md bytes.Buffer
	if err := rep.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, run := range rep.Runs {
		if col := dbTitle(run.Database) + " " + commas(run.Tenants); !strings.Contains(md.String(), col) {
			t.Errorf("the Markdown has no column %q:\n%s", col, md.String())
		}
	}
	return opts, &rep, nil
}

// checkDatabaseRuns checks the runs of one database at the suite's two
// sizes.
func checkDatabaseRuns(t *testing.T, opts suiteOptions, rep *SuiteReport, db string) {
	t.Helper()
	if len(rep.Runs) != len(suiteTenants) {
		t.Fatalf("%d database runs, want %d", len(rep.Runs), len(suiteTenants))
	}
	for i, run := range rep.Runs {
		n := opts.tenants(suiteTenants[i])
		r := run.Report
		if run.Database != db || run.Tenants != n || r == nil {
			t.Errorf("run %d: %s, %d tenants, report %v; want %s, %d", i, run.Database, run.Tenants, r != nil, db, n)
			continue
		}
		if !strings.Contains(run.Command, "-n "+strconv.Itoa(n)+" ") || strings.Contains(run.Command, "--db-pid") != (db == partPostgres) {
			t.Errorf("%s %d: command %q", db, n, run.Command)
		}
		if r.Tenants != n || r.Create.OK != n || r.Delete.OK != n || r.errors() != 0 {
			t.Errorf("%s %d: created %d, deleted %d, %d failed requests", db, n, r.Create.OK, r.Delete.OK, r.errors())
		}
		if r.Ready.Polls < 1 || r.Deleted.Polls < 1 || r.Reads.GetByID.Count != opts.samples() {
			t.Errorf("%s %d: ready %+v, deleted %+v, %d gets by id timed, want %d", db, n, r.Ready, r.Deleted, r.Reads.GetByID.Count, opts.samples())
		}
		var phases []string
		for _, p := range r.Phases {
			phases = append(phases, p.Name)
			if p.Server == nil || (p.Database != nil) != (db == partPostgres) {
				t.Errorf("%s %d: phase %s: server %v, database %v", db, n, p.Name, p.Server, p.Database)
			}
		}
		if got, want := strings.Join(phases, " "), "create ready reads delete deleted"; got != want {
			t.Errorf("%s %d: phases %q, want %q", db, n, got, want)
		}
		if r.Server == nil || r.Server.CPUPerTenantMS == nil || r.Server.PeakRSSMiB <= 0 || r.Server.PeakAnonMiB <= 0 || r.Server.PeakAnonMiB > r.Server.PeakRSSMiB {
			t.Errorf("%s %d: server %+v", db, n, r.Server)
		}
		if db == partPostgres && (r.Database == nil || r.Database.CPUPerTenantMS == nil) {
			t.Errorf("%s %d: no database CPU: %+v", db, n, r.Database)
		}
		if db == partSQLite && r.Database != nil {
			t.Errorf("%s %d: a database server measured: %+v", db, n, r.Database)
		}
	}
}

// checkReplicaRuns checks the counts of the replica runs: every tenant
// ready exactly once, the provisions adding up, and the killed replica's
// share taken over.
func checkReplicaRuns(t *testing.T, opts suiteOptions, rep *SuiteReport) {
	t.Helper()
	r := rep.Replicas
	if r == nil || len(r.Runs) != 3 {
		t.Fatalf("replica runs: %+v", r)
	}
	n := opts.tenants(replicaTenants)
	if strconv.Itoa(r.Workers) != testWorkers || r.Tenants != n || r.LeaseTTLS != 2 || r.SpeedUp == nil ||
		!strings.Contains(r.Config, "latency: 200ms") || !strings.Contains(r.Config, "workers: "+testWorkers) {
		t.Errorf("replicas: %+v", r)
	}
	for i, run := range r.Runs {
		wantReplicas := []int{1, 3, 3}[i]
		if run.Replicas != wantReplicas || run.Tenants != n || len(run.PIDs) != wantReplicas || len(run.Provisions) != wantReplicas {
			t.Errorf("%s: %d replicas (pids %v, provisions %d), %d tenants", run.Name, run.Replicas, run.PIDs, len(run.Provisions), run.Tenants)
			continue
		}
		if !run.Ledger.exact(n) || run.Create.Errors != 0 {
			t.Errorf("%s: not every tenant ready exactly once: %+v, %d creates failed", run.Name, run.Ledger, run.Create.Errors)
		}
		k := run.Kill
		if (k != nil) != (i == 2) {
			t.Errorf("%s: kill %+v", run.Name, k)
			continue
		}
		if k == nil {
			// Without a kill, each tenant was provisioned once, by one
			// replica or another.
			sum := 0
			for _, p := range run.Provisions {
				if p == nil {
					t.Fatalf("%s: a replica without provisions counted", run.Name)
				}
				sum += *p
			}
			if sum != n {
				t.Errorf("%s: %d provisions by the replicas, want %d", run.Name, sum, n)
			}
			continue
		}
		if k.Replica < 1 || k.Replica > 3 || k.PID != run.PIDs[k.Replica-1] {
			t.Fatalf("%s: killed replica %d, pid %d, of %v", run.Name, k.Replica, k.PID, run.PIDs)
		}
		for j, p := range run.Provisions {
			if (p == nil) != (j == k.Replica-1) {
				t.Errorf("%s: provisions of replica %d: %v (replica %d was killed)", run.Name, j+1, p, k.Replica)
			}
		}
		if k.ReadyAtKill+k.PendingAtKill != n || 3*k.ReadyAtKill < n || k.Tenants < 1 || k.Tenants > k.PendingAtKill || len(k.Leases) < 1 {
			t.Errorf("%s: at the kill %d ready, %d not, %d of them the killed replica's under %v", run.Name, k.ReadyAtKill, k.PendingAtKill, k.Tenants, k.Leases)
		}
		if k.ResumedAfterS == nil || k.ReadyAfterS == nil || *k.ResumedAfterS > *k.ReadyAfterS || k.LeasesMovedAfterS <= 0 {
			t.Errorf("%s: the killed replica's leases moved after %g s, its share resumed after %v s, ready after %v s", run.Name, k.LeasesMovedAfterS, k.ResumedAfterS, k.ReadyAfterS)
		}
	}
}

// skipOrFailWithoutPostgres skips t for err, which says no PostgreSQL
// cluster could be started here, or fails it when pgtest.EnvRequire says
// PostgreSQL must be there.
func skipOrFailWithoutPostgres(t *testing.T, err error) {
	t.Helper()
	v := os.Getenv(pgtest.EnvRequire)
	required, perr := strconv.ParseBool(v)
	switch {
	case v == "":
		t.Skipf("no PostgreSQL here: %v\n(%s=1 makes this a failure.)", err, pgtest.EnvRequire)
	case perr != nil:
		t.Fatalf("no PostgreSQL here: %v; and %s=%q is not a boolean", err, pgtest.EnvRequire, v)
	case required:
		t.Fatalf("no PostgreSQL here: %v; %s is set, which makes this a failure", err, pgtest.EnvRequire)
	default:
		t.Skipf("no PostgreSQL here: %v", err)
	}
}

func TestSuiteFlags(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "landlord")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := parseSuiteFlags([]string{"--landlord", bin}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.scale != 1 || strings.Join(o.parts, ",") != "sqlite,postgres,replicas" || o.workers != 16 || o.leaseTTL != 5*time.Second ||
		o.tenants(10000) != 10000 || o.samples() != 2000 || o.command() != "landlord-load suite --landlord "+bin {
		t.Errorf("defaults %+v, command %q", o, o.command())
	}
	o, err = parseSuiteFlags([]string{"--landlord", bin, "--scale", "0.02", "--only", "replicas, sqlite,replicas", "--json", "--workers", "8"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.tenants(10000) != 200 || o.tenants(replicaTenants) != 60 || o.samples() != 40 || !o.has(partSQLite) || o.has(partPostgres) || len(o.parts) != 2 {
		t.Errorf("--scale 0.02 --only replicas,sqlite: %+v", o)
	}
	if want := "landlord-load suite --landlord " + bin + " --scale 0.02 --only replicas,sqlite --workers 8 --json"; o.command() != want {
		t.Errorf("command %q, want %q", o.command(), want)
	}
	if o, _ := parseSuiteFlags([]string{"--landlord", bin, "--scale", "0.00001"}, io.Discard); o.tenants(10000) != 1 || o.samples() != 20 {
		t.Errorf("a tiny scale: %d tenants, %d samples; want at least 1 and 20", o.tenants(10000), o.samples())
	}

	notExec := filepath.Join(t.TempDir(), "landlord")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"no binary", nil, []string{"--landlord is required"}},
		{"not executable", []string{"--landlord", notExec}, []string{"not an executable file"}},
		{"every problem at once", []string{"--landlord", bin, "--scale", "2", "--only", "sqlite,mysql", "--workers", "0", "--lease-ttl", "0s"},
			[]string{"--scale 2", `no part "mysql"`, "--workers must", "--lease-ttl must"}},
		{"no part", []string{"--landlord", bin, "--only", ","}, []string{"names no part"}},
		{"arguments", []string{"--landlord", bin, "extra"}, []string{"unexpected arguments"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSuiteFlags(tt.args, io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}

	var stderr bytes.Buffer
	if code := realMain([]string{"suite"}, env(nil), io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--landlord is required") {
		t.Errorf("landlord-load suite: exit %d, %q", code, stderr.String())
	}
}

// TestSuiteFailsWithTheLog runs the suite with a landlord that exits at
// once, and checks that the error names the server's log and quotes it.
func TestSuiteFailsWithTheLog(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "landlord")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho 'no such command: serve' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts, err := parseSuiteFlags([]string{"--landlord", bin, "--only", "sqlite"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = runSuite(ctx, opts, &stdout, &stderr)
	if !errors.Is(err, errServerExited) || !strings.Contains(err.Error(), "sqlite-10000.log") || !strings.Contains(err.Error(), "no such command: serve") {
		t.Fatalf("err %v; want one naming the log and quoting it", err)
	}
	if !strings.Contains(stdout.String(), "## landlord-load suite") {
		t.Errorf("no report of a suite that failed:\n%s", stdout.String())
	}
	m := regexp.MustCompile(`its log is (\S+\.log)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no log named in %v", err)
	}
	defer os.RemoveAll(filepath.Dir(m[1]))
	if _, err := os.Stat(m[1]); err != nil {
		t.Errorf("the log is not kept: %v", err)
	}
	if !strings.Contains(stderr.String(), filepath.Dir(m[1])) {
		t.Errorf("the progress does not say where the logs are: %q", stderr.String())
	}
}
