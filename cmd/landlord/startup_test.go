package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providertest"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

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

// At start-up, one warning line counts the tenants whose provider is not
// enabled and says what to do.
func TestServeWarnsOfStrandedTenants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "landlord.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, provider string }{{"acme", "docker"}, {"beta", "docker"}, {"gamma", "nomad"}, {"delta", "mock"}} {
		if _, err := s.Create(context.Background(), &tenant.Tenant{Name: tc.name, Provider: tc.provider, ComputeConfig: json.RawMessage(`{"image":"a"}`)}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	cfg := config.Defaults()
	cfg.Listen = servetest.FreeAddr(t)
	cfg.Database.Path = path
	cfg.SetComputeDefault("mock")
	logs := serveUntilStarted(t, cfg)
	var warnings []string
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "not enabled") && strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "--forget") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 {
		t.Fatalf("%d warnings of stranded tenants, want 1:\n%s", len(warnings), logs)
	}
	for _, want := range []string{"3 tenants use compute providers this server has not enabled (docker: 2, nomad: 1)", `"tenants":3`, `"providers":"docker,nomad"`} {
		if !strings.Contains(warnings[0], want) {
			t.Errorf("the warning lacks %s: %s", want, warnings[0])
		}
	}
}
