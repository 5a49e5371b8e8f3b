package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

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
