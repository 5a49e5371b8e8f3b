package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/sdk/plugin"
)

// startPlugins starts each configured provider plugin and registers its
// provider, as a provider compiled in is registered. A plugin that cannot
// be started refuses serve, naming it; the plugins started before it are
// stopped. Each plugin runs (and is restarted when it dies) until the
// caller closes it.
func startPlugins(ctx context.Context, plugins []config.Plugin, registry *compute.Registry, hashKey []byte, version string, log *slog.Logger) ([]*plugin.Plugin, error) {
	var started []*plugin.Plugin
	fail := func(err error) ([]*plugin.Plugin, error) {
		closePlugins(started)
		return nil, err
	}
	for i, c := range plugins {
		settings, err := c.PluginSettings()
		if err != nil {
			return fail(err)
		}
		p, err := plugin.Start(ctx, plugin.Options{
			Name: c.Name, Path: c.Path, SHA256: c.SHA256, Args: c.Args, Env: c.Environ(),
			Settings: settings, HashKey: hashKey, LandlordVersion: version, Logger: log,
		})
		if err != nil {
			return fail(fmt.Errorf("config: plugins[%d] (%s): %w", i, c.Name, err))
		}
		started = append(started, p)
		if err := registry.Register(p.Provider()); err != nil {
			return fail(fmt.Errorf("config: plugins[%d] (%s): %w", i, c.Name, err))
		}
		log.Info("provider plugin started", slog.String("plugin", c.Name), slog.String("path", c.Path), slog.Int("pid", p.PID()))
		warnUnhealthy(ctx, p.Provider(), log)
	}
	return started, nil
}

// closePlugins stops plugins.
func closePlugins(plugins []*plugin.Plugin) error {
	var errs []error
	for _, p := range plugins {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}
