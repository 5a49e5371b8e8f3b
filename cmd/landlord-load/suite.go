package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// suiteConcurrency is -c of every run: issue 19's create p99 is at c = 16.
const suiteConcurrency = 16

// suitePoll is --poll of every run, the default.
const suitePoll = 20 * time.Millisecond

// pgSettings are the suite's PostgreSQL settings beside pgtest's own
// (max_connections 200, TimeZone UTC): durable commits, as in production and
// in the figures of docs/performance.md, which used these shared_buffers.
var pgSettings = []string{"fsync=on", "synchronous_commit=on", "full_page_writes=on", "shared_buffers=256MB"}

// mockConfig is the configuration of the server of a database run: the mock
// provider without latency, every controller setting at its default.
const mockConfig = "log_level: info\ncompute:\n  default: mock\n  mock: {}\n"

// suite runs the parts of the suite and fills its report.
type suite struct {
	opts suiteOptions
	// dir holds the servers' configurations, logs and SQLite databases.
	dir      string
	progress io.Writer
	// cluster is the PostgreSQL cluster of the postgres and replica
	// parts; nil when neither runs.
	cluster *pgtest.Cluster
	rep     *SuiteReport
}

func (s *suite) say(format string, args ...any) {
	fmt.Fprintf(s.progress, "landlord-load suite: "+format+"\n", args...)
}

// runSuite runs the suite as opts say and writes its report to stdout,
// progress to stderr. The report is written, as far as the suite got, even
// when it fails; then the servers' logs are kept and named.
func runSuite(ctx context.Context, opts suiteOptions, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "landlord-load-suite-")
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	s := &suite{opts: opts, dir: dir, progress: stderr, rep: newSuiteReport(opts)}
	runErr := s.run(ctx)
	if runErr == nil {
		runErr = s.rep.broken()
	}
	s.rep.WallS = seconds(time.Since(s.rep.Started))
	var err2 error
	if opts.json {
		err2 = s.rep.writeJSON(stdout)
	} else {
		err2 = s.rep.writeMarkdown(stdout)
	}
	if runErr != nil {
		s.say("the servers' configurations and logs are in %s", dir)
		return runErr
	}
	if err := os.RemoveAll(dir); err != nil {
		s.say("could not remove %s: %v", dir, err)
	}
	return err2
}

// run runs every part asked for, in order, and stops at the first that
// fails.
func (s *suite) run(ctx context.Context) (err error) {
	if s.opts.has(partPostgres) || s.opts.has(partReplicas) {
		s.say("starting a PostgreSQL cluster (%s)", strings.Join(pgSettings, " "))
		c, err := pgtest.StartCluster(pgSettings...)
		if err != nil {
			return fmt.Errorf("suite: %w", err)
		}
		s.cluster = c
		s.rep.PostgresSettings = pgSettings
		defer func() {
			if stopErr := c.Stop(); stopErr != nil {
				err = errors.Join(err, fmt.Errorf("suite: stop PostgreSQL: %w", stopErr))
			}
		}()
	}
	for _, db := range []string{partSQLite, partPostgres} {
		if !s.opts.has(db) {
			continue
		}
		for _, n := range suiteTenants {
			run, err := s.databaseRun(ctx, db, s.opts.tenants(n))
			if run != nil {
				s.rep.Runs = append(s.rep.Runs, *run)
			}
			if err != nil {
				return err
			}
		}
	}
	if s.opts.has(partReplicas) {
		return s.replicaRuns(ctx)
	}
	return nil
}

// databaseRun measures n tenants on a new database of db (partSQLite or
// partPostgres), on a server of its own.
func (s *suite) databaseRun(ctx context.Context, db string, n int) (*DatabaseRun, error) {
	name := fmt.Sprintf("%s-%d", db, n)
	spec := serverSpec{bin: s.opts.landlord, dir: s.dir, name: name, config: mockConfig}
	dbPid := 0
	switch db {
	case partSQLite:
		spec.database = filepath.Join(s.dir, name+".db")
	case partPostgres:
		dbName := pgName(name)
		url, err := s.cluster.CreateDatabase(ctx, dbName)
		if err != nil {
			return nil, fmt.Errorf("suite: %s: %w", name, err)
		}
		defer s.dropDatabase(dbName)
		spec.database, dbPid = url, s.cluster.PID()
	}
	srv, err := startServer(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("suite: %s: %w", name, err)
	}
	s.say("%s, %d tenants: landlord serve (pid %d) on %s, log %s", dbTitle(db), n, srv.pid(), srv.address, srv.logPath)
	opts := options{
		address: srv.address, tenants: n, concurrency: suiteConcurrency,
		config: json.RawMessage(defaultConfig), prefix: defaultPrefix(),
		pid: srv.pid(), dbPid: dbPid, timeout: s.opts.timeout,
		samples: s.opts.samples(), readers: 1, poll: suitePoll,
	}
	run := &DatabaseRun{Database: db, Tenants: n, Command: loadCommand(opts)}
	rep, err := measure(ctx, opts, s.progress)
	run.Report = rep
	stopErr := srv.stop()
	if err != nil {
		return run, fmt.Errorf("suite: %s: %w (the server's log is %s)", name, err, srv.logPath)
	}
	if stopErr != nil {
		return run, fmt.Errorf("suite: %s: %w", name, stopErr)
	}
	return run, nil
}

// dropDatabase drops a database of the cluster, to give its disk back;
// a database left behind goes with the cluster.
func (s *suite) dropDatabase(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.cluster.DropDatabase(ctx, name); err != nil {
		s.say("%v", err)
	}
}

// loadCommand is the landlord-load command that measures as opts say, given
// a server started by hand on 127.0.0.1:18181 with its pid in $pid and, for
// PostgreSQL, the postmaster's in $pgpid.
func loadCommand(opts options) string {
	cmd := fmt.Sprintf("landlord-load --address 127.0.0.1:18181 -n %d -c %d --pid $pid", opts.tenants, opts.concurrency)
	if opts.dbPid != 0 {
		cmd += " --db-pid $pgpid"
	}
	return cmd + fmt.Sprintf(" --idle %s --load-read-rate %g --samples %d --json", opts.idle, opts.loadReadRate, opts.samples)
}

// pgName is the name of the PostgreSQL database of the run called name.
func pgName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// dbTitle is how the report names a database.
func dbTitle(db string) string {
	if db == partPostgres {
		return "PostgreSQL"
	}
	return "SQLite"
}
