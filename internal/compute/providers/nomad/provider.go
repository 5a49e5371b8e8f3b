package nomad

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/tenantlock"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Options configure a Provider.
type Options struct {
	// Block is the provider's configuration block: Settings keys plus
	// tenant defaults (datacenters, driver, update, …).
	Block json.RawMessage
	// Logger receives one line per change made on the cluster, each with
	// the tenant id; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// HashKey keys the HMAC-SHA256 fingerprint recorded in each job's meta,
	// so that meta, readable by whoever may read the job, does not let
	// anyone test guesses of a secret. It must be at least
	// provider.MinHashKeyLen bytes and stay the same across restarts.
	HashKey []byte
	// Getenv reads the environment for the settings' defaults (NOMAD_ADDR,
	// NOMAD_TOKEN, …); nil means os.Getenv.
	Getenv func(string) string
}

// Provider runs each tenant as one Nomad service job. It is safe for
// concurrent use; operations on one tenant are serialized within the
// process.
type Provider struct {
	settings Settings
	prefix   string
	schema   json.RawMessage
	defaults json.RawMessage
	logger   *slog.Logger
	now      func() time.Time
	hashKey  []byte
	client   *api.Client
	// config made client; clientIn copies it for other namespaces.
	config api.Config

	locks tenantlock.Locks
	// jobs remembers the job ID of each tenant id seen, so that GetStatus
	// and Destroy by id need no scan; an entry is checked against the job's
	// meta before it is trusted, and losing them costs only a scan.
	jobs sync.Map // tenant id → job ID
	// jobTenants maps the job IDs the event stream has seen to their
	// tenants' ids; an entry is only a hint for a notification.
	jobTenants sync.Map // job ID → tenant id
	nsClients  sync.Map // namespace → *api.Client, see clientIn
	// allocPorts remembers the host ports of each allocation seen running,
	// which never change for the allocation's life.
	allocPorts sync.Map // allocation ID → []api.PortMapping
	// plans remembers the drift the last plan of each job found (see
	// jobDrift), varDigests the digests of each Variable's items (see
	// variableItems): Inspect at rest then costs reads, no plan.
	plans      sync.Map // namespace/job ID → planned
	varDigests sync.Map // namespace/path → variableDigest
}

// New returns a provider configured by opts. It does not contact Nomad;
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
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &p.settings
	s.Address = cmp.Or(s.Address, getenv("NOMAD_ADDR"), DefaultAddress)
	s.Region = cmp.Or(s.Region, getenv("NOMAD_REGION"))
	s.Namespace = cmp.Or(s.Namespace, getenv("NOMAD_NAMESPACE"), DefaultNamespace)
	s.Token = cmp.Or(s.Token, getenv("NOMAD_TOKEN"))
	s.CACert = cmp.Or(s.CACert, getenv("NOMAD_CACERT"))
	s.ClientCert = cmp.Or(s.ClientCert, getenv("NOMAD_CLIENT_CERT"))
	s.ClientKey = cmp.Or(s.ClientKey, getenv("NOMAD_CLIENT_KEY"))
	s.TLSServerName = cmp.Or(s.TLSServerName, getenv("NOMAD_TLS_SERVER_NAME"))
	if s.MHzPerCore <= 0 {
		s.MHzPerCore = DefaultMHzPerCore
	}
	p.prefix = DefaultJobPrefix
	if s.JobPrefix != nil {
		p.prefix = *s.JobPrefix
	}
	if err := checkSettings(s, p.prefix); err != nil {
		return nil, err
	}
	if len(p.defaults) > 0 {
		var base tenantOptions
		if err := json.Unmarshal(p.defaults, &base); err != nil {
			return nil, fmt.Errorf("nomad: defaults: %w", err)
		}
		if base.Driver == DriverRawExec && !s.AllowRawExec {
			return nil, fmt.Errorf("compute.nomad: %w", violation.New(workload.ErrInvalid, "/driver", "raw_exec runs tenants' commands on the nodes unisolated; set allow_raw_exec: true in the block to allow it"))
		}
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	p.logger = p.logger.With(slog.String("provider", Name))
	if p.now == nil {
		p.now = time.Now
	}
	cfg := &api.Config{Address: s.Address, Region: s.Region, Namespace: s.Namespace, SecretID: s.Token}
	if s.CACert != "" || s.ClientCert != "" || s.ClientKey != "" || s.TLSServerName != "" {
		cfg.TLSConfig = &api.TLSConfig{CACert: s.CACert, ClientCert: s.ClientCert, ClientKey: s.ClientKey, TLSServerName: s.TLSServerName}
	}
	p.config = *cfg
	if p.client, err = api.NewClient(cfg); err != nil {
		return nil, fmt.Errorf("nomad: client for %s: %w", s.Address, err)
	}
	return p, nil
}

// checkSettings checks what the block's settings must be, naming the key.
func checkSettings(s *Settings, prefix string) error {
	var errs violation.List
	if !validJobPrefix.MatchString(prefix) {
		errs.Add("/job_prefix", "%q is not a job ID prefix: lowercase letters, digits and - only, at most %d characters", prefix, maxPrefix)
	}
	if (s.ClientCert == "") != (s.ClientKey == "") {
		errs.Add("/client_key", "client_cert and client_key go together")
	}
	for at, path := range map[string]string{"/ca_cert": s.CACert, "/client_cert": s.ClientCert, "/client_key": s.ClientKey} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			errs.Add(at, "cannot read %s: %v", path, err)
		}
	}
	if err := errs.Err(workload.ErrInvalid); err != nil {
		return fmt.Errorf("compute.nomad: %w", err)
	}
	return nil
}

// Name returns "nomad".
func (p *Provider) Name() string { return Name }

// ConfigSchema returns the shared workload schema plus the Nomad fields.
func (p *Provider) ConfigSchema() json.RawMessage { return p.schema }

// ConfigDefaults returns the tenant defaults from the configuration block.
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// Capabilities: a job runs several tasks side by side, with secrets from
// Nomad Variables, published ports, health checks as service checks and a
// count. Nomad has no load balancer of its own, so networking.public is not
// offered: ports are on the nodes' addresses.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{MultipleContainers: true, Secrets: true, PublishedPorts: true,
		HealthChecks: true, Scaling: true}
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
		errs.Add("/tenant_name", "is required: the tenant's job is named after it")
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// optionsOf returns the Nomad fields of a resolved spec (see DecodeConfig).
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

// query and write are the options of one call: the namespace and region
// are the client's, ctx bounds the call.
func query(ctx context.Context) *api.QueryOptions { return (&api.QueryOptions{}).WithContext(ctx) }
func write(ctx context.Context) *api.WriteOptions { return (&api.WriteOptions{}).WithContext(ctx) }

var (
	_ provider.Provider           = (*Provider)(nil)
	_ provider.Locator            = (*Provider)(nil)
	_ provider.HealthChecker      = (*Provider)(nil)
	_ provider.ConfigDecoder      = (*Provider)(nil)
	_ provider.CapabilityReporter = (*Provider)(nil)
	_ provider.ChangeNotifier     = (*Provider)(nil)
	_ provider.DriftDetector      = (*Provider)(nil)
)
