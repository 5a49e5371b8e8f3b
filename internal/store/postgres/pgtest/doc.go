// Package pgtest gives tests a real PostgreSQL database. Each call to
// NewDatabase creates a fresh, empty database for its caller and returns its
// connection URL; the database is dropped when the test ends.
//
// A package that uses pgtest runs its tests through Main, which stops the
// package's PostgreSQL cluster and removes its files once the tests are done:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestStore(t *testing.T) {
//		url := pgtest.NewDatabase(t) // postgres://postgres@127.0.0.1:41234/pgtest_teststore_1f2e3d4c5b6a?sslmode=disable
//		…
//	}
//
// NewDatabase fails the test when TestMain does not call Main, so that no
// package forgets to clean up.
//
// # Where the server comes from
//
// If LANDLORD_TEST_POSTGRES_URL is set (postgres://user:password@host:port/db,
// a superuser or a role with CREATEDB), databases are created on that server,
// and db only serves to connect. Otherwise the first call to NewDatabase in a
// test binary starts a throwaway PostgreSQL cluster that the whole binary
// shares: initdb and postgres from /usr/lib/postgresql/15/bin, or else from
// PATH, in a new directory under os.TempDir(), listening on a free port of
// 127.0.0.1 only, with trust authentication for the user postgres,
// max_connections 200 for tests that open pools, TimeZone UTC, and
// durability turned off (fsync, synchronous_commit, full_page_writes) since
// nothing outlives the binary. As root, which PostgreSQL refuses, the server
// runs as the OS user postgres. Starting takes 1 to 2 seconds, mostly initdb.
// go test ./... runs several binaries at once: each has its own cluster and
// port.
//
// Databases are created from template0 and named after the test, so
// leftovers on a shared server say where they came from. Clients need psql
// (PostgreSQL 13 or later on a server given by URL, for DROP DATABASE …
// WITH (FORCE)), and pgtest needs no Go dependency.
//
// # Skips
//
// When no server can be had (no binaries, no postgres user to run them as,
// initdb or the server failing to start, psql missing), NewDatabase skips
// the test with what was tried, the tail of the server log, and how to fix
// it. CI sets LANDLORD_REQUIRE_POSTGRES=1 to turn those skips into failures.
// A server given by URL that cannot be reached is always a failure: someone
// asked for it.
//
// # Crashes
//
// If the test binary dies before Main returns (a panic, a -timeout, a
// signal), the kernel sends the server SIGQUIT, PostgreSQL's immediate
// shutdown, on Linux; the next test binary that starts a cluster removes the
// directories of dead binaries, which it recognizes because nobody holds
// their lock file. Elsewhere the server runs on until that removal, and
// PostgreSQL, which checks its lock file every minute, then shuts down.
package pgtest
