package docker

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
)

// A tenant whose image is not on the Engine and whose registry the Engine
// cannot resolve fails through `landlord serve` within about 30 s, on its
// first attempt, saying why and what to do; before, the controller backed
// off a retryable error for about 11 minutes.
func TestUnresolvableRegistryFailsTheTenantFast(t *testing.T) {
	_, _, l, ctx := startServe(t)
	tenants := l.Client().Tenants()
	// .invalid never resolves (RFC 6761); serveConfig's pull_policy is
	// never, which the tenant overrides, as the quickstart's defaults do.
	const image = "landlord-test.invalid/acme/app:1"
	config := json.RawMessage(`{"image": "` + image + `", "pull_policy": "if-not-present", "ports": [{"container_port": 80}]}`)
	start := time.Now()
	created, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: "offline", ComputeConfig: config}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	_, err = tenants.Wait(ctx, created.ID, llclient.UntilReady, nil)
	took := time.Since(start)
	var failed *llclient.TenantFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("wait: %v, want the tenant to fail", err)
	}
	// Failing at the first attempt is what makes it fast (about 15 s, the
	// grace, against about 9 minutes of retries before); the time is
	// logged, not asserted.
	t.Logf("failed %s after the create: %s", took.Round(time.Millisecond), failed.Tenant.StatusMessage)
	msg := failed.Tenant.StatusMessage
	for _, says := range []string{"permanent", image + " is not on the engine", "cannot resolve or reach the registry landlord-test.invalid",
		"docker pull", "docker load", "pull_policy", "registry mirror"} {
		if !strings.Contains(msg, says) {
			t.Errorf("the status message does not say %q: %s", says, msg)
		}
	}
	if failed.Tenant.Attempts != 1 {
		t.Errorf("the tenant failed after %d attempts, want 1", failed.Tenant.Attempts)
	}
}
