package mockplugin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock/mockplugin"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// TestServeWithThePlugin runs `landlord serve` with the mock as a plugin:
// the provider is enabled and healthy as if compiled in, a tenant on it
// becomes ready with an endpoint that answers, the plugin's log lines are
// landlord's with the plugin's name and the tenant's id, and when the
// plugin is killed its tenant's status reads fail as 502
// provider_unavailable until landlord has restarted it.
func TestServeWithThePlugin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sum := fileSHA256(t, self)
	control := filepath.Join(t.TempDir(), "control")
	proc := servetest.New(t, servetest.Options{Config: fmt.Sprintf(`
plugins:
  - name: mock
    path: %s
    sha256: %s
    env:
      %s: "1"
      %s: %s
    settings:
      latency: 10ms
controller:
  resync: 1s
`, self, sum, servePluginEnv, mockplugin.ControlFileEnv, control)})
	proc.Start()
	ctx := context.Background()
	c := proc.Client()

	providers, err := c.Compute().Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(providers.Providers) != 1 || providers.Providers[0].Name != "mock" || !providers.Providers[0].Healthy || !providers.Providers[0].Default {
		t.Fatalf("providers = %+v; want the mock plugin alone, healthy and the default", providers.Providers)
	}

	tn, err := c.Tenants().Create(ctx, llclient.CreateTenantRequest{Name: "acme",
		ComputeConfig: json.RawMessage(`{"image": "example.com/app:1", "ports": [{"container_port": 8080}], "x-mock": {"listen": true}}`)}, llclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := waitReady(t, c, tn.Name)
	if len(ready.Endpoints) != 1 {
		t.Fatalf("endpoints of the ready tenant = %+v, want one", ready.Endpoints)
	}
	answers(t, ready.Endpoints[0].Address)
	poll.Until(t, "the plugin's log line about the tenant in landlord's log", 10*time.Second, func() (bool, string) {
		for _, line := range strings.Split(proc.Log(), "\n") {
			if strings.Contains(line, `"plugin":"mock"`) && strings.Contains(line, `"tenant_id":"`+tn.ID+`"`) {
				return true, ""
			}
		}
		return false, "none"
	})

	addr, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, "http://"+string(addr))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "a status read fails as 502 provider_unavailable while the plugin is down", 10*time.Second, func() (bool, string) {
		_, err := c.Tenants().Status(ctx, "acme")
		var e *llclient.Error
		return errors.As(err, &e) && e.Status == http.StatusBadGateway && e.Problem.Code == wire.CodeProviderUnavailable, fmt.Sprint(err)
	})
	// The mock's workloads lived in the process that died: the controller
	// finds the tenant's workload missing and provisions it again.
	again := waitReady(t, c, "acme")
	answers(t, again.Endpoints[0].Address)
	if !strings.Contains(proc.Log(), "the provider plugin is running again") {
		t.Error("landlord's log does not say the plugin runs again")
	}
}

func waitReady(t *testing.T, c *llclient.Client, name string) *llclient.ComputeStatus {
	t.Helper()
	var st *llclient.ComputeStatus
	poll.Until(t, "tenant "+name+" ready with its endpoint", 30*time.Second, func() (bool, string) {
		tn, err := c.Tenants().Get(context.Background(), name, llclient.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if tn.Status != "ready" {
			return false, tn.Status + ": " + tn.StatusMessage
		}
		st, err = c.Tenants().Status(context.Background(), name)
		return err == nil && len(st.Endpoints) > 0, fmt.Sprint(err)
	})
	return st
}

// answers fails t unless something answers HTTP at addr.
func answers(t *testing.T, addr string) {
	t.Helper()
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("the endpoint %s does not answer: %v", addr, err)
	}
	res.Body.Close()
}

func pidOf(t *testing.T, control string) int {
	t.Helper()
	res, err := http.Get(control + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
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
