package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/tenantlock"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Options configure a Provider.
type Options struct {
	// Block is the provider's configuration block: Settings keys plus tenant
	// defaults. Nil means the defaults.
	Block json.RawMessage
	// Logger receives one line per operation, each with the tenant id; nil
	// discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HashKey keys the HMAC-SHA256 in each container's config-hash label,
	// so that the label, readable by anyone who can list containers, does
	// not let them test guesses of a secret. It must be at least
	// provider.MinHashKeyLen bytes and stay the same across restarts: a different
	// key makes every container look changed, and the next Provision or
	// Update replaces them all.
	HashKey []byte
}

// Provider runs tenant workloads on a Docker Engine. It is safe for
// concurrent use; operations on one tenant are serialized within the
// process.
type Provider struct {
	settings Settings
	schema   json.RawMessage
	defaults json.RawMessage
	logger   *slog.Logger
	now      func() time.Time
	client   *client.Client
	hashKey  []byte
	// registryGrace is how long pulls are tried again while the Engine
	// cannot resolve or reach a registry; tests shorten it.
	registryGrace time.Duration

	locks tenantlock.Locks
	// images caches image configurations by id, for Inspect.
	images imageCache
}

// New returns a provider configured by opts. It does not contact the Engine;
// CheckHealth does.
func New(_ context.Context, opts Options) (*Provider, error) {
	if err := provider.CheckHashKey(Name, opts.HashKey); err != nil {
		return nil, err
	}
	schema, err := configSchema()
	if err != nil {
		return nil, err
	}
	p := &Provider{schema: schema, logger: opts.Logger, now: opts.Now, hashKey: bytes.Clone(opts.HashKey), registryGrace: defaultRegistryGrace}
	if p.defaults, err = workload.SplitBlock(Name, opts.Block, &p.settings, schema); err != nil {
		return nil, err
	}
	p.settings.applyDefaults()
	if err := p.settings.check(); err != nil {
		return nil, err
	}
	// The client negotiates the API version on its first request.
	clientOpts := []client.Opt{client.FromEnv}
	if p.settings.Host != "" {
		clientOpts = append(clientOpts, client.WithHost(p.settings.Host))
	}
	if p.client, err = client.New(clientOpts...); err != nil {
		return nil, fmt.Errorf("docker: client for %q: %w", p.settings.Host, err)
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.logger = p.logger.With(slog.String("provider", Name))
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// Close releases the Engine client's connections.
func (p *Provider) Close() error { return p.client.Close() }

// Name returns "docker".
func (p *Provider) Name() string { return Name }

// ConfigSchema returns the shared workload schema plus pull_policy,
// privileged, host_network and binds.
func (p *Provider) ConfigSchema() json.RawMessage { return p.schema }

// ConfigDefaults returns the tenant defaults from the configuration block.
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// CheckHealth pings the Engine, negotiating the API version.
func (p *Provider) CheckHealth(ctx context.Context) error {
	if _, err := p.client.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("docker: ping engine at %s: %w", p.client.DaemonHost(), err)
	}
	return nil
}

// Capabilities: containers are replaced, not changed in place, and one
// container runs per workload container (no replicas); host bind mounts are
// volumes, where the operator allows them.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{MultipleContainers: true, Secrets: true, PublishedPorts: true,
		PublicNetworking: true, HealthChecks: true, Volumes: true}
}

// ValidateConfig checks the workload rules, image references and the
// operator's policy on privileged mode, host networking and bind mounts.
func (p *Provider) ValidateConfig(config json.RawMessage) error {
	return provider.CheckConfig(p, config)
}

// DecodeConfig reads the Docker options of a config (pull_policy,
// privileged, host_network, binds), which Provision and Update find again
// in the spec's Options, and checks them against the operator's policy and
// the workload's image references.
func (p *Provider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	var o tenantOptions
	if err := provider.DecodeOptions(config, &o, "docker options"); err != nil {
		return err
	}
	var errs violation.List
	p.settings.checkOptions(o, &errs)
	for i, c := range spec.Containers {
		checkImage(workload.ContainerPointer(i)+"/image", c.Image, &errs)
	}
	spec.Options = o
	return errs.Err(provider.ErrInvalidSpec)
}

// Validate checks spec without side effects.
func (p *Provider) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	if err := provider.ValidateSpec(spec, Name); err != nil {
		return err
	}
	var errs violation.List
	for i, c := range spec.Containers {
		at := fmt.Sprintf("/containers/%d", i)
		checkImage(at+"/image", c.Image, &errs)
		if m := c.Resources.MemoryMiB; m > 0 && m < 6 {
			errs.Add(at+"/resources/memory_mib", "%d MiB is below Docker's minimum of 6 MiB", m)
		}
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// lock serializes operations on one tenant within this process; the
// returned function unlocks.
func (p *Provider) lock(tenantID string) func() { return p.locks.Lock(tenantID) }

// log returns the logger for one tenant.
func (p *Provider) log(tenantID string) *slog.Logger {
	return p.logger.With(slog.String("tenant_id", tenantID))
}

var (
	_ provider.Provider           = (*Provider)(nil)
	_ provider.HealthChecker      = (*Provider)(nil)
	_ provider.ConfigDecoder      = (*Provider)(nil)
	_ provider.CapabilityReporter = (*Provider)(nil)
	_ provider.DriftDetector      = (*Provider)(nil)
	_ provider.ChangeNotifier     = (*Provider)(nil)
)

func (p *Provider) stopTimeout() time.Duration { return time.Duration(p.settings.StopTimeout) }

// detached returns a context for cleanup that outlives ctx's cancellation
// but not the grace it needs.
func (p *Provider) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*p.stopTimeout()+time.Minute)
}
