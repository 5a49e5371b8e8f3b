package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
)

func TestNewDatabaseGivesEachCallerItsOwnEmptyDatabase(t *testing.T) {
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two calls returned the same URL %s", a)
	}
	for _, u := range []string{a, b} {
		if got, want := mustQuery(t, u, "SELECT current_database()"), databaseOf(t, u); got != want {
			t.Errorf("%s connects to database %s, want %s", u, got, want)
		}
		if got := mustQuery(t, u, countTables); got != "0" {
			t.Errorf("%s has %s tables, want none", u, got)
		}
	}
	mustQuery(t, a, "CREATE TABLE tenants (id text PRIMARY KEY); INSERT INTO tenants VALUES ('t1')")
	if got := mustQuery(t, a, "SELECT id FROM tenants"); got != "t1" {
		t.Errorf("SELECT id FROM tenants = %q, want t1", got)
	}
	if got := mustQuery(t, b, countTables); got != "0" {
		t.Errorf("after CREATE TABLE in the first database, the second has %s tables, want none", got)
	}
}

func TestNewDatabaseInParallelTests(t *testing.T) {
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			u := NewDatabase(t)
			mustQuery(t, u, "CREATE TABLE t (n int); INSERT INTO t VALUES ("+fmt.Sprint(i)+")")
			if got := mustQuery(t, u, "SELECT sum(n) FROM t"); got != fmt.Sprint(i) {
				t.Errorf("sum(n) = %s, want %d: databases are shared", got, i)
			}
		})
	}
}

func TestNewDatabaseDropsTheDatabaseWhenTheTestEnds(t *testing.T) {
	var u string
	t.Run("user", func(t *testing.T) {
		// A client still connected when the test ends must not keep the
		// database alive: register its end before NewDatabase, so that it
		// runs after the drop.
		var client *exec.Cmd
		t.Cleanup(func() {
			if client != nil {
				client.Process.Kill()
				client.Wait()
			}
		})
		u = NewDatabase(t)
		client = exec.Command(mustPSQL(t), "-X", "-d", u, "-c", "SELECT pg_sleep(60)")
		if err := client.Start(); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, "the client's query runs", 10*time.Second, func() (bool, string) {
			n := mustQuery(t, u, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()")
			return n == "1", n + " running"
		})
	})
	if u == "" {
		t.Skip("no database")
	}
	name := databaseOf(t, u)
	if got := mustQuery(t, theServer.databaseURL("postgres"), "SELECT count(*) FROM pg_database WHERE datname = '"+name+"'"); got != "0" {
		t.Errorf("database %s still exists after its test", name)
	}
}

func TestNewDatabaseNeedsMain(t *testing.T) {
	mainCalled.Store(false)
	defer mainCalled.Store(true)
	r := &recordingTB{}
	if u := NewDatabase(r); u != "" || !strings.Contains(r.fatal, "os.Exit(pgtest.Main(m))") {
		t.Errorf("without Main, NewDatabase returned %q and failed with %q; want a failure that says how to call Main", u, r.fatal)
	}
}

func TestExternalServer(t *testing.T) {
	NewDatabase(t) // starts the cluster this test uses as an external server
	admin := *theServer.admin
	admin.RawQuery = "sslmode=disable&application_name=pgtest"
	s, err := externalServer(admin.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := databaseName(t.Name())
	if err := s.createDatabase(ctx, name); err != nil {
		t.Fatal(err)
	}
	u := s.databaseURL(name)
	if got := mustQuery(t, u, "SELECT current_database() || ' ' || current_setting('application_name')"); got != name+" pgtest" {
		t.Errorf("%s connects to %q, want %q", u, got, name+" pgtest")
	}
	if err := s.dropDatabase(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.createDatabase(ctx, name); !errors.Is(err, errStopped) {
		t.Errorf("createDatabase after stop: %v, want errStopped", err)
	}
}

func TestExternalServerRefusesBadURLs(t *testing.T) {
	for _, raw := range []string{
		"mysql://root:secret@localhost/db",
		"host=localhost password=secret",
		"postgres://u:secret@host:port/db",
	} {
		t.Run(raw, func(t *testing.T) {
			_, err := externalServer(raw)
			if err == nil {
				t.Fatal("no error")
			}
			if isUnavailable(err) {
				t.Errorf("%v: would skip; a bad %s must fail", err, EnvURL)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestDatabaseURLKeepsAllButTheDatabase(t *testing.T) {
	admin, err := url.Parse("postgresql://app:p%40ss@db.example:6543/admin?sslmode=require")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{admin: admin}
	if got, want := s.databaseURL("pgtest_x_01"), "postgresql://app:p%40ss@db.example:6543/pgtest_x_01?sslmode=require"; got != want {
		t.Errorf("databaseURL = %s, want %s", got, want)
	}
	if admin.Path != "/admin" {
		t.Errorf("databaseURL changed the admin URL to %s", admin)
	}
}

const countTables = "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"

func isUnavailable(err error) bool { return errors.As(err, new(*unavailableError)) }

// mustQuery runs sql in the database at dbURL and returns psql's unaligned
// output.
func mustQuery(t *testing.T, dbURL, sql string) string {
	t.Helper()
	out, err := exec.Command(mustPSQL(t), "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", dbURL, "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("psql -c %q: %v: %s", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

func mustPSQL(t *testing.T) string {
	t.Helper()
	p, err := findPSQL("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// databaseOf returns the database name in dbURL.
func databaseOf(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}
