package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Options configure a Provider.
type Options struct {
	// Block is the provider's configuration block: Settings keys plus tenant
	// defaults. Nil means no settings and no defaults.
	Block json.RawMessage
	// Logger receives one line per operation; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Rand returns a number in [0, 1) for failure_rate; nil means math/rand.
	Rand func() float64
	// Platform is where workloads live; nil means a new, empty one. Pass
	// the Platform of an earlier provider to simulate a landlord restart.
	Platform *Platform
}

// Provider is the mock compute provider.
type Provider struct {
	settings Settings
	schema   json.RawMessage
	defaults json.RawMessage
	logger   *slog.Logger
	now      func() time.Time
	rand     func() float64
	pl       *Platform
	// ownPlatform: pl was made by New, not given, so Close closes it.
	ownPlatform bool
}

// simulated is one tenant's simulated workload.
type simulated struct {
	spec *provider.TenantComputeSpec
	// startsAt is when a workload that starts slowly (x-mock start_after)
	// runs.
	startsAt   time.Time
	hash       string
	created    time.Time
	updated    time.Time
	endpoints  []provider.Endpoint
	containers []provider.ContainerStatus
}

// New returns a mock provider configured by opts.
func New(opts Options) (*Provider, error) {
	schema, err := configSchema()
	if err != nil {
		return nil, err
	}
	p := &Provider{
		schema: schema,
		logger: opts.Logger,
		now:    opts.Now,
		rand:   opts.Rand,
		pl:     opts.Platform,
	}
	if p.pl == nil {
		p.pl, p.ownPlatform = NewPlatform(), true
	}
	if p.defaults, err = workload.SplitBlock(Name, opts.Block, &p.settings, schema); err != nil {
		return nil, err
	}
	if err := p.settings.check(); err != nil {
		return nil, err
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.logger = p.logger.With(slog.String("provider", Name))
	if p.now == nil {
		p.now = time.Now
	}
	if p.rand == nil {
		p.rand = rand.Float64
	}
	return p, nil
}

// Close closes the listeners of its tenants' endpoints ("x-mock":
// {"listen": true}) when the provider made its platform; a platform given
// in Options is its giver's to close.
func (p *Provider) Close() error {
	if p.ownPlatform {
		p.pl.Close()
	}
	return nil
}

// Name returns "mock".
func (p *Provider) Name() string { return Name }

// ConfigSchema returns the shared workload schema plus "x-mock".
func (p *Provider) ConfigSchema() json.RawMessage { return p.schema }

// ConfigDefaults returns the tenant defaults from the configuration block.
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// CheckHealth always succeeds: memory is always reachable.
func (p *Provider) CheckHealth(context.Context) error { return nil }

// Capabilities: the mock simulates everything the portable workload can ask
// for.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{InPlaceUpdate: true, MultipleContainers: true, Secrets: true, PublishedPorts: true,
		PublicNetworking: true, HealthChecks: true, Scaling: true, Volumes: true}
}

// ValidateConfig checks the workload rules and "x-mock".
func (p *Provider) ValidateConfig(config json.RawMessage) error {
	return provider.CheckConfig(p, config)
}

// DecodeConfig reads and checks "x-mock", which Provision, Update, Destroy
// and GetStatus find again in the spec's Options.
func (p *Provider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	var o tenantOptions
	if err := provider.DecodeOptions(config, &o, "mock options"); err != nil {
		return err
	}
	if err := o.Mock.check(); err != nil {
		return err
	}
	spec.Options = o
	return nil
}

// Validate checks spec without side effects.
func (p *Provider) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	return provider.ValidateSpec(spec, Name)
}

// Provision creates the tenant's simulated workload, or converges an
// existing one to spec.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	defer p.pl.begin(spec.TenantID)()
	log := p.logger.With(slog.String("tenant_id", spec.TenantID))
	if err := p.simulate(ctx, spec.TenantID, OpProvision, behaviourOf(spec), provider.ErrProvisionFailed, log); err != nil {
		return nil, err
	}
	hash := spec.Hash()
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	// Nothing is created before this point, so a cancelled call leaves
	// nothing behind.
	if err := ctx.Err(); err != nil {
		return nil, provider.Retryable(fmt.Errorf("mock: provision tenant %s: %w: %w", spec.TenantID, provider.ErrProvisionFailed, err))
	}
	w, exists := p.pl.workloads[spec.TenantID]
	message := "created"
	var err error
	switch {
	case exists && w.hash == hash && w.allRunning():
		message = "already provisioned"
	case exists && w.hash == hash:
		err = p.apply(w, spec, hash)
		message = "restarted containers that had stopped"
	case exists:
		err = p.apply(w, spec, hash)
		message = "adopted the existing workload and updated it"
	default:
		w, err = p.create(spec, hash)
	}
	if err != nil {
		log.Warn("mock provision failed", slog.String("error", err.Error()))
		return nil, provider.Retryable(fmt.Errorf("mock: provision tenant %s: %w: %w", spec.TenantID, provider.ErrProvisionFailed, err))
	}
	log.Info("mock provision", slog.String("result", message))
	return &provider.ProvisionResult{
		TenantID:      spec.TenantID,
		ProviderType:  Name,
		Status:        provider.ProvisionStatusSuccess,
		ResourceIDs:   resourceIDs(w.spec),
		Endpoints:     cloneEndpoints(w.endpoints),
		Message:       message,
		ProvisionedAt: w.created,
	}, nil
}

// Update converges the tenant's workload to spec.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	if spec.TenantID != tenantID {
		return nil, provider.Invalid("/tenant_id", "spec is for tenant %q, not %q", spec.TenantID, tenantID)
	}
	defer p.pl.begin(tenantID)()
	log := p.logger.With(slog.String("tenant_id", tenantID))
	if err := p.simulate(ctx, tenantID, OpUpdate, behaviourOf(spec), provider.ErrUpdateFailed, log); err != nil {
		return nil, err
	}
	hash := spec.Hash()
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, provider.Retryable(fmt.Errorf("mock: update tenant %s: %w: %w", tenantID, provider.ErrUpdateFailed, err))
	}
	w, exists := p.pl.workloads[tenantID]
	if !exists {
		return nil, fmt.Errorf("mock: update tenant %s: %w", tenantID, provider.ErrTenantNotFound)
	}
	var changes []provider.Change
	if w.hash != hash || !w.allRunning() {
		changes = provider.Diff(w.spec, spec)
		if err := p.apply(w, spec, hash); err != nil {
			log.Warn("mock update failed", slog.String("error", err.Error()))
			return nil, provider.Retryable(fmt.Errorf("mock: update tenant %s: %w: %w", tenantID, provider.ErrUpdateFailed, err))
		}
	}
	log.Info("mock update", slog.Int("changes", len(changes)))
	return &provider.UpdateResult{
		TenantID:     tenantID,
		ProviderType: Name,
		Status:       provider.ProvisionStatusSuccess,
		Changes:      changes,
		ResourceIDs:  resourceIDs(w.spec),
		Endpoints:    cloneEndpoints(w.endpoints),
		UpdatedAt:    w.updated,
	}, nil
}

// Destroy removes the tenant's workload. It finishes even when ctx is
// cancelled.
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	defer p.pl.begin(tenantID)()
	log := p.logger.With(slog.String("tenant_id", tenantID))
	p.pl.mu.Lock()
	var b Behaviour
	if w, ok := p.pl.workloads[tenantID]; ok {
		b = behaviourOf(w.spec)
	}
	p.pl.mu.Unlock()
	// Cleanup must not stop halfway because the caller gave up.
	if err := p.simulate(context.WithoutCancel(ctx), tenantID, OpDestroy, b, nil, log); err != nil {
		return err
	}
	p.pl.mu.Lock()
	_, existed := p.pl.workloads[tenantID]
	delete(p.pl.workloads, tenantID)
	delete(p.pl.fights, tenantID)
	p.pl.closeListeners(tenantID, "")
	p.pl.mu.Unlock()
	log.Info("mock destroy", slog.Bool("existed", existed))
	return nil
}

// GetStatus reports the workload's simulated state.
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	defer p.pl.begin(tenantID)()
	log := p.logger.With(slog.String("tenant_id", tenantID))
	p.pl.mu.Lock()
	var b Behaviour
	if w, ok := p.pl.workloads[tenantID]; ok {
		b = behaviourOf(w.spec)
	}
	p.pl.mu.Unlock()
	if err := p.simulate(ctx, tenantID, OpStatus, b, nil, log); err != nil {
		return nil, err
	}
	p.pl.mu.Lock()
	defer p.pl.mu.Unlock()
	w, ok := p.pl.workloads[tenantID]
	if !ok {
		return nil, fmt.Errorf("mock: status of tenant %s: %w", tenantID, provider.ErrTenantNotFound)
	}
	return w.status(Name, p.now()), nil
}

// simulate counts the call, waits the configured latency and injects the
// configured failures. failed is the sentinel a failure wraps, if any.
func (p *Provider) simulate(ctx context.Context, tenantID string, op Operation, b Behaviour, failed error, log *slog.Logger) error {
	p.pl.mu.Lock()
	p.pl.calls[call{tenantID, op}]++
	// fail_times counts from when the tenant asked for this behaviour.
	f := failure{call{tenantID, op}, b.key()}
	p.pl.failures[f]++
	n := p.pl.failures[f]
	random := p.settings.FailureRate > 0 && p.rand() < p.settings.FailureRate
	p.pl.mu.Unlock()

	fail := func(cause error) error {
		if failed == nil {
			return fmt.Errorf("mock: %s tenant %s: %w", op, tenantID, cause)
		}
		return fmt.Errorf("mock: %s tenant %s: %w: %w", op, tenantID, failed, cause)
	}
	if b.Progress != "" && (op == OpProvision || op == OpUpdate) {
		provider.ReportProgress(ctx, "%s", b.Progress)
	}
	if d := time.Duration(p.settings.Latency) + b.latency(); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	if err := ctx.Err(); err != nil {
		return provider.Retryable(fail(err))
	}
	if b.failsOn(op, n) {
		err := fail(fmt.Errorf("injected %s failure (call %d)", b.Fail, n))
		if b.Fail == "terminal" {
			log.Error("mock injected failure", slog.String("operation", string(op)), slog.String("kind", b.Fail))
			return provider.Terminal(err)
		}
		log.Warn("mock injected failure", slog.String("operation", string(op)), slog.String("kind", b.Fail))
		return provider.Retryable(err)
	}
	if random {
		log.Warn("mock injected failure", slog.String("operation", string(op)), slog.String("kind", "failure_rate"))
		return provider.Retryable(fail(fmt.Errorf("injected failure (failure_rate %v)", p.settings.FailureRate)))
	}
	return nil
}

// create records a new workload; p.mu is held.
func (p *Provider) create(spec *provider.TenantComputeSpec, hash string) (*simulated, error) {
	w := &simulated{created: p.now()}
	if err := p.apply(w, spec, hash); err != nil {
		return nil, err
	}
	p.pl.workloads[spec.TenantID] = w
	return w, nil
}

// apply makes w run spec, or leaves it as it was when the endpoints spec
// asks for cannot be served; p.mu is held.
func (p *Provider) apply(w *simulated, spec *provider.TenantComputeSpec, hash string) error {
	endpoints, err := p.pl.endpoints(spec)
	if err != nil {
		return err
	}
	w.spec = spec.Clone()
	w.hash = hash
	defer func() {
		if fight := p.pl.fights[spec.TenantID]; fight != nil {
			p.alter(w, fight)
		}
	}()
	w.updated = p.now()
	b := behaviourOf(spec)
	w.startsAt = w.updated.Add(b.startAfter())
	w.endpoints = endpoints
	w.containers = nil
	for _, c := range spec.Containers {
		health := provider.HealthUnknown
		if c.HealthCheck != nil {
			health = provider.HealthHealthy
		}
		w.containers = append(w.containers, provider.ContainerStatus{
			Name:   c.Name,
			Image:  c.Image,
			State:  provider.ContainerRunning,
			Health: health,
			ID:     containerID(spec.TenantID, c.Name),
		})
	}
	return nil
}

// allRunning reports whether every container runs; p.mu is held.
func (w *simulated) allRunning() bool {
	for _, c := range w.containers {
		if c.State != provider.ContainerRunning {
			return false
		}
	}
	return true
}

// status summarises the workload; p.mu is held.
func (w *simulated) status(name string, now time.Time) *provider.ComputeStatus {
	st := &provider.ComputeStatus{
		TenantID:     w.spec.TenantID,
		ProviderType: name,
		Containers:   append([]provider.ContainerStatus(nil), w.containers...),
		Endpoints:    cloneEndpoints(w.endpoints),
		Generation:   w.spec.Generation,
		LastUpdated:  w.updated,
	}
	if now.Before(w.startsAt) {
		for i := range st.Containers {
			st.Containers[i].State = provider.ContainerCreated
			st.Containers[i].Health = provider.HealthStarting
		}
		st.State, st.Health = provider.StatePending, provider.HealthStarting
		st.Message = fmt.Sprintf("starting; running in %s", w.startsAt.Sub(now).Round(time.Millisecond))
		return st
	}
	running, checked, healthy := 0, 0, 0
	for _, c := range w.containers {
		if c.State == provider.ContainerRunning {
			running++
		}
		if c.Health != provider.HealthUnknown {
			checked++
			if c.Health == provider.HealthHealthy {
				healthy++
			}
		}
	}
	switch {
	case running == len(w.containers):
		st.State = provider.StateRunning
	case running == 0:
		st.State = provider.StateFailed
		st.Message = "no container is running"
	default:
		st.State = provider.StateDegraded
		st.Message = fmt.Sprintf("%d of %d containers running", running, len(w.containers))
	}
	switch {
	case checked == 0:
		st.Health = provider.HealthUnknown
	case healthy == checked:
		st.Health = provider.HealthHealthy
	default:
		st.Health = provider.HealthUnhealthy
	}
	return st
}

func resourceIDs(spec *provider.TenantComputeSpec) map[string]string {
	ids := map[string]string{"workload": "mock-" + spec.TenantID}
	for _, c := range spec.Containers {
		ids["container/"+c.Name] = containerID(spec.TenantID, c.Name)
	}
	return ids
}

func containerID(tenantID, container string) string {
	return "mock-" + tenantID + "-" + container
}

func cloneEndpoints(e []provider.Endpoint) []provider.Endpoint {
	return append([]provider.Endpoint(nil), e...)
}

var (
	_ provider.Provider           = (*Provider)(nil)
	_ provider.HealthChecker      = (*Provider)(nil)
	_ provider.ConfigDecoder      = (*Provider)(nil)
	_ provider.CapabilityReporter = (*Provider)(nil)
)
