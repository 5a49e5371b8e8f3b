package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/server"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Every entry of the table makes, with its defaults, a provider of its own
// name; names are unique, and summaries are one line.
func TestProviderTable(t *testing.T) {
	name := regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	seen := map[string]bool{}
	for _, e := range providerTable {
		t.Run(e.Name, func(t *testing.T) {
			if !name.MatchString(e.Name) || seen[e.Name] {
				t.Errorf("the name %q is not lowercase alphanumeric, or is in the table twice", e.Name)
			}
			seen[e.Name] = true
			if e.Summary == "" || strings.Contains(e.Summary, "\n") {
				t.Errorf("the summary %q is not one line", e.Summary)
			}
			p, err := e.New(context.Background(), server.ProviderEnv{HashKey: []byte("landlord-test-hash-key-0123456789")})
			if err != nil {
				t.Fatalf("New with its defaults: %v", err)
			}
			if c, ok := p.(io.Closer); ok {
				t.Cleanup(func() { _ = c.Close() })
			}
			if p.Name() != e.Name {
				t.Errorf("New made a provider named %q", p.Name())
			}
		})
	}
}

// A name that is not in the table is refused at start-up with exit code 2,
// saying what the build has.
func TestServeRefusesProvidersNotInThisBuild(t *testing.T) {
	available := "(available: " + strings.Join(providerNames(), ", ") + ")"
	for _, tt := range []struct {
		name    string
		compute map[string]any
		want    string
	}{
		{"unknown block", map[string]any{"docker2": map[string]any{}}, "config: compute.docker2: no such provider in this build " + available},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = servetest.FreeAddr(t)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			cfg.Compute = tt.compute
			err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
			if err == nil || exitCode(err) != exitUsage || err.Error() != tt.want {
				t.Errorf("serve = %v (exit %d), want exit %d and\n%s", err, exitCode(err), exitUsage, tt.want)
			}
		})
	}
}

// Adding a provider takes one entry in providerTable: a provider written
// here and appended to the table is offered by serve --help, listed by the
// error for an unknown provider, started by serve from a compute block and
// listed by GET /v1/compute/providers, and listed in the generated section
// of docs/compute-providers.md.
func TestATableLineIsAllAProviderNeeds(t *testing.T) {
	const summary = "nowhere: a provider that lives only in a test"
	saved := providerTable
	providerTable = append(slices.Clip(providerTable), server.ProviderFactory{Name: throwawayName, Summary: summary, New: func(_ context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return newThrowaway(env.Block)
	}})
	t.Cleanup(func() { providerTable = saved })

	t.Run("serve --help", func(t *testing.T) {
		res := mustRunCLI(t, nil, exitOK, "", "serve", "--help")
		mustContain(t, "serve --help", res.stdout, oneOf(providerNames()), throwawayName)
	})

	t.Run("the unknown-provider error", func(t *testing.T) {
		cfg := config.Defaults()
		cfg.Listen = servetest.FreeAddr(t)
		cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
		cfg.Compute = map[string]any{"nosuch": map[string]any{}}
		err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
		if exitCode(err) != exitUsage {
			t.Fatalf("serve = %v, want a usage error", err)
		}
		mustContain(t, "the error", err.Error(), "available: "+strings.Join(providerNames(), ", "), throwawayName)
	})

	t.Run("serve and GET /v1/compute/providers", func(t *testing.T) {
		cfg := config.Defaults()
		cfg.Compute = map[string]any{throwawayName: map[string]any{}}
		base, logs := startServe(t, cfg)
		mustContain(t, "the log", logs.String(), `"providers":"`+throwawayName+`"`)
		res, err := http.Get(base + "/v1/compute/providers")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var got struct {
			Providers []struct {
				Name             string
				Default, Healthy bool
			}
		}
		if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/compute/providers: %s, %v", res.Status, err)
		}
		if len(got.Providers) != 1 || got.Providers[0].Name != throwawayName || !got.Providers[0].Default || !got.Providers[0].Healthy {
			t.Errorf("GET /v1/compute/providers = %+v, want the throwaway provider alone, the default and healthy", got.Providers)
		}
	})

	t.Run("the generated doc section", func(t *testing.T) {
		mustContain(t, "the doc section", renderProviderDoc(), "| `"+throwawayName+"` | "+summary+" |")
	})
}

// throwawayName is the name of the provider that lives only in these tests.
const throwawayName = "throwaway"

// throwaway is a compute provider that keeps tenants' specs in memory and
// runs nothing: the least a provider can be.
type throwaway struct {
	mu        sync.Mutex
	workloads map[string]*provider.TenantComputeSpec
}

// newThrowaway makes a throwaway provider; it has no settings, so its
// block must be empty.
func newThrowaway(block json.RawMessage) (*throwaway, error) {
	var keys map[string]json.RawMessage
	if len(block) > 0 {
		if err := json.Unmarshal(block, &keys); err != nil {
			return nil, fmt.Errorf("compute.%s: the block must be a JSON object: %w", throwawayName, err)
		}
	}
	var errs violation.List
	for key := range keys {
		errs.Add(violation.Pointer(key), "unknown key; the %s provider has no settings", throwawayName)
	}
	if err := errs.Err(provider.ErrInvalidSpec); err != nil {
		return nil, fmt.Errorf("compute.%s: %w", throwawayName, err)
	}
	return &throwaway{workloads: map[string]*provider.TenantComputeSpec{}}, nil
}

func (p *throwaway) Name() string { return throwawayName }

func (p *throwaway) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.workloads[spec.TenantID] = spec
	return &provider.ProvisionResult{TenantID: spec.TenantID, ProviderType: throwawayName, Status: provider.ProvisionStatusSuccess, ProvisionedAt: time.Now()}, nil
}

func (p *throwaway) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.workloads[tenantID]
	if !ok {
		return nil, fmt.Errorf("%s: tenant %s: %w", throwawayName, tenantID, provider.ErrTenantNotFound)
	}
	res := &provider.UpdateResult{TenantID: tenantID, ProviderType: throwawayName, Status: provider.ProvisionStatusSuccess, UpdatedAt: time.Now()}
	if from, to := cur.Containers[0].Image, spec.Containers[0].Image; from != to {
		res.Changes = append(res.Changes, provider.Change{Field: "containers/" + spec.Containers[0].Name + "/image", From: from, To: to})
	}
	p.workloads[tenantID] = spec
	return res, nil
}

func (p *throwaway) Destroy(_ context.Context, tenantID string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.workloads, tenantID)
	return nil
}

func (p *throwaway) GetStatus(_ context.Context, tenantID string) (*provider.ComputeStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	spec, ok := p.workloads[tenantID]
	if !ok {
		return nil, fmt.Errorf("%s: tenant %s: %w", throwawayName, tenantID, provider.ErrTenantNotFound)
	}
	st := &provider.ComputeStatus{TenantID: tenantID, ProviderType: throwawayName, State: provider.StateRunning, Health: provider.HealthUnknown, Generation: spec.Generation, LastUpdated: time.Now()}
	for _, c := range spec.Containers {
		st.Containers = append(st.Containers, provider.ContainerStatus{Name: c.Name, Image: c.Image, State: provider.ContainerRunning, Health: provider.HealthUnknown})
	}
	return st, nil
}

func (p *throwaway) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	if spec == nil {
		return provider.Invalid("", "spec is missing")
	}
	var errs violation.List
	if spec.TenantID == "" {
		errs.Add("/tenant_id", "is required")
	}
	if spec.ProviderType != throwawayName {
		errs.Add("/provider_type", "is %q; this provider is %q", spec.ProviderType, throwawayName)
	}
	if len(spec.Containers) == 0 {
		errs.Add("/containers", "at least one container is required")
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// ValidateConfig has no rules beyond the schema's.
func (p *throwaway) ValidateConfig(json.RawMessage) error { return nil }

func (p *throwaway) ConfigSchema() json.RawMessage {
	return json.RawMessage(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
	  "properties": {"image": {"type": "string", "minLength": 1}}, "required": ["image"], "additionalProperties": false}`)
}

func (p *throwaway) ConfigDefaults() json.RawMessage { return nil }

var _ provider.Provider = (*throwaway)(nil)
