package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Settings the server refuses end start-up with exit code 2 before
// anything listens (internal/server tests the refusals themselves).
func TestServeRefusesBadSettings(t *testing.T) {
	for name, mutate := range map[string]func(*config.Config){
		"no tokens off loopback": func(c *config.Config) { c.Listen = "0.0.0.0:0" },
		"unknown provider":       func(c *config.Config) { c.Compute = map[string]any{"docker2": map[string]any{}} },
		"unknown provider key":   func(c *config.Config) { c.Compute = map[string]any{"mock": map[string]any{"latencyy": "1s"}} },
		"unknown default":        func(c *config.Config) { c.Compute = map[string]any{"default": "docker2", "mock": map[string]any{}} },
		"unknown provider asked": func(c *config.Config) { c.SetComputeDefault("docker2") },
		"lease renewed too seldom": func(c *config.Config) {
			c.Controller.LeaseTTL = workload.Duration(2 * time.Second)
			c.Controller.LeaseRenew = workload.Duration(time.Second)
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = servetest.FreeAddr(t)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			mutate(&cfg)
			err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
			var coded *exitCodeError
			if !errors.As(err, &coded) || coded.code != exitUsage {
				t.Errorf("serve = %v, want a usage error before anything listens", err)
			}
		})
	}
}

// A provider name this build does not have is refused before the database
// is opened: a typo leaves no database file behind.
func TestServeChecksProviderNamesFirst(t *testing.T) {
	for name, mutate := range map[string]func(*config.Config){
		"unknown provider":       func(c *config.Config) { c.Compute = map[string]any{"docker2": map[string]any{}} },
		"unknown default":        func(c *config.Config) { c.Compute = map[string]any{"default": "docker2", "mock": map[string]any{}} },
		"unknown provider asked": func(c *config.Config) { c.SetComputeDefault("mok") },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Listen = servetest.FreeAddr(t)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			mutate(&cfg)
			err := serve(context.Background(), cfg, "", &providertest.LogBuffer{})
			var coded *exitCodeError
			if !errors.As(err, &coded) || coded.code != exitUsage || !strings.Contains(err.Error(), "docker, ecs, kubernetes, nomad") && !strings.Contains(err.Error(), "mock") {
				t.Errorf("serve = %v, want a usage error naming the providers there are", err)
			}
			if _, err := os.Stat(cfg.Database.Path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database file was created: %v", err)
			}
		})
	}
}

func TestServePlainHTTPOffLoopback(t *testing.T) {
	newConfig := func(t *testing.T) config.Config {
		cfg := config.Defaults()
		cfg.Listen = "0.0.0.0:0"
		cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
		cfg.Tokens = []config.Token{{Name: "ops", Secret: "admin-secret", Role: "admin"}}
		cfg.SetComputeDefault("mock")
		return cfg
	}
	t.Run("refused without the switch", func(t *testing.T) {
		err := serve(context.Background(), newConfig(t), "", &providertest.LogBuffer{})
		var coded *exitCodeError
		if !errors.Is(err, config.ErrPlainHTTP) || !errors.As(err, &coded) || coded.code != exitUsage {
			t.Fatalf("serve = %v, want a usage error for plain HTTP", err)
		}
		if !strings.Contains(err.Error(), "--insecure-http") {
			t.Errorf("the error does not say what to do: %v", err)
		}
	})
	for name, mutate := range map[string]func(*config.Config){
		"insecure_http":              func(c *config.Config) { c.InsecureHTTP = true },
		"insecure, without tokens":   func(c *config.Config) { c.Insecure, c.Tokens = true, nil },
		"behind a trusted TLS proxy": func(c *config.Config) { c.TrustedProxies = []string{"10.0.0.0/8"} },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := newConfig(t)
			mutate(&cfg)
			logs := serveUntilStarted(t, cfg)
			if !strings.Contains(logs, "serving plain HTTP on a non-loopback address") {
				t.Errorf("no start-up warning:\n%s", logs)
			}
		})
	}
}

// serveUntilStarted runs serve with cfg until it logs that it started, then
// stops it, and returns what it logged.
func serveUntilStarted(t *testing.T, cfg config.Config) string {
	t.Helper()
	return servetest.UntilStarted(t, func(ctx context.Context, logs io.Writer) error { return serve(ctx, cfg, "", logs) })
}

// startServe runs serve with cfg on a free loopback address and a new
// database until the test ends, and returns the API's base URL and the log
// once serve has started.
func startServe(t *testing.T, cfg config.Config) (string, *providertest.LogBuffer) {
	t.Helper()
	cfg.Listen = servetest.FreeAddr(t)
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	logs := servetest.InProcess(t, func(ctx context.Context, logs io.Writer) error { return serve(ctx, cfg, "", logs) })
	return "http://" + cfg.Listen, logs
}
