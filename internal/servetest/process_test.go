package servetest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// mockConfig runs tenants on the mock provider, which needs nothing.
const mockConfig = `compute:
  default: mock
  mock: {}
`

// A tenant created before a SIGKILL is found after the restart: the
// process keeps its database across runs, and Env reaches it.
func TestKillAndStartKeepTheDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := servetest.New(t, servetest.Options{Config: mockConfig, Env: []string{"LANDLORD_LOG_LEVEL=debug"}})
	p.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tenants := p.Client().Tenants()
	created, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: "kept", ComputeConfig: json.RawMessage(`{"image": "example.com/app:1"}`)}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := tenants.Wait(ctx, created.ID, llclient.UntilReady, nil); err != nil {
		t.Fatalf("wait ready: %v", err)
	}

	p.Kill()
	if _, err := tenants.Get(ctx, created.ID, llclient.GetOptions{}); err == nil {
		t.Fatal("the API answered after Kill")
	}
	p.Start()
	got, err := tenants.Get(ctx, created.ID, llclient.GetOptions{})
	if err != nil {
		t.Fatalf("get after the restart: %v", err)
	}
	if got.Status != llclient.StatusReady {
		t.Errorf("after the restart the tenant is %s, want %s", got.Status, llclient.StatusReady)
	}
	p.Stop()
	if log := p.Log(); !strings.Contains(log, `"level":"DEBUG"`) {
		t.Errorf("LANDLORD_LOG_LEVEL=debug did not reach the process; its log:\n%s", log)
	}
}
