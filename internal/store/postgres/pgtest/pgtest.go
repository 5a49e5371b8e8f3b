package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	// EnvURL names the variable that points pgtest at a running server
	// instead of a throwaway cluster.
	EnvURL = "LANDLORD_TEST_POSTGRES_URL"

	// EnvRequire names the variable that, set to 1 (or another true value
	// of strconv.ParseBool), turns "no PostgreSQL here" skips into failures.
	EnvRequire = "LANDLORD_REQUIRE_POSTGRES"
)

// psqlTimeout bounds each CREATE and DROP DATABASE.
const psqlTimeout = time.Minute

var (
	mainCalled atomic.Bool

	serverOnce sync.Once
	theServer  *server
	serverErr  error
)

// Main runs the tests of m, then stops the PostgreSQL cluster the tests
// started, if any, and removes its files. It returns the exit code for
// os.Exit. A package that calls NewDatabase calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	if err := stop(); err != nil {
		// The tests have passed or failed on their own merits; a cluster
		// that will not go away is worth a line, not a failed run.
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
	}
	return code
}

// NewDatabase creates a new, empty database for t and returns its
// connection URL (postgres://…). The database is dropped when t and its
// subtests have finished. It skips t when no PostgreSQL server can be had,
// or fails it when EnvRequire is set; see the package documentation.
// NewDatabase is safe to call from parallel tests.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("pgtest: the package's TestMain must run the tests through pgtest.Main, which removes the cluster afterwards:\n\tfunc TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }")
		return ""
	}
	s, err := getServer(t)
	if err != nil {
		report(t, os.Getenv, err)
		return ""
	}
	name := databaseName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), psqlTimeout)
	defer cancel()
	if err := s.createDatabase(ctx, name); err != nil {
		t.Fatalf("pgtest: %v", err)
		return ""
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), psqlTimeout)
		defer cancel()
		err := s.dropDatabase(ctx, name)
		if err != nil && !errors.Is(err, errStopped) {
			// A database left behind costs some disk, not correctness.
			t.Logf("pgtest: %v", err)
		}
	})
	return s.databaseURL(name)
}

// getServer returns the binary's server, connecting to EnvURL or starting a
// cluster on first use.
func getServer(t testing.TB) (*server, error) {
	serverOnce.Do(func() {
		if raw := os.Getenv(EnvURL); raw != "" {
			theServer, serverErr = externalServer(raw)
			return
		}
		start := time.Now()
		theServer, serverErr = localServer()
		if serverErr == nil {
			t.Logf("pgtest: started PostgreSQL at %s in %v", theServer.admin.Host, time.Since(start).Round(time.Millisecond))
		}
	})
	return theServer, serverErr
}

// stop stops the cluster, if one was started. Databases still to be dropped
// are forgotten with it.
func stop() error {
	var err error
	// Running the Once here keeps a later NewDatabase from starting a
	// cluster nobody would stop.
	serverOnce.Do(func() { serverErr = errStopped })
	if theServer != nil {
		err = theServer.stop()
	}
	return err
}
