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
	broken := migrationsBefore(t, "")
	broken["99999_broken.sql"] = &fstest.MapFile{Data: []byte(`-- +goose Up
ALTER TABLE tenants ADD COLUMN broken integer;
UPDATE tenants SET name = 'changed';
CREATE TABLE half_done (id integer);
SELECT 1 / 0;
`)}
	err := migrate(ctx, s.pool, broken, slog.New(slog.DiscardHandler))
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
	before := migrationsBefore(t, "00010")
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

// A database from before placements upgrades with its tenants and events
// as they were: each tenant reads as a tenant of its one default
// placement, its placements column '[]', its events of the tenant as a
// whole; and it is listed, counted and observed as before.
func TestUpgradeReadsTenantsAsSimple(t *testing.T) {
	url := mustURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	// The schema as the release before placements left it.
	before := migrationsBefore(t, "00011")
	if err := migrate(ctx, pool, before, slog.New(slog.DiscardHandler)); err != nil {
		pool.Close()
		t.Fatal(err)
	}
	id, at := tenant.NewID(), time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	_, err = pool.Exec(ctx, `INSERT INTO tenants (id, name, provider, compute_config, labels, status, status_message,
		generation, observed_generation, version, resource_ids, endpoints, status_changed_at, created_at, updated_at)
		VALUES ($1, 'acme', 'docker', '{"image":"app:1"}', '{"tier":"gold"}', 'ready', 'running', 2, 2, 3,
		'{"container/app":"c1"}', '[{"container":"app","name":"http","container_port":8080,"protocol":"tcp","address":"127.0.0.1:30001"}]', $2, $2, $2)`, id, at)
	if err == nil {
		_, err = pool.Exec(ctx, `INSERT INTO events (tenant_id, time, type, to_status, generation, actor) VALUES ($1, $2, 'created', 'requested', 1, 'test')`, id, at)
	}
	pool.Close()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(ctx, id, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := got.Placements
	if !got.Simple() || len(p) != 1 || p[0].Name != tenant.DefaultPlacement || p[0].WorkloadID != id || p[0].WorkloadName != "acme" ||
		p[0].Provider != "docker" || string(p[0].ComputeConfig) != `{"image":"app:1"}` || p[0].Status != tenant.StatusReady ||
		p[0].StatusMessage != "running" || p[0].ObservedGeneration != 2 || p[0].ResourceIDs["container/app"] != "c1" || len(p[0].Endpoints) != 1 {
		t.Errorf("the upgraded tenant's placements = %+v, want the default one, the tenant's", p)
	}
	page, err := s.ListEvents(ctx, id, tenant.EventListOptions{})
	if err != nil || len(page.Events) != 1 || page.Events[0].Placement != "" || page.Events[0].Type != tenant.EventCreated {
		t.Errorf("the upgraded tenant's events = %+v, %v; want its created event, of the tenant as a whole", page, err)
	}
	if listed, err := s.List(ctx, tenant.ListOptions{Provider: "docker"}); err != nil || len(listed.Tenants) != 1 || listed.Tenants[0].ID != id {
		t.Errorf("List of docker's tenants = %+v, %v; want acme", listed, err)
	}
	if counts, err := s.CountByProvider(ctx); err != nil || len(counts) != 1 || counts["docker"] != 1 {
		t.Errorf("CountByProvider = %v, %v; want docker: 1", counts, err)
	}
	if _, err := s.UpdateObserved(ctx, id, tenant.Observation{Generation: 2, Status: tenant.StatusReady, Message: "still running"}); err != nil {
		t.Fatal(err)
	}
	var placements string
	if err := s.pool.QueryRow(ctx, `SELECT placements FROM tenants WHERE id = $1`, id).Scan(&placements); err != nil || placements != "[]" {
		t.Errorf("the placements column after an observation = %q, %v; want []", placements, err)
	}
}

// migrationsBefore returns the embedded migrations whose file names sort
// before first (all of them for ""), as a release that stopped there had
// them.
func migrationsBefore(t *testing.T, first string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if first != "" && f >= first {
			continue
		}
		data, err := fs.ReadFile(migrations, f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = &fstest.MapFile{Data: data}
	}
	return out
}
