package compute_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// newManager enables a mock under each name, each with the given defaults.
func newManager(t *testing.T, def string, providers map[string]string) *compute.Manager {
	t.Helper()
	reg := compute.NewRegistry()
	for name, block := range providers {
		if err := reg.Register(&renamed{Provider: newMock(t, block), name: name}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := compute.NewManager(reg, compute.ManagerOptions{DefaultProvider: def})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestProviderSelection(t *testing.T) {
	m := newManager(t, "docker", map[string]string{"docker": "", "nomad": "", "ecs": ""})
	tests := []struct {
		name        string
		config      string
		labels      map[string]string
		annotations map[string]string
		recorded    string
		want        string
		wantErr     error
		pointer     string
	}{
		{name: "default", config: `{"image":"a"}`, want: "docker"},
		{name: "config", config: `{"image":"a","compute_provider":"nomad"}`, want: "nomad"},
		{name: "config, type key", config: `{"image":"a","compute_provider_type":"ecs"}`, want: "ecs"},
		{name: "config, both keys agree", config: `{"image":"a","compute_provider":"ecs","compute_provider_type":"ecs"}`, want: "ecs"},
		{name: "config, keys disagree", config: `{"image":"a","compute_provider":"ecs","compute_provider_type":"nomad"}`, wantErr: provider.ErrInvalidSpec, pointer: "/compute_provider_type"},
		{name: "config, not a string", config: `{"image":"a","compute_provider":7}`, wantErr: provider.ErrInvalidSpec, pointer: "/compute_provider"},
		{name: "config beats labels", config: `{"image":"a","compute_provider":"nomad"}`, labels: map[string]string{"compute_provider": "ecs"}, want: "nomad"},
		{name: "labels", config: `{"image":"a"}`, labels: map[string]string{"compute_provider": "ecs"}, want: "ecs"},
		{name: "labels, type key", config: `{"image":"a"}`, labels: map[string]string{"compute_provider_type": "nomad"}, want: "nomad"},
		{name: "labels beat annotations", config: `{"image":"a"}`, labels: map[string]string{"compute_provider": "ecs"}, annotations: map[string]string{"compute_provider": "nomad"}, want: "ecs"},
		{name: "annotations", config: `{"image":"a"}`, annotations: map[string]string{"compute_provider": "nomad"}, want: "nomad"},
		{name: "unknown", config: `{"image":"a","compute_provider":"k8s"}`, wantErr: provider.ErrProviderNotFound},
		{name: "recorded beats default", config: `{"image":"a"}`, recorded: "nomad", want: "nomad"},
		{name: "recorded and chosen agree", config: `{"image":"a","compute_provider":"nomad"}`, recorded: "nomad", want: "nomad"},
		{name: "cannot move", config: `{"image":"a","compute_provider":"ecs"}`, recorded: "nomad", wantErr: provider.ErrInvalidSpec, pointer: "/compute_provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := m.Resolve(context.Background(), compute.ResolveRequest{
				TenantID: "t1", ComputeConfig: json.RawMessage(tt.config),
				Labels: tt.labels, Annotations: tt.annotations, Provider: tt.recorded,
			})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Resolve = %v, want %v", err, tt.wantErr)
				}
				if tt.pointer != "" && (len(violation.Of(err)) == 0 || violation.Of(err)[0].Pointer != tt.pointer) {
					t.Errorf("violations %v do not point at %s", violation.Of(err), tt.pointer)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Spec.ProviderType != tt.want {
				t.Errorf("provider = %s, want %s", res.Spec.ProviderType, tt.want)
			}
			if string(res.Spec.ProviderConfig) != `{"image":"a"}` {
				t.Errorf("selection keys were not removed: %s", res.Spec.ProviderConfig)
			}
		})
	}
}

func TestUnknownProviderListsEnabled(t *testing.T) {
	m := newManager(t, "", map[string]string{"docker": "", "nomad": ""})
	_, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(`{"image":"a"}`)})
	var nf *compute.ProviderNotFoundError
	if !errors.As(err, &nf) || nf.Name != "" || !cmp.Equal(nf.Enabled, []string{"docker", "nomad"}) {
		t.Fatalf("Resolve with no choice and no default = %v", err)
	}
	if want := "compute provider not found: no provider chosen and no default configured; set compute_provider (enabled: docker, nomad)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if _, err := compute.NewManager(m.Registry(), compute.ManagerOptions{DefaultProvider: "ecs"}); !errors.Is(err, provider.ErrProviderNotFound) {
		t.Errorf("NewManager with an unknown default = %v", err)
	}
	single := newManager(t, "", map[string]string{"mock": ""})
	if single.DefaultProvider() != "mock" {
		t.Errorf("the only provider must be the default, got %q", single.DefaultProvider())
	}
}

func TestResolveBuildsSpec(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": `{"image":"example.com/default:1","env":{"A":"1","B":"2"},"resources":{"memory_mib":64}}`})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{
		TenantID: "0192f0c4-0000-7000-8000-000000000001", TenantName: "acme", Generation: 3,
		ComputeConfig: json.RawMessage(`{
			"env": {"B": "3"},
			"secrets": {"DB_PASSWORD": "hunter2"},
			"ports": [{"container_port": 8080}],
			"health_check": {"tcp": {"port": 8080}, "interval": "2s"},
			"networking": {"public": true},
			"sidecars": [{"name": "proxy", "image": "example.com/proxy:2", "resources": {"memory_mib": 32, "cpu_millicores": 100}, "secrets": {"TOKEN": "t"}}]
		}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &provider.TenantComputeSpec{
		TenantID: "0192f0c4-0000-7000-8000-000000000001", TenantName: "acme", ProviderType: "mock", Generation: 3, Drift: provider.DriftRepair,
		Workload: workload.Workload{Containers: []workload.ContainerSpec{
			{
				Name: "app", Image: "example.com/default:1", Env: map[string]string{"A": "1", "B": "3"},
				Ports: []workload.PortMapping{{ContainerPort: 8080, Protocol: workload.ProtocolTCP}},
				HealthCheck: &workload.HealthCheckConfig{
					TCP: &workload.TCPProbe{Port: 8080}, Interval: 2e9, Timeout: workload.DefaultHealthTimeout, Retries: workload.DefaultHealthRetries,
				},
				Resources: workload.ResourceRequirements{MemoryMiB: 64},
			},
			{Name: "proxy", Image: "example.com/proxy:2", Resources: workload.ResourceRequirements{CPUMillicores: 100, MemoryMiB: 32}},
		},
			Resources:  workload.ResourceRequirements{CPUMillicores: 100, MemoryMiB: 96},
			Networking: workload.NetworkConfig{Public: true},
			Secrets: []workload.SecretReference{
				{Container: "app", Name: "DB_PASSWORD", Value: workload.NewSecretValue("hunter2")},
				{Container: "proxy", Name: "TOKEN", Value: workload.NewSecretValue("t")},
			}},
	}
	if diff := cmp.Diff(want, res.Spec, cmp.Comparer(func(a, b workload.SecretValue) bool { return a.Reveal() == b.Reveal() }),
		cmp.FilterPath(func(p cmp.Path) bool {
			return p.String() == "ProviderConfig" || p.String() == "Options" || p.String() == "ConfigHash"
		}, cmp.Ignore()), cmpopts.IgnoreUnexported(provider.TenantComputeSpec{})); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	redacted, err := m.RedactConfig("mock", res.Spec.ProviderConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(redacted); !json.Valid(redacted) || strings.Contains(got, "hunter2") || !strings.Contains(got, `"DB_PASSWORD":"[redacted]"`) {
		t.Errorf("RedactConfig = %s", got)
	}
}

func TestResolveReportsEveryProblem(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": `{"image":"example.com/default:1"}`})
	tests := []struct {
		name     string
		config   string
		pointers []string
	}{
		{"schema", `{"image": 5, "ports":[{"container_port":"x"}], "bogus": 1}`, []string{"/bogus", "/image", "/ports/0/container_port"}},
		{"a default is removed by null and is required", `{"image": null}`, []string{"/image"}},
		{"rules beyond the schema", `{
			"env": {"A": "1"}, "secrets": {"A": "2"},
			"ports": [{"container_port": 80, "host_port": 8080}, {"container_port": 81, "host_port": 8080}],
			"health_check": {"command": ["true"], "tcp": {"port": 80}},
			"sidecars": [{"name": "app", "image": "x"}]
		}`, []string{"/health_check", "/ports/1/host_port", "/secrets/A", "/sidecars/0/name"}},
		{"not an object", `[]`, []string{""}},
		{"malformed", `{"image":`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(tt.config)})
			if !errors.Is(err, provider.ErrInvalidSpec) {
				t.Fatalf("Resolve = %v, want ErrInvalidSpec", err)
			}
			var got []string
			for _, v := range violation.Of(err) {
				got = append(got, v.Pointer)
			}
			if diff := cmp.Diff(tt.pointers, got); diff != "" {
				t.Errorf("pointers (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

func TestResolveNullMeansAbsent(t *testing.T) {
	// With and without operator defaults, null in the tenant config removes
	// the key instead of failing the schema.
	for _, block := range []string{``, `{"env":{"A":"1"}}`} {
		m := newManager(t, "", map[string]string{"mock": block})
		res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(`{"image":"x","health_check":null,"env":null}`)})
		if err != nil {
			t.Fatalf("defaults %q: %v", block, err)
		}
		if string(res.Spec.ProviderConfig) != `{"image":"x"}` {
			t.Errorf("defaults %q: effective config = %s", block, res.Spec.ProviderConfig)
		}
	}
}

func TestResolveProviderMovePointer(t *testing.T) {
	m := newManager(t, "docker", map[string]string{"docker": "", "nomad": ""})
	for _, tt := range []struct {
		config  string
		labels  map[string]string
		pointer string
	}{
		{`{"image":"a","compute_provider_type":"docker"}`, nil, "/compute_provider_type"},
		// A label lies outside the compute_config: its pointer is into the
		// tenant, and the kind says so.
		{`{"image":"a"}`, map[string]string{"compute_provider": "docker"}, "/labels/compute_provider"},
	} {
		_, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(tt.config), Labels: tt.labels, Provider: "nomad"})
		v := violation.Of(err)
		if len(v) != 1 || v[0].Pointer != tt.pointer {
			t.Errorf("Resolve(%s, labels %v) = %v, want one violation at %q", tt.config, tt.labels, err, tt.pointer)
		}
		if fromLabel := tt.labels != nil; errors.Is(err, compute.ErrInvalidChoice) != fromLabel || !errors.Is(err, provider.ErrInvalidSpec) || !provider.IsTerminal(err) {
			t.Errorf("Resolve(%s, labels %v) = %v: want ErrInvalidChoice only from a label, always ErrInvalidSpec and terminal", tt.config, tt.labels, err)
		}
	}
}

// unreachable fails ValidateConfig as a platform outage would.
type unreachable struct{ provider.Provider }

func (unreachable) ValidateConfig(json.RawMessage) error {
	return provider.Retryable(errors.New("connection refused"))
}

func TestResolveKeepsRetryableValidationFailures(t *testing.T) {
	reg := compute.NewRegistry()
	if err := reg.Register(unreachable{newMock(t, "")}); err != nil {
		t.Fatal(err)
	}
	m, err := compute.NewManager(reg, compute.ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(`{"image":"a"}`)})
	if err == nil || errors.Is(err, provider.ErrInvalidSpec) || !provider.IsRetryable(err) {
		t.Errorf("Resolve = %v; an outage must stay retryable and must not read as an invalid spec", err)
	}
}

// TestResolveKeepsRedactedSecrets: a config sent back as it was shown keeps
// the stored secrets, and a redacted secret with nothing stored is refused.
func TestResolveKeepsRedactedSecrets(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": ""})
	prev := json.RawMessage(`{"image":"a","secrets":{"DB":"hunter2"}}`)
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t", Previous: prev,
		ComputeConfig: json.RawMessage(`{"image":"b","secrets":{"DB":"[redacted]"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Config) != `{"image":"b","secrets":{"DB":"hunter2"}}` || res.Spec.Secrets[0].Value.Reveal() != "hunter2" {
		t.Errorf("config to store %s, secret %q: want the stored secret kept", res.Config, res.Spec.Secrets[0].Value.Reveal())
	}
	plain := json.RawMessage(`{"image": "b",  "env": {"A": "line\nbreak"}}`)
	if res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t", ComputeConfig: plain}); err != nil || string(res.Config) != string(plain) {
		t.Errorf("a config with nothing to restore is stored as sent: %s, %v", res.Config, err)
	}
	_, err = m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t", ComputeConfig: json.RawMessage(`{"image":"b","secrets":{"NEW":"[redacted]"}}`)})
	if v := violation.Of(err); len(v) != 1 || v[0].Pointer != "/secrets/NEW" {
		t.Errorf("a redacted secret with nothing stored = %v, want a violation at /secrets/NEW", err)
	}
}

// TestResolvedSpecIsSealed: a spec whose ProviderConfig changed after
// Resolve validated it is refused without parsing it; a clone of a resolved
// spec is still resolved.
func TestResolvedSpecIsSealed(t *testing.T) {
	m := newManager(t, "", map[string]string{"mock": ""})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t", ComputeConfig: json.RawMessage(`{"image":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := provider.ValidateSpec(res.Spec.Clone(), "mock"); err != nil {
		t.Errorf("a clone of a resolved spec: %v", err)
	}
	changed := res.Spec.Clone()
	changed.ProviderConfig = json.RawMessage(`{"image":"a","privileged":true}`)
	if v := violation.Of(provider.ValidateSpec(changed, "mock")); len(v) != 1 || v[0].Pointer != "/provider_config" {
		t.Errorf("a changed config = %v, want a violation at /provider_config", v)
	}
	if v := violation.Of(provider.ValidateSpec(changed.Clone(), "mock")); len(v) != 1 {
		t.Errorf("a clone of a changed spec must stay refused, got %v", v)
	}
	if res.Spec.ConfigHash == "" || res.Spec.Hash() != res.Spec.ConfigHash {
		t.Errorf("ConfigHash %q, Hash %q: want the hash set by Resolve", res.Spec.ConfigHash, res.Spec.Hash())
	}
}

// TestResolveDriftPolicy: "drift" in the tenant's config, else in the
// operator's block, sets the spec's policy; repair without either; any
// other value is refused at /drift.
func TestResolveDriftPolicy(t *testing.T) {
	for _, tt := range []struct {
		block, config string
		want          provider.DriftPolicy
	}{
		{``, `{"image":"x"}`, provider.DriftRepair},
		{``, `{"image":"x","drift":"observe"}`, provider.DriftObserve},
		{`{"drift":"observe"}`, `{"image":"x"}`, provider.DriftObserve},
		{`{"drift":"observe"}`, `{"image":"x","drift":"repair"}`, provider.DriftRepair},
	} {
		m := newManager(t, "", map[string]string{"mock": tt.block})
		res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(tt.config)})
		if err != nil {
			t.Fatalf("block %s, config %s: %v", tt.block, tt.config, err)
		}
		if res.Spec.Drift != tt.want {
			t.Errorf("block %s, config %s: policy %q, want %q", tt.block, tt.config, res.Spec.Drift, tt.want)
		}
	}
	m := newManager(t, "", map[string]string{"mock": ``})
	_, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "t1", ComputeConfig: json.RawMessage(`{"image":"x","drift":"sometimes"}`)})
	if v := violation.Of(err); !errors.Is(err, provider.ErrInvalidSpec) || len(v) != 1 || v[0].Pointer != "/drift" {
		t.Errorf("drift sometimes: %v, want one violation at /drift", err)
	}
}
