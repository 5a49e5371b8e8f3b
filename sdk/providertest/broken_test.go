package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// A conformance suite that cannot fail is worthless. Each case below breaks
// one contract of a working provider; the suite must fail, in the subtest
// that checks that contract. The suite runs in a child process because it
// reports through *testing.T.

const brokenEnv = "PROVIDERTEST_BROKEN"

// broken wraps the mock provider and breaks one contract.
type broken struct {
	*mock.Provider
	how string
}

func (b *broken) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	switch b.how {
	case "provision-not-idempotent":
		if _, err := b.Provider.GetStatus(ctx, spec.TenantID); err == nil {
			return nil, fmt.Errorf("%w: workload already exists", provider.ErrProvisionFailed)
		}
	case "provision-ignores-cancellation":
		ctx = context.Background()
	case "provision-new-ids":
		res, err := b.Provider.Provision(ctx, spec)
		if res != nil {
			res.ResourceIDs = map[string]string{"workload": fmt.Sprint(time.Now().UnixNano())}
		}
		return res, err
	}
	return b.Provider.Provision(ctx, spec)
}

func (b *broken) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	res, err := b.Provider.Update(ctx, tenantID, spec)
	switch b.how {
	case "update-always-changes":
		if res != nil && res.NoChanges() {
			res.Changes = []provider.Change{{Field: "containers/app/image"}}
		}
	case "update-ignores-secrets":
		if res != nil {
			res.Changes = slices.DeleteFunc(res.Changes, func(c provider.Change) bool { return strings.Contains(c.Field, "/secrets/") })
		}
	case "update-unknown-succeeds":
		if errors.Is(err, provider.ErrTenantNotFound) {
			return &provider.UpdateResult{TenantID: tenantID, ProviderType: b.Name()}, nil
		}
	}
	return res, err
}

func (b *broken) Destroy(ctx context.Context, tenantID string) error {
	switch b.how {
	case "destroy-unknown-errors":
		if _, err := b.Provider.GetStatus(ctx, tenantID); errors.Is(err, provider.ErrTenantNotFound) {
			return err
		}
	case "destroy-stops-on-cancel":
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return b.Provider.Destroy(ctx, tenantID)
}

func (b *broken) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	st, err := b.Provider.GetStatus(ctx, tenantID)
	switch b.how {
	case "status-not-found-is-nil":
		if errors.Is(err, provider.ErrTenantNotFound) {
			return &provider.ComputeStatus{TenantID: tenantID, State: provider.StateUnknown}, nil
		}
	case "status-cached":
		if st != nil {
			for i := range st.Containers {
				st.Containers[i].State = provider.ContainerRunning
			}
			st.State = provider.StateRunning
		}
	case "endpoint-nothing-listens":
		// What the mock reported before it had listeners: a loopback port
		// nobody listens on.
		for i := range stEndpoints(st) {
			st.Endpoints[i].Address = closedPort
		}
	case "endpoint-not-an-address":
		for i := range stEndpoints(st) {
			st.Endpoints[i].Address = st.Endpoints[i].Container + "/" + fmt.Sprint(st.Endpoints[i].ContainerPort)
		}
	}
	return st, err
}

func stEndpoints(st *provider.ComputeStatus) []provider.Endpoint {
	if st == nil {
		return nil
	}
	return st.Endpoints
}

// closedPort is a loopback address nothing listens on.
var closedPort = func() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}()

func (b *broken) Validate(ctx context.Context, spec *provider.TenantComputeSpec) error {
	switch b.how {
	case "validate-side-effect":
		if spec != nil && spec.TenantID != "" {
			_, _ = b.Provider.Provision(ctx, spec)
		}
	case "validate-accepts-anything":
		return nil
	}
	return b.Provider.Validate(ctx, spec)
}

func (b *broken) ValidateConfig(config json.RawMessage) error {
	if b.how == "validate-accepts-anything" {
		return nil
	}
	return b.Provider.ValidateConfig(config)
}

// TestBrokenProviderHelper runs the suite against one broken provider when
// started by TestSuiteCatchesBrokenProviders.
func TestBrokenProviderHelper(t *testing.T) {
	how := os.Getenv(brokenEnv)
	if how == "" {
		t.Skip("started only by TestSuiteCatchesBrokenProviders")
	}
	platform := mock.NewPlatform()
	t.Cleanup(platform.Close)
	p, err := mock.New(mock.Options{Platform: platform})
	if err != nil {
		t.Fatal(err)
	}
	providertest.Run(t, providertest.Harness{
		Provider: &broken{Provider: p, how: how},
		Config: func(v int) json.RawMessage {
			return json.RawMessage(fmt.Sprintf(`{"image":"example.com/app:%d","ports":[{"container_port":8080}],"x-mock":{"listen":true}}`, v))
		},
		DialEndpoints: true,
		Disrupt: func(t *testing.T, tenantID string) {
			if err := p.Crash(tenantID, "app", 1); err != nil {
				t.Fatal(err)
			}
		},
		ReadyTimeout: time.Second,
		Parallel:     5,
	})
}

func TestSuiteCatchesBrokenProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child test process per case")
	}
	tests := []struct {
		how     string
		subtest string // the subtest that must fail
	}{
		{"provision-not-idempotent", "Lifecycle"},
		{"provision-new-ids", "Lifecycle"},
		{"provision-ignores-cancellation", "ProvisionCancelled"},
		{"update-always-changes", "Lifecycle"},
		{"update-ignores-secrets", "Lifecycle"},
		{"update-unknown-succeeds", "UnknownTenant"},
		{"destroy-unknown-errors", "UnknownTenant"},
		{"destroy-stops-on-cancel", "DestroyCancelled"},
		{"status-not-found-is-nil", "UnknownTenant"},
		{"status-cached", "OutOfBand"},
		{"endpoint-nothing-listens", "Lifecycle"},
		{"endpoint-not-an-address", "Lifecycle"},
		{"validate-side-effect", "Validate"},
		{"validate-accepts-anything", "Validate"},
	}
	for _, tt := range tests {
		t.Run(tt.how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenProviderHelper$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+tt.how)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed a provider whose %s contract is broken (err %v):\n%s", tt.how, err, out)
			}
			if want := "--- FAIL: TestBrokenProviderHelper/" + tt.subtest + " "; !strings.Contains(string(out), want) {
				t.Errorf("subtest %s did not fail:\n%s", tt.subtest, out)
			}
		})
	}
}
