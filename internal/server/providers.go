package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ProviderFactory is one compute provider a build can enable.
type ProviderFactory struct {
	// Name is the provider's key under compute: and the Name of the
	// provider.Provider that New returns.
	Name string
	// Summary says in one line what the provider runs tenants on.
	Summary string
	// New makes the provider from its configuration block. Its provider is
	// used only when the error is nil.
	New func(ctx context.Context, env ProviderEnv) (provider.Provider, error)
}

// ProviderEnv is what the server hands a provider's constructor.
type ProviderEnv struct {
	// Block is the provider's configuration block, the keys under
	// compute.<name>; nil means its defaults.
	Block json.RawMessage
	// Logger is landlord's logger.
	Logger *slog.Logger
	// HashKey is the install's secret key, kept in the database, for
	// providers that key hashes of tenant configuration with it.
	HashKey []byte
}

// Providers are the compute providers of a build, registered in cmd/: the
// server enables those the configuration names, and refuses other names
// saying which there are.
type Providers []ProviderFactory

// Lookup returns the provider called name, or an error that lists the
// names there are.
func (ps Providers) Lookup(name string) (ProviderFactory, error) {
	for _, f := range ps {
		if f.Name == name {
			return f, nil
		}
	}
	return ProviderFactory{}, fmt.Errorf("no such provider in this build (available: %s)", strings.Join(ps.Names(), ", "))
}

// Names lists the providers' names, sorted.
func (ps Providers) Names() []string {
	names := make([]string, len(ps))
	for i, f := range ps {
		names[i] = f.Name
	}
	slices.Sort(names)
	return names
}

// New makes the provider called name from env. A name not in ps is an
// error that says what there is.
func (ps Providers) New(ctx context.Context, name string, env ProviderEnv) (provider.Provider, error) {
	f, err := ps.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("config: compute.%s: %w", name, err)
	}
	p, err := f.New(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if p.Name() != f.Name {
		return nil, fmt.Errorf("provider table: the %s entry made a provider named %q", f.Name, p.Name())
	}
	return p, nil
}

// checkNames refuses provider names ps does not have, in compute.default
// and as compute blocks, before anything is opened: a typo must not leave
// a new database file behind.
func (ps Providers) checkNames(cfg config.Config) error {
	blocks, err := cfg.ComputeBlocks()
	if err != nil {
		return err
	}
	def, err := cfg.ComputeDefault()
	if err != nil {
		return err
	}
	var errs []error
	if def != "" && !cfg.HasPlugin(def) {
		if _, err := ps.Lookup(def); err != nil {
			errs = append(errs, fmt.Errorf("config: compute.default: %w", err))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		if _, err := ps.Lookup(name); err != nil {
			errs = append(errs, fmt.Errorf("config: compute.%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// enable enables a provider for each compute block, and returns them with
// the default's name; the plugins are started after it (startPlugins).
// With neither configured it enables the one compute.default names, else
// Docker when an Engine answers, else the mock.
func (ps Providers) enable(ctx context.Context, cfg config.Config, hashKey []byte, log *slog.Logger) (*compute.Registry, string, error) {
	blocks, err := cfg.ComputeBlocks()
	if err != nil {
		return nil, "", err
	}
	def, err := cfg.ComputeDefault()
	if err != nil {
		return nil, "", err
	}
	var errs []error
	if def != "" && !cfg.HasPlugin(def) {
		if _, err := ps.Lookup(def); err != nil {
			errs = append(errs, fmt.Errorf("config: compute.default: %w", err))
		}
	}
	registry := compute.NewRegistry()
	if len(blocks) == 0 && len(cfg.Plugins) > 0 {
		return registry, def, errors.Join(errs...) // the plugins alone
	}
	if len(blocks) == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, "", err
		}
		p, err := ps.implicit(ctx, def, ProviderEnv{HashKey: hashKey, Logger: log}, log)
		if err != nil {
			return nil, "", err
		}
		return registry, p.Name(), registry.Register(p)
	}
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		p, err := ps.New(ctx, name, ProviderEnv{Block: blocks[name], HashKey: hashKey, Logger: log})
		if err == nil {
			err = registry.Register(p)
		}
		if err == nil {
			warnUnhealthy(ctx, p, log)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	return registry, def, nil
}

// warnUnhealthy says at start-up when a configured provider's platform
// does not answer, or answers that the block names something it does not
// have (a namespace, a region): landlord starts all the same, since a
// platform may come up later, and its tenants wait for it.
func warnUnhealthy(ctx context.Context, p provider.Provider, log *slog.Logger) {
	hc, ok := p.(provider.HealthChecker)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	if err := hc.CheckHealth(ctx); err != nil {
		log.Warn("a compute provider's health check fails at start-up: its tenants wait until it passes (GET /v1/compute/providers shows it)",
			slog.String("provider", p.Name()), slog.String("error", err.Error()))
	}
}

// engineTimeout bounds the ping that decides whether a Docker Engine answers.
const engineTimeout = 3 * time.Second

// implicit is the provider of a configuration without compute blocks: the
// one named, or Docker when an Engine answers, else the mock.
func (ps Providers) implicit(ctx context.Context, name string, env ProviderEnv, log *slog.Logger) (provider.Provider, error) {
	if name != "" {
		return ps.New(ctx, name, env)
	}
	p, err := ps.New(ctx, docker.Name, env)
	if err != nil {
		return nil, err
	}
	hc, ok := p.(provider.HealthChecker)
	if !ok {
		return p, nil
	}
	pingCtx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	err = hc.CheckHealth(pingCtx)
	if err == nil {
		log.Info("no compute provider is configured and a Docker Engine answers: using the docker provider (docs/configuration.md)")
		return p, nil
	}
	log.Warn("no compute provider is configured and no Docker Engine answers: using the mock provider, which runs nothing; start Docker or configure a provider (docs/configuration.md)",
		slog.String("docker", err.Error()))
	closeProvider(p) // the Engine client goes unused
	return ps.New(ctx, mock.Name, env)
}

// closeProvider releases what p holds, if anything.
func closeProvider(p provider.Provider) {
	if c, ok := p.(io.Closer); ok {
		_ = c.Close()
	}
}
