package examples_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// TestProcessPluginSurvivesKills runs `landlord serve` with the example
// process provider (examples/process-provider, a module of its own on the
// public SDK) as a plugin, and kills the plugin with SIGKILL twice while
// 20 tenants are provisioned. landlord restarts it each time; every tenant
// ends ready, once, its demo page answering at its endpoint, with exactly
// one process; the tenants that were ready before a kill keep the process
// they had (nothing re-provisioned or destroyed); deleting the tenants
// leaves no process.
func TestProcessPluginSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the process plugin and runs landlord serve")
	}
	bin := buildProcessPlugin(t)
	landlord := servetest.Binary(t)
	stateDir := t.TempDir()
	// The tenants' processes outlive the plugin and landlord by design: a
	// test that fails before it deletes them kills them.
	t.Cleanup(func() { killAll(landlord) })
	proc := servetest.New(t, servetest.Options{Config: fmt.Sprintf(`
plugins:
  - name: process
    path: %s
    sha256: %s
    settings:
      state_dir: %s
      port_range: 32000-32999
      stop_timeout: 2s
controller:
  resync: 2s
`, bin, fileSHA256(t, bin), stateDir)})
	proc.Start()
	ctx := context.Background()
	c := proc.Client()

	const tenants = 20
	names := make([]string, tenants)
	for i := range names {
		names[i] = fmt.Sprintf("edge-%02d", i)
	}
	config := func(name string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"image": %q, "command": ["demo", "serve", %q], "ports": [{"name": "http", "container_port": 8080}]}`, landlord, name))
	}
	var kept sync.Map // tenant id → pid, of tenants ready before a kill
	for i, name := range names {
		// A create checks its config with the provider: while the plugin
		// restarts it is refused as 502 provider_unavailable, and the
		// client retries it, as the problem says, with the same key.
		poll.Until(t, "create "+name, 30*time.Second, func() (bool, string) {
			_, err := c.Tenants().Create(ctx, llclient.CreateTenantRequest{Name: name, ComputeConfig: config(name)}, llclient.CreateOptions{IdempotencyKey: "create-" + name})
			var e *llclient.Error
			if errors.As(err, &e) && e.Problem.Code == wire.CodeProviderUnavailable {
				return false, err.Error()
			}
			if err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			return true, ""
		})
		if i == 6 || i == 13 {
			recordReady(t, c, names[:i+1], &kept)
			killPlugin(t, bin)
		}
	}

	ids := map[string]string{}
	for _, name := range names {
		tn, err := c.Tenants().Wait(ctx, name, llclient.UntilReady, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids[name] = tn.ID
	}
	for _, name := range names {
		id := ids[name]
		poll.Until(t, name+"'s endpoint answers with its demo page", 30*time.Second, func() (bool, string) {
			st, err := c.Tenants().Status(ctx, name)
			if err != nil || len(st.Endpoints) != 1 {
				return false, fmt.Sprint(st, err)
			}
			res, err := http.Get("http://" + st.Endpoints[0].Address + "/")
			if err != nil {
				return false, err.Error()
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK, res.Status
		})
		if pids := tenantProcesses(id); len(pids) != 1 {
			t.Errorf("%s runs %d processes %v, want 1 (duplicated?)", name, len(pids), pids)
		}
		if readies := countReady(t, c, name); readies != 1 {
			t.Errorf("%s became ready %d times, want once", name, readies)
		}
	}
	kept.Range(func(id, pid any) bool {
		if pids := tenantProcesses(id.(string)); len(pids) != 1 || pids[0] != pid.(int) {
			t.Errorf("tenant %s ran process %d before a kill of the plugin and %v after: re-provisioned", id, pid, pids)
		}
		return true
	})
	if n := strings.Count(proc.Log(), "the provider plugin is running again"); n != 2 {
		t.Errorf("landlord restarted the plugin %d times, want 2", n)
	}

	for _, name := range names {
		if _, err := c.Tenants().Delete(ctx, name, llclient.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		if _, err := c.Tenants().Wait(ctx, name, llclient.UntilDeleted, nil); err != nil && !llclient.IsNotFound(err) {
			t.Fatalf("delete %s: %v", name, err)
		}
		if pids := tenantProcesses(ids[name]); len(pids) != 0 {
			t.Errorf("deleted %s left processes %v", name, pids)
		}
	}
}

// buildProcessPlugin builds the example's plugin binary, as its README
// says, into the test's directory.
func buildProcessPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "landlord-provider-process")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = "process-provider"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the process plugin: %v\n%s", err, out)
	}
	return bin
}

// recordReady waits until the tenants are ready and records each one's
// process.
func recordReady(t *testing.T, c *llclient.Client, names []string, kept *sync.Map) {
	t.Helper()
	for _, name := range names {
		tn, err := c.Tenants().Wait(context.Background(), name, llclient.UntilReady, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pids := tenantProcesses(tn.ID); len(pids) == 1 {
			kept.Store(tn.ID, pids[0])
		}
	}
}

// killAll kills every process of the binary that carries a tenant's mark.
func killAll(bin string) {
	for _, pid := range processesWith(func(pid string) bool {
		exe, err := os.Readlink("/proc/" + pid + "/exe")
		env, _ := os.ReadFile("/proc/" + pid + "/environ")
		return err == nil && exe == bin && strings.Contains(string(env), "LANDLORD_TENANT_ID=")
	}) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// killPlugin kills the running plugin process with SIGKILL.
func killPlugin(t *testing.T, bin string) {
	t.Helper()
	pids := processesWith(func(pid string) bool {
		exe, err := os.Readlink("/proc/" + pid + "/exe")
		return err == nil && exe == bin
	})
	if len(pids) != 1 {
		t.Fatalf("plugin processes of %s: %v, want one", bin, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// tenantProcesses are the processes that carry the tenant's mark.
func tenantProcesses(tenantID string) []int {
	mark := "LANDLORD_TENANT_ID=" + tenantID
	return processesWith(func(pid string) bool {
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil {
			return false
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if kv == mark {
				stat, err := os.ReadFile("/proc/" + pid + "/stat")
				return err == nil && !strings.Contains(string(stat), ") Z ")
			}
		}
		return false
	})
}

func processesWith(match func(pid string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && match(e.Name()) {
			out = append(out, pid)
		}
	}
	return out
}

// countReady counts the tenant's transitions to ready.
func countReady(t *testing.T, c *llclient.Client, name string) int {
	t.Helper()
	n := 0
	for e, err := range c.Tenants().AllEvents(context.Background(), name, llclient.EventOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.To == "ready" {
			n++
		}
	}
	return n
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
