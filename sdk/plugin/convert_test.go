package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// TestConversionsRoundTrip: every value of the contract that crosses the
// boundary comes back equal to what was sent, secrets included.
func TestConversionsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	code := 137
	status := &provider.ComputeStatus{TenantID: "t1", ProviderType: "x", State: provider.StateDegraded, Health: provider.HealthUnhealthy,
		Containers: []provider.ContainerStatus{
			{Name: "app", Image: "i:1", State: provider.ContainerExited, Health: provider.HealthUnhealthy, RestartCount: 3, ExitCode: &code, Message: "oom", ID: "c1"},
			{Name: "log", Image: "l:1", State: provider.ContainerRunning, Health: provider.HealthUnknown},
		},
		Endpoints:  []provider.Endpoint{{Container: "app", Name: "http", ContainerPort: 8080, Protocol: workload.ProtocolTCP, Address: "127.0.0.1:1"}},
		Generation: 7, Message: "m", LastUpdated: at, Metadata: map[string]string{"k": "v"}}
	if got := statusOf(statusMsg(status)); !cmp.Equal(got, status) {
		t.Errorf("status: %s", cmp.Diff(status, got))
	}
	prov := &provider.ProvisionResult{TenantID: "t1", ProviderType: "x", Status: provider.ProvisionStatusInProgress,
		ResourceIDs: map[string]string{"a": "b"}, Endpoints: status.Endpoints, Message: "m", ProvisionedAt: at}
	if got := provisionOf(provisionMsg(prov)); !cmp.Equal(got, prov) {
		t.Errorf("provision result: %s", cmp.Diff(prov, got))
	}
	upd := &provider.UpdateResult{TenantID: "t1", ProviderType: "x", Status: provider.ProvisionStatusSuccess,
		Changes: []provider.Change{{Field: "containers/app/image", From: "a", To: "b"}}, ResourceIDs: map[string]string{"a": "b"}, UpdatedAt: at}
	if got := updateOf(updateMsg(upd)); !cmp.Equal(got, upd) {
		t.Errorf("update result: %s", cmp.Diff(upd, got))
	}
	in := &provider.Inspection{Status: status, Drift: []provider.Drift{{Path: "containers/app/image", Kind: provider.DriftImage, Expected: "a", Found: "b"}}}
	if got := inspectionOf(inspectionMsg(in)); !cmp.Equal(got, in) {
		t.Errorf("inspection: %s", cmp.Diff(in, got))
	}
	ref := provider.TenantRef{ID: "t1", Name: "acme", Provider: "x", Config: json.RawMessage(`{"a":1}`), ResourceIDs: map[string]string{"a": "b"}}
	if got := refOf(refMsg(ref)); !cmp.Equal(got, ref) {
		t.Errorf("tenant ref: %s", cmp.Diff(ref, got))
	}
	caps := provider.Capabilities{InPlaceUpdate: true, Secrets: true, Scaling: true, Volumes: true}
	if got := capsOf(capsMsg(caps)); got != caps {
		t.Errorf("capabilities: %+v, want %+v", got, caps)
	}

	spec := &provider.TenantComputeSpec{TenantID: "t1", TenantName: "acme", ProviderType: "x", Generation: 3,
		ProviderConfig: json.RawMessage(`{"image":"i:1"}`), ConfigHash: "h", Drift: provider.DriftObserve, ResourceIDs: map[string]string{"a": "b"},
		Workload: workload.Workload{
			Containers: []workload.ContainerSpec{{Name: "app", Image: "i:1", Command: []string{"run"}, Env: map[string]string{"A": "1"},
				Ports:       []workload.PortMapping{{Name: "http", ContainerPort: 8080, HostPort: 9090, Protocol: workload.ProtocolTCP}},
				HealthCheck: &workload.HealthCheckConfig{HTTP: &workload.HTTPProbe{Path: "/healthz", Port: 8080}, Interval: time.Second, Retries: 3},
				Resources:   workload.ResourceRequirements{CPUMillicores: 250, MemoryMiB: 128}}},
			Resources:  workload.ResourceRequirements{CPUMillicores: 250, MemoryMiB: 128},
			Networking: workload.NetworkConfig{Public: true},
			Secrets:    []workload.SecretReference{{Container: "app", Name: "TOKEN", Value: workload.NewSecretValue("s3cret")}},
		}}
	spec.MarkResolved()
	got, err := baseSpecOf(specMsg(spec))
	if err != nil {
		t.Fatal(err)
	}
	got.MarkResolved()
	if !cmp.Equal(got, spec, cmp.Comparer(func(a, b workload.SecretValue) bool { return a.Reveal() == b.Reveal() }), cmpopts.IgnoreUnexported(provider.TenantComputeSpec{})) {
		t.Errorf("spec: %s", cmp.Diff(spec, got, cmp.Comparer(func(a, b workload.SecretValue) bool { return a.Reveal() == b.Reveal() }), cmpopts.IgnoreUnexported(provider.TenantComputeSpec{})))
	}
	if !got.Resolved() {
		t.Error("a resolved spec does not arrive resolved")
	}
	edited := spec.Clone()
	edited.ProviderConfig = json.RawMessage(`{"image":"other"}`)
	if m := specMsg(edited); m.Resolved {
		t.Error("a spec whose config changed after resolution crosses as resolved")
	}
}

// TestErrorsRoundTrip: a provider's error crosses as a status and comes
// back wrapping the same sentinel, with the same verdict, violations and
// context error, and the same text.
func TestErrorsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		is   []error
	}{
		{"terminal invalid spec with violations", violation.List{{Pointer: "/image", Message: "is required"}}.Err(provider.ErrInvalidSpec), []error{provider.ErrInvalidSpec}},
		{"retryable provision failure", provider.Retryable(fmt.Errorf("docker: %w: pull", provider.ErrProvisionFailed)), []error{provider.ErrProvisionFailed}},
		{"terminal provision failure", provider.Terminal(fmt.Errorf("x: %w", provider.ErrProvisionFailed)), []error{provider.ErrProvisionFailed}},
		{"tenant not found", fmt.Errorf("x: tenant t1: %w", provider.ErrTenantNotFound), []error{provider.ErrTenantNotFound}},
		{"conflict", provider.Terminal(fmt.Errorf("x: %w", provider.ErrProviderConflict)), []error{provider.ErrProviderConflict}},
		{"cancelled", provider.Retryable(fmt.Errorf("x: provision: %w", context.Canceled)), []error{context.Canceled}},
		{"deadline", fmt.Errorf("x: %w: %w", provider.ErrUpdateFailed, context.DeadlineExceeded), []error{provider.ErrUpdateFailed, context.DeadlineExceeded}},
		{"unmarked", errors.New("something odd"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromStatus("x", "Call", toStatus(tc.err))
			if got.Error() != tc.err.Error() {
				t.Errorf("text %q, want %q", got, tc.err)
			}
			for _, target := range tc.is {
				if !errors.Is(got, target) {
					t.Errorf("%v does not wrap %v", got, target)
				}
			}
			if provider.IsTerminal(got) != provider.IsTerminal(tc.err) {
				t.Errorf("terminal %v, want %v", provider.IsTerminal(got), provider.IsTerminal(tc.err))
			}
			if !cmp.Equal(violation.Of(got), violation.Of(tc.err)) {
				t.Errorf("violations %v, want %v", violation.Of(got), violation.Of(tc.err))
			}
		})
	}
}
