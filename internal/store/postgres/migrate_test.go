package postgres

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

var ctx = context.Background()

// schemaVersion is the newest migration recorded in the database.
func schemaVersion(t *testing.T, s *Store) int64 {
	t.Helper()
	var v int64
	if err := s.pool.QueryRow(ctx, "SELECT max(version_id) FROM "+migrationsTable).Scan(&v); err != nil {
		t.Fatalf("schema version: %v", err)
	}
	return v
}

// latestVersion is the newest embedded migration.
func latestVersion(t *testing.T) int64 {
	t.Helper()
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded migrations: %v %v", files, err)
	}
	last := files[len(files)-1]
	var v int64
	for _, c := range last[:strings.IndexByte(last, '_')] {
		v = v*10 + int64(c-'0')
	}
	return v
}

func mustCreate(t *testing.T, s *Store, name string) *tenant.Tenant {
	t.Helper()
	out, err := s.Create(ctx, &tenant.Tenant{Name: name, Provider: "mock", ComputeConfig: []byte(`{"image":"app:1"}`)}, "test")
	if err != nil {
		t.Fatalf("Create(%s): %v", name, err)
	}
	return out
}

func TestOpenTwice(t *testing.T) {
	s, url := mustOpen(t, Options{})
	created := mustCreate(t, s, "kept")
	again, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer again.Close()
	if got, want := schemaVersion(t, again), latestVersion(t); got != want {
		t.Errorf("schema version = %d, want %d", got, want)
	}
	var applied int
	if err := again.pool.QueryRow(ctx, "SELECT count(*) FROM "+migrationsTable+" WHERE version_id > 0").Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if want := int(latestVersion(t)); applied != want {
		t.Errorf("%d migrations recorded, want %d: one was applied twice", applied, want)
	}
	if _, err := again.Get(ctx, created.ID, tenant.GetOptions{}); err != nil {
		t.Errorf("Get after reopening: %v", err)
	}
}

func TestConcurrentOpen(t *testing.T) {
	s, url := mustOpen(t, Options{}) // only to get a database; drop its schema
	if _, err := s.pool.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
		t.Fatal(err)
	}
	const n = 4
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	stores := make([]*Store, n)
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, url, Options{}) })
	}
	wg.Wait()
	t.Logf("%d Opens in %v", n, time.Since(start))
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		stores[i].Close()
	}
	if got, want := schemaVersion(t, s), latestVersion(t); got != want {
		t.Errorf("schema version = %d, want %d", got, want)
	}
	mustCreate(t, s, "after-concurrent-open")
}

func TestMigrationLockReleased(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	var held int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d advisory locks held after Open; the migration lock leaked into the pool", held)
	}
}

// A migration that fails part-way leaves nothing of itself behind, and the
// recorded version does not move.
func TestFailingMigrationChangesNothing(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	before := mustCreate(t, s, "untouched")
	// Every real migration, then a broken one after them.
	broken := fstest.MapFS{}
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := fs.ReadFile(migrations, f)
		if err != nil {
			t.Fatal(err)
		}
		broken[f] = &fstest.MapFile{Data: data}
	}
	broken["99999_broken.sql"] = &fstest.MapFile{Data: []byte(`-- +goose Up
ALTER TABLE tenants ADD COLUMN broken integer;
UPDATE tenants SET name = 'changed';
CREATE TABLE half_done (id integer);
SELECT 1 / 0;
`)}
	err = migrate(ctx, s.pool, broken, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("migrate with a broken migration succeeded")
	}
	t.Logf("migrate: %v", err)
	if got, want := schemaVersion(t, s), latestVersion(t); got != want {
		t.Errorf("schema version = %d after a failed migration, want %d", got, want)
	}
	var columns, tables int
	if err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM information_schema.columns WHERE table_name = 'tenants' AND column_name = 'broken'),
		(SELECT count(*) FROM information_schema.tables WHERE table_name = 'half_done')`).Scan(&columns, &tables); err != nil {
		t.Fatal(err)
	}
	if columns != 0 || tables != 0 {
		t.Errorf("the failed migration left %d columns and %d tables behind", columns, tables)
	}
	after, err := s.Get(ctx, before.ID, tenant.GetOptions{})
	if err != nil || after.Name != before.Name {
		t.Errorf("Get after the failed migration = %+v, %v; want %q unchanged", after, err, before.Name)
	}
}

// An upgrade keeps the install key of the providers' config hashes: the
// key stored as docker-config-hash is the one provider-config-hash reads,
// so that no provider takes every workload for changed and replaces it.
// The old name keeps it too, for replicas of earlier versions.
func TestUpgradeKeepsTheConfigHashKey(t *testing.T) {
	url := mustURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// The schema as the release before the rename left it.
	before := fstest.MapFS{}
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f >= "00010" {
			continue
		}
		data, err := fs.ReadFile(migrations, f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = &fstest.MapFile{Data: data}
	}
	if err := migrate(ctx, pool, before, slog.New(slog.DiscardHandler)); err != nil {
		pool.Close()
		t.Fatal(err)
	}
	stored := bytes.Repeat([]byte{7}, tenant.KeySize)
	_, err = pool.Exec(ctx, `INSERT INTO install_keys (name, key) VALUES ('docker-config-hash', $1)`, stored)
	pool.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"provider-config-hash", "docker-config-hash"} {
		if got, err := s.Key(ctx, name); err != nil || !bytes.Equal(got, stored) {
			t.Errorf("Key(%s) = %x, %v; want the key stored before the upgrade, %x", name, got, err, stored)
		}
	}
}
