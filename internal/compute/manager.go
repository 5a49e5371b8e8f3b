package compute

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// DefaultProvider is used for tenants that choose none. Empty means the
	// only registered provider when there is exactly one, and otherwise that
	// tenants must choose.
	DefaultProvider string
	// Logger receives the audit lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Observer, if set, is told of every provision, update and destroy.
	Observer OperationObserver
	// HashKey keys the HMAC of TenantComputeSpec.ConfigHash: the install's
	// secret key, the same across restarts and replicas, so that hashes
	// providers record agree and reveal nothing of the secrets they cover.
	HashKey []byte
}

// OperationObserver records provider operations (for metrics).
type OperationObserver interface {
	// ObserveOperation records one operation: outcome is "success",
	// "retryable" or "terminal".
	ObserveOperation(provider, operation, outcome string, d time.Duration)
}

// Manager is the facade the controller calls: it resolves tenant configs to
// specs and routes operations to the tenant's provider, writing one audit
// line for every provision, update and destroy.
type Manager struct {
	registry        *Registry
	defaultProvider string
	logger          *slog.Logger
	now             func() time.Time
	observer        OperationObserver
	hashKey         []byte
}

// NewManager returns a Manager over the providers in registry. A
// DefaultProvider that is not registered is a *ProviderNotFoundError.
func NewManager(registry *Registry, opts ManagerOptions) (*Manager, error) {
	m := &Manager{registry: registry, defaultProvider: opts.DefaultProvider, logger: opts.Logger, now: opts.Now, observer: opts.Observer, hashKey: bytes.Clone(opts.HashKey)}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.defaultProvider != "" {
		if _, err := registry.Get(m.defaultProvider); err != nil {
			return nil, fmt.Errorf("compute: default provider: %w", err)
		}
	} else if names := registry.Names(); len(names) == 1 {
		m.defaultProvider = names[0]
	}
	return m, nil
}

// Registry returns the registry the Manager routes to.
func (m *Manager) Registry() *Registry { return m.registry }

// DefaultProvider returns the provider used for tenants that choose none, or
// "" when they must choose.
func (m *Manager) DefaultProvider() string { return m.defaultProvider }

// ProvisionTenant creates the workload described by spec on its provider.
func (m *Manager) ProvisionTenant(ctx context.Context, spec *provider.TenantComputeSpec) (res *provider.ProvisionResult, err error) {
	start := m.now()
	defer func() {
		var attrs []slog.Attr
		if res != nil {
			attrs = append(attrs, slog.String("status", string(res.Status)))
		}
		s := orEmpty(spec)
		m.audit(ctx, "provision", s.TenantID, s.ProviderType, s.Generation, start, err, attrs...)
	}()
	if spec == nil {
		return nil, provider.Invalid("", "spec is missing")
	}
	p, err := m.registry.Get(spec.ProviderType)
	if err != nil {
		return nil, err
	}
	return p.Provision(ctx, spec)
}

// UpdateTenant converges the tenant's workload to spec.
func (m *Manager) UpdateTenant(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (res *provider.UpdateResult, err error) {
	start := m.now()
	defer func() {
		var attrs []slog.Attr
		if res != nil {
			attrs = append(attrs, slog.Int("changes", len(res.Changes)), slog.String("status", string(res.Status)))
		}
		s := orEmpty(spec)
		m.audit(ctx, "update", tenantID, s.ProviderType, s.Generation, start, err, attrs...)
	}()
	if spec == nil {
		return nil, provider.Invalid("", "spec is missing")
	}
	p, err := m.registry.Get(spec.ProviderType)
	if err != nil {
		return nil, err
	}
	return p.Update(ctx, tenantID, spec)
}

// DestroyTenant removes the tenant's workload from its provider.
func (m *Manager) DestroyTenant(ctx context.Context, t provider.TenantRef) (err error) {
	start := m.now()
	defer func() { m.audit(ctx, "destroy", t.ID, t.Provider, 0, start, err) }()
	p, err := m.registry.Get(t.Provider)
	if err != nil {
		return err
	}
	if l, ok := p.(provider.Locator); ok {
		return l.DestroyOf(ctx, t)
	}
	return p.Destroy(ctx, t.ID)
}

// GetTenantStatus reads the live state of the tenant's workload.
func (m *Manager) GetTenantStatus(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	p, err := m.registry.Get(t.Provider)
	if err != nil {
		return nil, err
	}
	if l, ok := p.(provider.Locator); ok {
		return l.GetStatusOf(ctx, t)
	}
	return p.GetStatus(ctx, t.ID)
}

// InspectTenant reads the live state of the tenant's workload and, when its
// provider is a DriftDetector and spec is given, every difference between
// what runs and spec. Otherwise the inspection holds only the status.
func (m *Manager) InspectTenant(ctx context.Context, t provider.TenantRef, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	p, err := m.registry.Get(t.Provider)
	if err != nil {
		return nil, err
	}
	if d, ok := p.(provider.DriftDetector); ok && spec != nil {
		in, err := d.Inspect(ctx, spec)
		if err != nil {
			return nil, err
		}
		if in == nil || in.Status == nil {
			return nil, fmt.Errorf("compute: provider %s inspected tenant %s and returned no status", t.Provider, t.ID)
		}
		return in, nil
	}
	st, err := m.GetTenantStatus(ctx, t)
	if err != nil {
		return nil, err
	}
	return &provider.Inspection{Status: st}, nil
}

// orEmpty is spec, or an empty spec when it is missing, for audit lines.
func orEmpty(spec *provider.TenantComputeSpec) *provider.TenantComputeSpec {
	if spec == nil {
		return &provider.TenantComputeSpec{}
	}
	return spec
}

// audit writes the one structured line recorded for every provision, update
// and destroy. It never logs a spec, a config or a secret.
func (m *Manager) audit(ctx context.Context, op, tenantID, providerName string, generation int64, start time.Time, err error, extra ...slog.Attr) {
	attrs := []slog.Attr{
		slog.String("audit", "compute"),
		slog.String("operation", op),
		slog.String("tenant_id", tenantID),
		slog.String("provider", providerName),
		slog.Duration("duration", m.now().Sub(start)),
	}
	if generation != 0 {
		attrs = append(attrs, slog.Int64("generation", generation))
	}
	attrs = append(attrs, extra...)
	level := slog.LevelInfo
	outcome := "success"
	if err != nil {
		outcome = "failure"
		level = slog.LevelWarn
		if provider.IsTerminal(err) {
			level = slog.LevelError
		}
		attrs = append(attrs, slog.Bool("retryable", !provider.IsTerminal(err)), slog.String("error", err.Error()))
	}
	attrs = append(attrs, slog.String("outcome", outcome))
	m.logger.LogAttrs(ctx, level, "compute "+op, attrs...)
	if m.observer != nil {
		result := outcome
		if err != nil {
			result = "retryable"
			if provider.IsTerminal(err) {
				result = "terminal"
			}
		}
		m.observer.ObserveOperation(providerName, op, result, m.now().Sub(start))
	}
}
