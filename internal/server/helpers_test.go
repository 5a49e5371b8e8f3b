package server

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// testProviders are the providers of these tests: Docker, which the
// server prefers when no provider is configured, and the mock, its
// fallback.
var testProviders = Providers{
	{Name: docker.Name, Summary: "Docker Engine", New: func(ctx context.Context, env ProviderEnv) (provider.Provider, error) {
		return docker.New(ctx, docker.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: mock.Name, Summary: "memory", New: func(_ context.Context, env ProviderEnv) (provider.Provider, error) {
		return mock.New(mock.Options{Block: env.Block, Logger: env.Logger})
	}},
}

// serve runs a server of cfg with testProviders until ctx ends, logging
// JSON at cfg's level to w, as landlord serve does when its standard
// error is not a terminal.
func serve(ctx context.Context, cfg config.Config, w io.Writer) error {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	log := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	s, err := New(ctx, cfg, Options{Providers: testProviders, Logger: log})
	if err != nil {
		return err
	}
	return s.Run(ctx)
}

// startServe runs serve with cfg on a free loopback address and a new
// database until the test ends, and returns the API's base URL and the log
// once serve has started.
func startServe(t *testing.T, cfg config.Config) (string, *providertest.LogBuffer) {
	t.Helper()
	cfg.Listen = servetest.FreeAddr(t)
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	logs := servetest.InProcess(t, func(ctx context.Context, logs io.Writer) error { return serve(ctx, cfg, logs) })
	return "http://" + cfg.Listen, logs
}

// serveUntilStarted runs serve with cfg until it logs that it started, then
// stops it, and returns what it logged.
func serveUntilStarted(t *testing.T, cfg config.Config) string {
	t.Helper()
	return servetest.UntilStarted(t, func(ctx context.Context, logs io.Writer) error { return serve(ctx, cfg, logs) })
}
