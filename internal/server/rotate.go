package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Rotator seals the stored secrets of a database again (landlord secrets
// rotate), with the configuration and the keys its servers use, beside
// them.
type Rotator struct {
	db          store
	rewriter    tenant.ConfigRewriter
	schemas     *compute.Registry
	unavailable map[string]error
	configs     *seal.Configs
}

// NewRotator opens cfg's database for a rotation with opts.Keys. It makes
// every provider of opts.Providers for its config schema, each with its
// block of cfg (else its defaults), contacting none. A SQLite database
// must exist: opening a mistyped path would create an empty one, and
// rotating it would report success. Errors of the configuration match
// ErrConfig.
func NewRotator(ctx context.Context, cfg config.Config, opts Options) (*Rotator, error) {
	opts = opts.withDefaults()
	schemas, unavailable, err := opts.Providers.schemas(ctx, cfg)
	if err != nil {
		return nil, refused(err)
	}
	r := &Rotator{schemas: schemas, unavailable: unavailable, configs: seal.NewConfigs(opts.Keys, schemas)}
	if cfg.Database.Driver != "postgres" {
		if _, err := os.Stat(cfg.Database.Path); err != nil {
			r.Close()
			return nil, refused(fmt.Errorf("secrets rotate: no database at %s (%w): pass the --database or --config landlord serve uses", cfg.Database.Path, err))
		}
	}
	if r.db, _, err = openStore(ctx, cfg.Database, nil, opts.Logger); err != nil {
		r.Close()
		return nil, err
	}
	var ok bool
	if r.rewriter, ok = r.db.(tenant.ConfigRewriter); !ok {
		r.Close()
		return nil, fmt.Errorf("secrets rotate: the %s store cannot rewrite configs", cfg.Database.Driver)
	}
	return r, nil
}

// Rotate seals every stored config again (see seal.Rotate).
func (r *Rotator) Rotate(ctx context.Context, opts seal.RotateOptions) (seal.Stats, error) {
	return seal.Rotate(ctx, r.rewriter, r.configs, opts)
}

// WhyNoSchema says why the config schema of provider is not known here,
// for the providers of seal.Stats.NoSchema.
func (r *Rotator) WhyNoSchema(provider string) error {
	if err := r.unavailable[provider]; err != nil {
		return err
	}
	return errors.New("not in this build")
}

// Close releases the providers and the database.
func (r *Rotator) Close() {
	for _, p := range r.schemas.List() {
		closeProvider(p)
	}
	if r.db != nil {
		_ = r.db.Close()
	}
}

// schemas returns a registry of every provider of ps, each made with its
// block of cfg (else with its defaults) as New makes it, for its config
// schema: a rotation finds the secrets stored in plain text with it. A
// provider that cannot be made here (a kubeconfig that is not there, say)
// is left out, with the reason. Nothing is contacted.
func (ps Providers) schemas(ctx context.Context, cfg config.Config) (*compute.Registry, map[string]error, error) {
	blocks, err := cfg.ComputeBlocks()
	if err != nil {
		return nil, nil, err
	}
	env := ProviderEnv{HashKey: make([]byte, 32), Logger: slog.New(slog.DiscardHandler)}
	rand.Read(env.HashKey) // only the schemas are used
	registry := compute.NewRegistry()
	unavailable := map[string]error{}
	for _, name := range ps.Names() {
		env.Block = blocks[name]
		p, err := ps.New(ctx, name, env)
		if err == nil {
			if err = registry.Register(p); err != nil {
				closeProvider(p)
			}
		}
		if err != nil {
			unavailable[name] = err
		}
	}
	return registry, unavailable, nil
}
