package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestOpenTwiceKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "landlord.db")
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := s.Create(ctx, &tenant.Tenant{Name: "acme", Provider: "mock", ComputeConfig: []byte(`{"image":"a"}`)}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer again.Close()
	if got, err := again.Get(ctx, "acme", tenant.GetOptions{}); err != nil || got.ID != created.ID {
		t.Errorf("after reopening: %v, %v", got, err)
	}
}

func TestFailingMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), "landlord.db"), time.Second, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	first, err := migrations.ReadFile("migrations/00001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	broken := fstest.MapFS{
		"migrations/00001_init.sql": {Data: first},
		"migrations/00002_broken.sql": {Data: []byte(`-- +goose Up
ALTER TABLE tenants ADD COLUMN region TEXT;
CREATE TABLE half_done (a INTEGER);
SELECT no_such_function();
`)},
	}
	if err := migrate(ctx, db, broken, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a broken migration succeeded")
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('tenants') WHERE name = 'region'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed migration's column exists (%d, %v)", n, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'half_done'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the failed migration's table exists (%d, %v)", n, err)
	}
	var version int
	if err := db.QueryRowContext(ctx, `SELECT max(version_id) FROM landlord_schema_migrations WHERE is_applied`).Scan(&version); err != nil || version != 1 {
		t.Errorf("schema version = %d (%v), want 1", version, err)
	}
}

func TestReadersDoNotWaitForTheWriter(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "landlord.db"), Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	created, err := s.Create(ctx, &tenant.Tenant{Name: "acme", Provider: "mock", ComputeConfig: []byte(`{"image":"a"}`)}, "test")
	if err != nil {
		t.Fatal(err)
	}
	// Hold the write lock in an open transaction; WAL lets readers go on.
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE tenants SET status_message = 'busy' WHERE id = ?`, created.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, created.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatalf("Get during a write transaction: %v", err)
	}
	if got.StatusMessage != "" {
		t.Error("a reader saw uncommitted data")
	}
}

func TestWatchSeesOtherProcesses(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "landlord.db")
	var stores [2]*Store
	for i := range stores {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := stores[1].Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stores[0].Create(ctx, &tenant.Tenant{Name: "acme", Provider: "mock", ComputeConfig: []byte(`{"image":"a"}`)}, "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ch:
		if id != "" {
			t.Errorf("announced %q for another process's write, want \"\" (look for work)", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write by another process was never announced")
	}
}

// An upgrade keeps the install key of the providers' config hashes: the
// key stored as docker-config-hash is the one provider-config-hash reads,
// so that no provider takes every workload for changed and replaces it.
// The old name keeps it too, for replicas of earlier versions.
func TestUpgradeKeepsTheConfigHashKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "landlord.db")
	db, err := sql.Open("sqlite", dsn(path, time.Second, false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	// The schema as the release before the rename left it.
	before := fstest.MapFS{}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f >= "migrations/00009" {
			continue
		}
		data, err := migrations.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = &fstest.MapFile{Data: data}
	}
	if err := migrate(ctx, db, before, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	stored := bytes.Repeat([]byte{7}, tenant.KeySize)
	if _, err := db.ExecContext(ctx, `INSERT INTO install_keys (name, key, created_at) VALUES ('docker-config-hash', ?, 1)`, stored); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
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
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "landlord.db")
	db, err := sql.Open("sqlite", dsn(path, time.Second, false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	// The schema as the release before placements left it.
	before := fstest.MapFS{}
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f >= "migrations/00010" {
			continue
		}
		data, err := migrations.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		before[f] = &fstest.MapFile{Data: data}
	}
	if err := migrate(ctx, db, before, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	id, at := tenant.NewID(), time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if _, err := db.ExecContext(ctx, `INSERT INTO tenants (id, name, provider, compute_config, labels, status, status_message,
		generation, observed_generation, version, resource_ids, endpoints, status_changed_at, created_at, updated_at)
		VALUES (?, 'acme', 'docker', '{"image":"app:1"}', '{"tier":"gold"}', 'ready', 'running', 2, 2, 3,
		'{"container/app":"c1"}', '[{"container":"app","name":"http","container_port":8080,"protocol":"tcp","address":"127.0.0.1:30001"}]', ?, ?, ?)`,
		id, at.UnixMicro(), at.UnixMicro(), at.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO events (tenant_id, time, type, to_status, generation, actor) VALUES (?, ?, 'created', 'requested', 1, 'test')`,
		id, at.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{})
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
	if err := s.read.QueryRowContext(ctx, `SELECT placements FROM tenants WHERE id = ?`, id).Scan(&placements); err != nil || placements != "[]" {
		t.Errorf("the placements column after an observation = %q, %v; want []", placements, err)
	}
}
