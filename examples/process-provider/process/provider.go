package process

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/tenantlock"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "process"

// Settings are the provider's own keys in its settings block.
type Settings struct {
	// StateDir holds a directory per tenant; empty means
	// $TMPDIR/landlord-process.
	StateDir string `json:"state_dir"`
	// PortRange is "FROM-TO", the ports tenants' processes get; empty
	// means 20000-29999.
	PortRange string `json:"port_range"`
	// StopTimeout is how long a process has to exit after SIGTERM before
	// it is killed; zero means 5s.
	StopTimeout workload.Duration `json:"stop_timeout"`
}

// Options configure a Provider.
type Options struct {
	// Block is the settings block: Settings keys and tenant defaults.
	Block json.RawMessage
	// HashKey is the install's key, for the fingerprints in the state.
	HashKey []byte
	// Logger receives one line per operation; nil discards them.
	Logger *slog.Logger
}

// Provider runs tenants' containers as local processes.
type Provider struct {
	settings Settings
	ports    portRange
	schema   json.RawMessage
	defaults json.RawMessage
	hashKey  []byte
	log      *slog.Logger
	locks    tenantlock.Locks
	sup      *supervisor
}

// New returns the provider configured by opts; Close stops its supervision
// (the processes keep running).
func New(opts Options) (*Provider, error) {
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("%s: runs on Linux only (it reads /proc)", Name)
	}
	if err := provider.CheckHashKey(Name, opts.HashKey); err != nil {
		return nil, err
	}
	schema, err := workload.Schema(Name, nil)
	if err != nil {
		return nil, err
	}
	p := &Provider{schema: schema, hashKey: opts.HashKey, log: opts.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.defaults, err = workload.SplitBlock(Name, opts.Block, &p.settings, schema); err != nil {
		return nil, err
	}
	if err := p.configure(); err != nil {
		return nil, err
	}
	reserveRecorded(p)
	p.sup = newSupervisor(p)
	return p, nil
}

// configure checks the settings and fills in their defaults.
func (p *Provider) configure() error {
	var errs violation.List
	if p.settings.StateDir == "" {
		p.settings.StateDir = filepath.Join(os.TempDir(), "landlord-process")
	}
	if !filepath.IsAbs(p.settings.StateDir) {
		errs.Add("/state_dir", "%q must be an absolute path", p.settings.StateDir)
	}
	if p.settings.PortRange == "" {
		p.settings.PortRange = "20000-29999"
	}
	r, err := parsePortRange(p.settings.PortRange)
	if err != nil {
		errs.Add("/port_range", "%v", err)
	}
	p.ports = r
	if p.settings.StopTimeout == 0 {
		p.settings.StopTimeout = workload.Duration(5 * time.Second)
	}
	if err := errs.Err(provider.ErrInvalidSpec); err != nil {
		return fmt.Errorf("%s: settings: %w", Name, err)
	}
	if err := os.MkdirAll(p.settings.StateDir, 0o700); err != nil {
		return fmt.Errorf("%s: state directory: %w", Name, err)
	}
	return nil
}

// Close stops the supervision of the processes this provider started;
// they keep running.
func (p *Provider) Close() { p.sup.close() }

func (p *Provider) Name() string                    { return Name }
func (p *Provider) ConfigSchema() json.RawMessage   { return p.schema }
func (p *Provider) ConfigDefaults() json.RawMessage { return p.defaults }

// Capabilities: sidecars, secrets and published ports; no health checks,
// scaling, volumes or public networking, and an update restarts what
// changed.
func (p *Provider) Capabilities() provider.Capabilities {
	return provider.Capabilities{MultipleContainers: true, Secrets: true, PublishedPorts: true}
}

// ValidateConfig has nothing to check beyond the workload's own rules.
func (p *Provider) ValidateConfig(json.RawMessage) error { return nil }

// Validate checks that each image is an executable file.
func (p *Provider) Validate(_ context.Context, spec *provider.TenantComputeSpec) error {
	if err := provider.ValidateSpec(spec, Name); err != nil {
		return err
	}
	var errs violation.List
	for i, c := range spec.Containers {
		at := fmt.Sprintf("/containers/%d/image", i)
		if !filepath.IsAbs(c.Image) {
			errs.Add(at, "%s is not an absolute path: the process provider runs the executable the image names", violation.Quote(c.Image))
			continue
		}
		if fi, err := os.Stat(c.Image); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			errs.Add(at, "%s is not an executable file on this machine", violation.Quote(c.Image))
		}
	}
	return errs.Err(provider.ErrInvalidSpec)
}

// CheckHealth checks that the state directory is writable.
func (p *Provider) CheckHealth(context.Context) error {
	f, err := os.CreateTemp(p.settings.StateDir, ".health-*")
	if err != nil {
		return fmt.Errorf("%s: the state directory %s is not writable: %w", Name, p.settings.StateDir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// WatchChanges reports tenants whose processes exited or were replaced,
// as the supervisor sees them.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	stop := p.sup.subscribe(changed)
	defer stop()
	<-ctx.Done()
	return nil
}

// tenantDir is where a tenant's state and logs live.
func (p *Provider) tenantDir(tenantID string) string {
	return filepath.Join(p.settings.StateDir, tenantID)
}

// lock holds the tenant's lock for one operation.
func (p *Provider) lock(tenantID string) func() { return p.locks.Lock(tenantID) }
