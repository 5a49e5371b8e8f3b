package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dockerclient "github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// upgradesFrom are the releases a rolling upgrade to this tree is proven
// from: the previous issue's landing, and the one before the last
// migration (00011_placements), so that a migration runs while a replica
// of the old release keeps serving on the same database. docs/operations.md
// promises this skew: a release runs beside the one before it.
var upgradesFrom = []struct {
	name, rev string
	migrates  []string // the migrations the new release applies
}{
	{"issue-36-before-placements-migration", "c82c631", []string{"00011_placements.sql"}},
	{"issue-37", "8fc9119", nil},
}

const upgradeConfig = `compute:
  default: docker
  docker:
    pull_policy: never
    label_prefix: %s
    stop_timeout: 1s
    address_pool: %s
controller:
  resync: 1s
  lease_ttl: 2s
  poll_interval: 200ms
`

// TestRollingUpgrade upgrades two replicas sharing a PostgreSQL database,
// with Docker tenants running, one replica at a time: an old and a new
// release serve side by side (each takes creates and changes, and the old
// one restarts against the migrated schema), and once both run the new
// release every tenant is ready, none was re-provisioned (each untouched
// tenant keeps its container, and its history has no step after its first
// ready), and no container is duplicated.
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("builds earlier releases and runs them")
	}
	cli := dockertest.Engine(t)
	images := dockertest.EchoImage(t)
	for i, from := range upgradesFrom {
		t.Run(from.name, func(t *testing.T) {
			old := buildRevision(t, from.rev)
			prefix := fmt.Sprintf("%s-up%d", dockertest.Prefix(moveKillBase), i)
			cfg := fmt.Sprintf(upgradeConfig, prefix, dockertest.AddressPoolOf(fmt.Sprintf("198.19.%d.0/20", 16+16*i)))
			db := pgtest.NewDatabase(t)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			replica := func(bin string) *servetest.Process {
				p := servetest.New(t, servetest.Options{Config: cfg, Database: db, Binary: bin})
				p.Start()
				return p
			}
			echo := func(greeting string) json.RawMessage { return echoConfig(images[0], greeting) }
			ready := func(c *llclient.Client, name string, generation int64) { readyAt(ctx, t, c, name, generation) }
			containers := func() map[string][]string { return containersOf(ctx, t, cli, prefix) }
			t.Cleanup(func() { dockertest.RemoveManaged(cli, prefix) })

			// The old release, two replicas, four tenants.
			a, b := replica(old), replica(old)
			tenants := []string{"steady-0", "steady-1", "steady-2", "changed"}
			for _, name := range tenants {
				servetest.CreateTenant(ctx, t, a.Client().Tenants(), name, echo("v1"))
			}
			for _, name := range tenants {
				ready(a.Client(), name, 1)
			}
			before := containers()

			// The roll: a replaced by the new release, which migrates while
			// b, old, goes on serving.
			a.Stop()
			a2 := replica("")
			for _, m := range from.migrates {
				if !strings.Contains(a2.Log(), m) {
					t.Errorf("the new release did not apply %s beside the old one:\n%s", m, a2.Log())
				}
			}
			servetest.CreateTenant(ctx, t, b.Client().Tenants(), "by-old", echo("v1"))
			servetest.CreateTenant(ctx, t, a2.Client().Tenants(), "by-new", echo("v1"))
			if _, err := b.Client().Tenants().Patch(ctx, "changed", json.RawMessage(`{"compute_config": {"env": {"GREETING": "v2"}}}`), llclient.UpdateOptions{}); err != nil {
				t.Fatalf("a change through the old release beside the new: %v", err)
			}
			ready(a2.Client(), "by-old", 1)
			ready(b.Client(), "by-new", 1)
			ready(a2.Client(), "changed", 2)
			// The old release restarts against the new schema.
			b.Stop()
			b.Start()
			ready(b.Client(), "by-new", 1)
			b.Stop()
			b2 := replica("")

			// A few resync periods of the new release's controllers, which
			// look at every tenant's workload.
			time.Sleep(3 * time.Second)
			for _, name := range append(tenants, "by-old", "by-new") {
				ready(b2.Client(), name, 1)
			}
			after := containers()
			for _, name := range tenants[:3] {
				if len(after[name]) != 1 || after[name][0] != before[name][0] {
					t.Errorf("%s: containers %v before the upgrade, %v after: re-provisioned", name, before[name], after[name])
				}
				for e, err := range b2.Client().Tenants().AllEvents(ctx, name, llclient.EventOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					if e.Generation > 1 || (e.Type == "status" && e.From == "ready") {
						t.Errorf("%s: after its first ready: %+v", name, e)
					}
				}
			}
			for _, name := range []string{"changed", "by-old", "by-new"} {
				if len(after[name]) != 1 {
					t.Errorf("%s: %d containers, want 1: %v", name, len(after[name]), after[name])
				}
			}
			if len(after["changed"]) == 1 && after["changed"][0] == before["changed"][0] {
				t.Error("changed kept its container through a change of its environment")
			}
			if len(after) != len(tenants)+2 {
				t.Errorf("containers of %d tenants, want %d: %v", len(after), len(tenants)+2, after)
			}
			t.Logf("from %s (%s): %d tenants, each ready, untouched ones on their first containers", from.name, from.rev, len(after))
		})
	}
}

// readyAt waits until tenant name is ready at generation or later.
func readyAt(ctx context.Context, t *testing.T, c *llclient.Client, name string, generation int64) {
	t.Helper()
	if _, err := c.Tenants().Wait(ctx, name, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// containersOf is the ids of the containers landlord runs under the label
// prefix, by tenant name.
func containersOf(ctx context.Context, t *testing.T, cli *dockerclient.Client, prefix string) map[string][]string {
	t.Helper()
	f := dockerclient.Filters{}.Add("label", prefix+".managed-by=landlord")
	cs, err := cli.ContainerList(ctx, dockerclient.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]string{}
	for _, c := range cs.Items {
		name := c.Labels[prefix+".tenant_name"]
		by[name] = append(by[name], c.ID)
	}
	return by
}

// echoConfig is a tenant of the echo image saying greeting.
func echoConfig(image, greeting string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": %q, "env": {"GREETING": %q}, "ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"path": "/healthz", "port": 8080}, "interval": "1s"}}`, image, greeting))
}

// buildRevision builds cmd/landlord of the repository's commit rev (git
// archive: no work tree of the repository's own is touched) and returns
// the binary's path.
func buildRevision(t *testing.T, rev string) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the upgrade test builds an earlier release from this repository's history, and git finds none: %v", err)
	}
	src := t.TempDir()
	archive := exec.Command("sh", "-c", "git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"", "sh", strings.TrimSpace(string(root)), rev, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s (a shallow clone lacks it: fetch the history): %v\n%s", rev, err, out)
	}
	bin := filepath.Join(t.TempDir(), "landlord-"+rev)
	build := exec.Command("go", "build", "-o", bin, "./cmd/landlord")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", rev, err, out)
	}
	return bin
}
