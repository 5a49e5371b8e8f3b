package ecs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/tenantlock"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Options configure a Provider.
type Options struct {
	// Block is the provider's configuration block: Settings keys plus tenant
	// defaults (cluster_arn, subnets, …). Nil means no defaults, and every
	// tenant must name its cluster.
	Block json.RawMessage
	// Logger receives one line per change made on ECS, each with the tenant
	// id; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HashKey keys the HMAC-SHA256 fingerprints recorded in tags, so that a
	// tag, readable by whoever may describe the service, does not let anyone
	// test guesses of the config. It must be at least provider.MinHashKeyLen bytes
	// and stay the same across restarts.
	HashKey []byte
	// Credentials, if set, replace the SDK's default credential chain
	// (environment, shared config, web identity, IMDS); tests use static
	// ones. An assume_role is assumed with them.
	Credentials aws.CredentialsProvider
	// HTTPClient, if set, carries the SDK's requests.
	HTTPClient aws.HTTPClient
}

// DefaultDrainWait is Settings.DrainWait's default.
const DefaultDrainWait = time.Minute

// Provider runs each tenant as one ECS service. It is safe for concurrent
// use; operations on one tenant are serialized within the process.
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
	aws     *clients

	locks tenantlock.Locks
	// hints remember where tenants were last seen, so that GetStatus and
	// Destroy by id need no scan; a hint is checked against the service's
	// tags before it is trusted, and losing them costs only a scan.
	hints sync.Map // tenant id → placement
	// revisions caches task definition revisions by ARN (the bases of
	// task_definition_arn, the ones services run): a revision's content
	// never changes once registered.
	revisions sync.Map // task definition ARN → *types.TaskDefinition
	// batches coalesce concurrent describe calls, per client and cluster
	// (see reads.go).
	batches sync.Map // readsKey → *clusterReads
}

// New returns a provider configured by opts. It does not contact AWS;
// CheckHealth does.
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
	if p.settings.DrainWait == 0 {
		p.settings.DrainWait = workload.Duration(DefaultDrainWait)
	}
	if len(p.defaults) > 0 {
		if err := json.Unmarshal(p.defaults, &p.base); err != nil {
			return nil, fmt.Errorf("ecs: defaults: %w", err)
		}
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.logger = p.logger.With(slog.String("provider", Name))
	if p.now == nil {
		p.now = time.Now
	}
	p.aws = newClients(opts.Credentials, opts.HTTPClient)
	return p, nil
}

// Name returns "ecs".
func (p *Provider) Name() string { return Name }

// ConfigSchema returns the shared workload schema, image optional, plus the
// ECS fields.
func (p *Provider) ConfigSchema() json.RawMessage { return p.schema }

// ConfigDefaults returns the tenant defaults from the configuration block.
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// Capabilities: a service is updated in place by a rolling deployment and
// runs desired_count tasks; secrets are references to SSM or Secrets
// Manager; health checks are container commands.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{InPlaceUpdate: true, MultipleContainers: true, Secrets: true, PublishedPorts: true,
		PublicNetworking: true, HealthChecks: true, Scaling: true}
}

// CheckHealth describes the default cluster, when the block names one.
func (p *Provider) CheckHealth(ctx context.Context) error {
	if p.base.ClusterARN == "" {
		return nil
	}
	pl, err := p.placementOf(p.base, "")
	if err != nil {
		return err
	}
	c, err := p.aws.ecs(ctx, pl)
	if err != nil {
		return err
	}
	return describeCluster(ctx, c, pl.cluster)
}

// ValidateConfig checks a merged config as DecodeConfig does.
func (p *Provider) ValidateConfig(config json.RawMessage) error {
	return provider.CheckConfig(p, config)
}

// Validate checks spec without side effects.
func (p *Provider) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	if err := provider.ValidateSpecMayOmitContainers(spec, Name); err != nil {
		return err
	}
	o := optionsOf(spec)
	var errs violation.List
	if o.ClusterARN == "" {
		errs.Add("/provider_config/cluster_arn", "is required")
	}
	if len(spec.Containers) == 0 && o.TaskDefinitionARN == "" {
		errs.Add("/containers", "at least one container, or a task_definition_arn, is required")
	}
	if spec.TenantName == "" {
		errs.Add("/tenant_name", "is required: the service is named after the tenant")
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// optionsOf returns the ECS fields of a resolved spec (see DecodeConfig).
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

// detached returns a context for cleanup that outlives ctx's cancellation.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}

var (
	_ provider.Provider           = (*Provider)(nil)
	_ provider.Locator            = (*Provider)(nil)
	_ provider.HealthChecker      = (*Provider)(nil)
	_ provider.ConfigDecoder      = (*Provider)(nil)
	_ provider.CapabilityReporter = (*Provider)(nil)
	_ provider.DriftDetector      = (*Provider)(nil)
)
