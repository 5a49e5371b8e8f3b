package clienttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Checks are how often a tenant's compute_config was checked on its way from
// POST /v1/tenants to ready: validated against the provider's schema, and
// read by the provider's config checks (ConfigDecoder or ValidateConfig).
type Checks struct {
	// IngressSchema and IngressConfig count the checks while the API
	// handled the create.
	IngressSchema, IngressConfig int64
	// Schema and Config count the checks from the create's answer until
	// the tenant was ready.
	Schema, Config int64
	// Reconciles is how many reconciles the controller ran meanwhile.
	Reconciles int64
}

// CountChecks creates one tenant with config on a server whose provider is
// p, runs the controller until the tenant is ready, deletes it, and returns
// how often its config was checked. p must implement provider.ConfigDecoder,
// provider.CapabilityReporter and provider.HealthChecker.
func CountChecks(t testing.TB, p provider.Provider, config json.RawMessage, timeout time.Duration) Checks {
	t.Helper()
	inner, ok := p.(checkedProvider)
	if !ok {
		t.Fatalf("clienttest: provider %s does not implement ConfigDecoder, CapabilityReporter and HealthChecker", p.Name())
	}
	counted := &countingProvider{checkedProvider: inner}
	reconciles := &reconcileCounter{}
	srv := NewServer(t, Options{Provider: counted, Observer: reconciles})
	schema, err := srv.Registry.Schema(p.Name())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tenants := srv.Client(t, "").Tenants()

	var c Checks
	created, err := tenants.Create(ctx, client.CreateTenantRequest{Name: "counted", ComputeConfig: config}, client.CreateOptions{})
	if err != nil {
		t.Fatalf("clienttest: create: %v", err)
	}
	c.IngressSchema, c.IngressConfig = schema.Validations(), counted.checks.Load()
	srv.StartController(t)
	if _, err := tenants.Wait(ctx, created.ID, client.UntilReady, nil); err != nil {
		t.Fatalf("clienttest: wait until ready: %v", err)
	}
	c.Schema, c.Config = schema.Validations()-c.IngressSchema, counted.checks.Load()-c.IngressConfig
	c.Reconciles = reconciles.n.Load()
	if _, err := tenants.Delete(ctx, created.ID, client.DeleteOptions{}); err != nil {
		t.Errorf("clienttest: delete: %v", err)
	} else if _, err := tenants.Wait(ctx, created.ID, client.UntilDeleted, nil); err != nil && !client.IsNotFound(err) {
		t.Errorf("clienttest: wait until deleted: %v", err)
	}
	return c
}

// Err says how c breaks the rule that a config is checked once where it
// enters the API and at most once per reconcile after that (and at least
// once, to provision it), each time by the schema and the provider alike;
// nil when it keeps it.
func (c Checks) Err() error {
	var errs []error
	if c.IngressSchema != 1 || c.IngressConfig != 1 {
		errs = append(errs, fmt.Errorf("at ingress: %d schema validations and %d provider config checks, want 1 and 1", c.IngressSchema, c.IngressConfig))
	}
	if c.Schema < 1 || c.Schema > c.Reconciles || c.Config != c.Schema {
		errs = append(errs, fmt.Errorf("after ingress: %d schema validations and %d provider config checks in %d reconciles, want as many of each, from 1 to one per reconcile",
			c.Schema, c.Config, c.Reconciles))
	}
	return errors.Join(errs...)
}

type checkedProvider interface {
	provider.Provider
	provider.ConfigDecoder
	provider.CapabilityReporter
	provider.HealthChecker
}

// countingProvider counts the provider's config checks.
type countingProvider struct {
	checkedProvider
	checks atomic.Int64
}

func (p *countingProvider) ValidateConfig(config json.RawMessage) error {
	p.checks.Add(1)
	return p.checkedProvider.ValidateConfig(config)
}

func (p *countingProvider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	p.checks.Add(1)
	return p.checkedProvider.DecodeConfig(config, spec)
}

type reconcileCounter struct{ n atomic.Int64 }

func (r *reconcileCounter) ObserveReconcile(string, time.Duration) { r.n.Add(1) }
