package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/tenantlock"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Options configure a Provider.
type Options struct {
	// Block is the provider's configuration block: Settings keys plus
	// tenant defaults (namespace_mode, service_type, …).
	Block json.RawMessage
	// Logger receives one line per change made on the cluster, each with
	// the tenant id; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HashKey keys the HMAC-SHA256 fingerprints recorded in annotations, so
	// that an annotation, readable by whoever may read the object, does not
	// let anyone test guesses of a secret. It must be at least
	// provider.MinHashKeyLen bytes and stay the same across restarts.
	HashKey []byte
}

// Provider runs each tenant as a Deployment (and its Service, Ingress,
// Secret, and in namespace_mode per-tenant its own Namespace with a quota
// and a network policy). It is safe for concurrent use; operations on one
// tenant are serialized within the process.
type Provider struct {
	settings Settings
	schema   json.RawMessage
	defaults json.RawMessage
	// base holds the tenant options of the block's defaults, for callers
	// that know only a tenant id.
	base    tenantOptions
	logger  *slog.Logger
	now     func() time.Time
	hashKey []byte
	clients *clients

	locks tenantlock.Locks
	// hints remember where tenants were last seen, so that GetStatus and
	// Destroy by id need no scan; a hint is checked against the objects'
	// labels before it is trusted, and losing them costs only a scan.
	hints sync.Map // tenant id → placement
}

// New returns a provider configured by opts. It reads the kubeconfig but
// does not contact the cluster; CheckHealth does.
func New(_ context.Context, opts Options) (*Provider, error) {
	if err := provider.CheckHashKey(Name, opts.HashKey); err != nil {
		return nil, err
	}
	schema, err := configSchema()
	if err != nil {
		return nil, err
	}
	p := &Provider{schema: schema, logger: opts.Logger, now: opts.Now, hashKey: bytes.Clone(opts.HashKey)}
	if p.defaults, err = workload.SplitBlock(Name, opts.Block, &p.settings, schema); err != nil {
		return nil, err
	}
	if p.settings.ClusterDomain == "" {
		p.settings.ClusterDomain = DefaultClusterDomain
	}
	if p.settings.PullSecretsNamespace == "" {
		p.settings.PullSecretsNamespace = DefaultPullSecretsFrom
	}
	if len(p.defaults) > 0 {
		if err := json.Unmarshal(p.defaults, &p.base); err != nil {
			return nil, fmt.Errorf("kubernetes: defaults: %w", err)
		}
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.logger = p.logger.With(slog.String("provider", Name))
	if p.now == nil {
		p.now = time.Now
	}
	if p.settings.QPS <= 0 {
		p.settings.QPS = DefaultQPS
	}
	if p.settings.Burst <= 0 {
		p.settings.Burst = DefaultBurst
	}
	if p.clients, err = newClients(p.settings.Kubeconfig, p.settings.QPS, p.settings.Burst); err != nil {
		return nil, err
	}
	if p.base.Context != "" {
		if _, err := p.clients.get(p.base.Context); err != nil {
			return nil, fmt.Errorf("kubernetes: the block's context: %w", err)
		}
	}
	return p, nil
}

// Name returns "kubernetes".
func (p *Provider) Name() string { return Name }

// ConfigSchema returns the shared workload schema plus the Kubernetes
// fields.
func (p *Provider) ConfigSchema() json.RawMessage { return p.schema }

// ConfigDefaults returns the tenant defaults from the configuration block.
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// Capabilities: a Deployment rolls Pods over (no in-place update), runs
// replicas, probes health and takes secrets from a Secret; networking.public
// asks for a LoadBalancer Service. Volumes are not offered yet.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{MultipleContainers: true, Secrets: true, PublishedPorts: true,
		PublicNetworking: true, HealthChecks: true, Scaling: true}
}

// ValidateConfig checks a merged config as DecodeConfig does.
func (p *Provider) ValidateConfig(config json.RawMessage) error {
	return provider.CheckConfig(p, config)
}

// Validate checks spec without side effects.
func (p *Provider) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	if err := provider.ValidateSpec(spec, Name); err != nil {
		return err
	}
	var errs violation.List
	if spec.TenantName == "" {
		errs.Add("/tenant_name", "is required: the tenant's objects are named after it")
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// optionsOf returns the Kubernetes fields of a resolved spec (see
// DecodeConfig).
func optionsOf(spec *provider.TenantComputeSpec) tenantOptions {
	o, _ := spec.Options.(tenantOptions)
	return o
}

// lock serializes operations on one tenant within this process; the
// returned function unlocks.
func (p *Provider) lock(tenantID string) func() { return p.locks.Lock(tenantID) }

// log returns the logger for one tenant.
func (p *Provider) log(tenantID string) *slog.Logger {
	return p.logger.With(slog.String("tenant_id", tenantID))
}

// detachedTimeout bounds cleanup that outlives its caller's context.
const detachedTimeout = 2 * time.Minute

// detached returns a context for cleanup that outlives ctx's cancellation.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
}

var (
	_ provider.Provider           = (*Provider)(nil)
	_ provider.Locator            = (*Provider)(nil)
	_ provider.HealthChecker      = (*Provider)(nil)
	_ provider.ConfigDecoder      = (*Provider)(nil)
	_ provider.CapabilityReporter = (*Provider)(nil)
	_ provider.ChangeNotifier     = (*Provider)(nil)
	_ provider.DriftDetector      = (*Provider)(nil)
)
