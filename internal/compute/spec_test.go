package compute_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func TestValidateSpec(t *testing.T) {
	good := func() *provider.TenantComputeSpec {
		return &provider.TenantComputeSpec{
			TenantID: "t", ProviderType: "mock",
			Workload: workload.Workload{Containers: []workload.ContainerSpec{{Name: "app", Image: "a", Ports: []workload.PortMapping{{ContainerPort: 80, Protocol: "tcp"}}}}},
		}
	}
	if err := provider.ValidateSpec(good(), "mock"); err != nil {
		t.Fatalf("ValidateSpec(good) = %v", err)
	}
	tests := []struct {
		name    string
		mutate  func(*provider.TenantComputeSpec)
		pointer string
	}{
		{"tenant id", func(s *provider.TenantComputeSpec) { s.TenantID = "" }, "/tenant_id"},
		{"provider", func(s *provider.TenantComputeSpec) { s.ProviderType = "docker" }, "/provider_type"},
		{"containers", func(s *provider.TenantComputeSpec) { s.Containers = nil }, "/containers"},
		{"name", func(s *provider.TenantComputeSpec) { s.Containers[0].Name = "App" }, "/containers/0/name"},
		{"duplicate name", func(s *provider.TenantComputeSpec) { s.Containers = append(s.Containers, s.Containers[0]) }, "/containers/1/name"},
		{"image", func(s *provider.TenantComputeSpec) { s.Containers[0].Image = "" }, "/containers/0/image"},
		{"port", func(s *provider.TenantComputeSpec) { s.Containers[0].Ports[0].ContainerPort = 0 }, "/containers/0/ports/0/container_port"},
		{"protocol", func(s *provider.TenantComputeSpec) { s.Containers[0].Ports[0].Protocol = "" }, "/containers/0/ports/0/protocol"},
		{"secret target", func(s *provider.TenantComputeSpec) {
			s.Secrets = []workload.SecretReference{{Container: "nope", Name: "K"}}
		}, "/secrets/0/container"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good()
			tt.mutate(s)
			v := violation.Of(provider.ValidateSpec(s, "mock"))
			if len(v) != 1 || v[0].Pointer != tt.pointer {
				t.Errorf("violations = %v, want one at %s", v, tt.pointer)
			}
		})
	}
	if violation.Of(provider.ValidateSpec(nil, "mock")) == nil {
		t.Error("ValidateSpec(nil) must fail")
	}
}

func TestDiff(t *testing.T) {
	base := func() *provider.TenantComputeSpec {
		return &provider.TenantComputeSpec{Workload: workload.Workload{
			Containers: []workload.ContainerSpec{
				{Name: "app", Image: "a:1", Env: map[string]string{"A": "1", "B": "2"}, Ports: []workload.PortMapping{{ContainerPort: 80, Protocol: "tcp"}}},
				{Name: "log", Image: "log:1"},
			},
			Secrets: []workload.SecretReference{{Container: "app", Name: "S", Value: workload.NewSecretValue("old")}},
		}}
	}
	if changes := provider.Diff(base(), base()); len(changes) != 0 {
		t.Errorf("Diff of equal specs = %v", changes)
	}
	to := base()
	to.Containers[0].Image = "a:2"
	to.Containers[0].Env = map[string]string{"A": "1", "C": "3"}
	to.Containers[0].Ports[0].HostPort = 8080
	to.Containers[0].Resources.MemoryMiB = 256
	to.Containers[1] = workload.ContainerSpec{Name: "proxy", Image: "proxy:1"}
	to.Secrets[0].Value = workload.NewSecretValue("new")
	to.Secrets = append(to.Secrets, workload.SecretReference{Container: "app", Name: "T", Value: workload.NewSecretValue("x")})
	to.Networking.Public = true
	to.ProviderConfig = json.RawMessage(`{"image":"a:2","x-mock":{"latency":"1s"},"api_key":"s3cr3t"}`)
	want := []provider.Change{
		{Field: "containers/app/image", From: "a:1", To: "a:2"},
		{Field: "containers/app/env/B", From: "2"},
		{Field: "containers/app/env/C", To: "3"},
		{Field: "containers/app/ports", From: "80/tcp", To: "8080:80/tcp"},
		{Field: "containers/app/resources/memory_mib", To: "256"},
		{Field: "containers/proxy", To: "proxy:1"},
		{Field: "containers/log", From: "log:1"},
		{Field: "containers/app/secrets/S", From: "[redacted]", To: "[redacted]"},
		{Field: "containers/app/secrets/T", To: "[redacted]"},
		{Field: "networking/public", From: "false", To: "true"},
		{Field: "provider_config/api_key"},
		{Field: "provider_config/x-mock"},
	}
	if diff := cmp.Diff(want, provider.Diff(base(), to)); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
	if got := want[0].String(); got != "containers/app/image: a:1 → a:2" {
		t.Errorf("Change.String() = %q", got)
	}
}

func TestHashAndClone(t *testing.T) {
	spec := &provider.TenantComputeSpec{
		TenantID: "t", Generation: 1,
		Workload: workload.Workload{
			Containers: []workload.ContainerSpec{{Name: "app", Image: "a", Env: map[string]string{"A": "1"}, HealthCheck: &workload.HealthCheckConfig{HTTP: &workload.HTTPProbe{Path: "/", Port: 80}}}},
			Secrets:    []workload.SecretReference{{Container: "app", Name: "S", Value: workload.NewSecretValue("one")}},
		},
		ProviderConfig: json.RawMessage(`{"image": "a", "b": 1}`),
	}
	c := spec.Clone()
	if spec.Hash() != c.Hash() {
		t.Fatal("a clone must hash the same")
	}
	c.Generation = 9
	c.ProviderConfig = json.RawMessage(`{"b":1,"image":"a"}`)
	if spec.Hash() != c.Hash() {
		t.Error("generation, key order and whitespace must not change the hash")
	}
	c.Containers[0].Env["A"] = "2"
	c.Containers[0].HealthCheck.HTTP.Port = 81
	if spec.Containers[0].Env["A"] != "1" || spec.Containers[0].HealthCheck.HTTP.Port != 80 {
		t.Fatal("Clone shares maps or pointers with the original")
	}
	if spec.Hash() == c.Hash() {
		t.Error("a changed env must change the hash")
	}
	s := spec.Clone()
	s.Secrets[0].Value = workload.NewSecretValue("two")
	if spec.Hash() == s.Hash() {
		t.Error("a changed secret must change the hash")
	}
}
