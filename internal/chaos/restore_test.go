package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestPostgresRestore backs up a PostgreSQL database with pg_dump as
// docs/operations.md says, while landlord runs Docker tenants on it and
// takes writes; the machine is then lost (landlord killed), the dump
// restored with pg_restore into a new database, and a new landlord on it
// adopts the running tenants: each ready on the container it had, none
// created twice, and it drives them (a change replaces one's container, a
// delete removes another's).
func TestPostgresRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and Docker tenants")
	}
	cli := dockertest.Engine(t)
	images := dockertest.EchoImage(t)
	prefix := dockertest.Prefix(moveKillBase) + "-restore"
	cfg := fmt.Sprintf(upgradeConfig, prefix, dockertest.AddressPoolOf("198.19.0.0/20"))
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	t.Cleanup(func() { dockertest.RemoveManaged(cli, prefix) })
	pgDump, pgRestore := pgtest.Tool(t, "pg_dump"), pgtest.Tool(t, "pg_restore")

	p := servetest.New(t, servetest.Options{Config: cfg, Database: pgtest.NewDatabase(t)})
	p.Start()
	names := []string{"kept", "changed", "deleted"}
	for _, name := range names {
		servetest.CreateTenant(ctx, t, p.Client().Tenants(), name, echoConfig(images[0], "v1"))
	}
	for _, name := range names {
		readyAt(ctx, t, p.Client(), name, 1)
	}
	before := containersOf(ctx, t, cli, prefix)

	// The dump, taken while landlord provisions a tenant created just
	// before it: the dump holds that tenant at whatever step it had
	// reached, and its container may come after the snapshot.
	dump := filepath.Join(t.TempDir(), "landlord.dump")
	servetest.CreateTenant(ctx, t, p.Client().Tenants(), "during", echoConfig(images[0], "v1"))
	if out, err := exec.CommandContext(ctx, pgDump, "--format=custom", "--no-owner", "--file", dump, p.Database()).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	readyAt(ctx, t, p.Client(), "during", 1)
	p.Kill()

	// A new machine and a new database.
	restored := pgtest.NewDatabase(t)
	if out, err := exec.CommandContext(ctx, pgRestore, "--no-owner", "--exit-on-error", "--dbname", restored, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	q := servetest.New(t, servetest.Options{Config: cfg, Database: restored})
	q.Start()
	tenants := q.Client().Tenants()
	for _, name := range names {
		readyAt(ctx, t, q.Client(), name, 1)
		if live, err := tenants.Status(ctx, name); err != nil || live.State != "running" {
			t.Errorf("%s's workload seen by the restored landlord: %+v, %v", name, live, err)
		}
	}
	if _, err := tenants.Patch(ctx, "changed", json.RawMessage(`{"compute_config": {"env": {"GREETING": "v2"}}}`), llclient.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.Delete(ctx, "deleted", llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.Wait(ctx, "deleted", llclient.UntilDeleted, nil); err != nil {
		t.Fatal(err)
	}
	readyAt(ctx, t, q.Client(), "changed", 2)
	// Whatever step the dump caught it at, the restored landlord finishes
	// it on the container the first one made, if it made one.
	readyAt(ctx, t, q.Client(), "during", 1)
	after := containersOf(ctx, t, cli, prefix)
	if len(after["kept"]) != 1 || after["kept"][0] != before["kept"][0] {
		t.Errorf("kept: containers %v before the restore, %v after", before["kept"], after["kept"])
	}
	if len(after["changed"]) != 1 || after["changed"][0] == before["changed"][0] {
		t.Errorf("changed: containers %v before the change, %v after", before["changed"], after["changed"])
	}
	if len(after["deleted"]) != 0 {
		t.Errorf("deleted: containers %v left", after["deleted"])
	}
	if len(after["during"]) != 1 {
		t.Errorf("during: containers %v, want 1", after["during"])
	}
}
