package compute_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// renamed is a working provider under another name, with optional schema and
// defaults overrides, so that tests can enable several providers.
type renamed struct {
	provider.Provider
	name     string
	schema   json.RawMessage
	defaults json.RawMessage
}

func (r *renamed) Name() string { return r.name }

// Validate checks the spec as the wrapped provider would its own.
func (r *renamed) Validate(ctx context.Context, spec *provider.TenantComputeSpec) error {
	if spec != nil && spec.ProviderType == r.name {
		spec = spec.Clone()
		spec.ProviderType = r.Provider.Name()
	}
	return r.Provider.Validate(ctx, spec)
}

func (r *renamed) ConfigSchema() json.RawMessage {
	if r.schema != nil {
		return r.schema
	}
	return r.Provider.ConfigSchema()
}

func (r *renamed) ConfigDefaults() json.RawMessage {
	if r.defaults != nil {
		return r.defaults
	}
	return r.Provider.ConfigDefaults()
}

func newMock(t *testing.T, block string) *mock.Provider {
	t.Helper()
	p, err := mock.New(mock.Options{Block: json.RawMessage(block)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegistry(t *testing.T) {
	reg := compute.NewRegistry()
	for _, name := range []string{"nomad", "docker", "ecs"} {
		if err := reg.Register(&renamed{Provider: newMock(t, ""), name: name}); err != nil {
			t.Fatalf("Register(%s): %v", name, err)
		}
	}
	if diff := cmp.Diff([]string{"docker", "ecs", "nomad"}, reg.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	var listed []string
	for _, p := range reg.List() {
		listed = append(listed, p.Name())
	}
	if diff := cmp.Diff(reg.Names(), listed); diff != "" {
		t.Errorf("List is not sorted by name (-want +got):\n%s", diff)
	}
	if p, err := reg.Get("ecs"); err != nil || p.Name() != "ecs" {
		t.Errorf("Get(ecs) = %v, %v", p, err)
	}

	err := reg.Register(&renamed{Provider: newMock(t, ""), name: "docker"})
	if !errors.Is(err, provider.ErrProviderConflict) {
		t.Errorf("duplicate Register = %v, want ErrProviderConflict", err)
	}

	_, err = reg.Get("kubernetes")
	var nf *compute.ProviderNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, provider.ErrProviderNotFound) {
		t.Fatalf("Get(unknown) = %v, want a *ProviderNotFoundError", err)
	}
	if want := `compute provider not found: "kubernetes" (enabled: docker, ecs, nomad)`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestRegisterRefusesBrokenProviders(t *testing.T) {
	tests := []struct {
		name     string
		provider provider.Provider
		err      string
	}{
		{"upper case name", &renamed{Provider: newMock(t, ""), name: "Docker"}, "lowercase alphanumeric"},
		{"name with dash", &renamed{Provider: newMock(t, ""), name: "my-cloud"}, "lowercase alphanumeric"},
		{"schema not a schema", &renamed{Provider: newMock(t, ""), name: "x", schema: json.RawMessage(`{"type": 3}`)}, "config schema"},
		{"defaults not an object", &renamed{Provider: newMock(t, ""), name: "x", defaults: json.RawMessage(`[1]`)}, "defaults must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compute.NewRegistry().Register(tt.provider)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Register = %v, want an error containing %q", err, tt.err)
			}
		})
	}
}
