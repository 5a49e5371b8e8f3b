package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "landlord.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg, file, err := config.Load("", env(nil))
	if err != nil || file != "" {
		t.Fatal(err, file)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.Database.Driver != "sqlite" || cfg.Database.Path != "landlord.db" || cfg.LogLevel != "info" {
		t.Errorf("defaults: %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

func TestPrecedence(t *testing.T) {
	path := write(t, `
listen: 127.0.0.1:9000
log_level: debug
database: {driver: postgres, url: "postgres://db/landlord"}
compute:
  default: mock
  mock: {latency: 5ms, env: {A: "1"}}
controller: {workers: 4, resync: 30s}
tokens:
  - {name: ops, secret: s3cret, role: admin}
`)
	cfg, _, err := config.Load(path, env(map[string]string{"LANDLORD_LISTEN": "127.0.0.1:9100", "LANDLORD_READER_TOKEN": "r"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9100" {
		t.Errorf("the environment must win over the file: %s", cfg.Listen)
	}
	if cfg.LogLevel != "debug" || cfg.Database.URL != "postgres://db/landlord" || cfg.Controller.Workers != 4 || time.Duration(cfg.Controller.Resync) != 30*time.Second {
		t.Errorf("file values: %+v", cfg)
	}
	if len(cfg.Tokens) != 2 || cfg.Tokens[1].Role != "reader" {
		t.Errorf("tokens: %+v", cfg.Tokens)
	}
	blocks, err := cfg.ComputeBlocks()
	if err != nil || string(blocks["mock"]) != `{"env":{"A":"1"},"latency":"5ms"}` {
		t.Errorf("compute blocks: %s %v", blocks, err)
	}
	if def, _ := cfg.ComputeDefault(); def != "mock" {
		t.Errorf("default provider %q", def)
	}
	withEnv, _, err := config.Load(path, env(map[string]string{"LANDLORD_PROVIDER": "docker"}))
	if def, _ := withEnv.ComputeDefault(); err != nil || def != "docker" {
		t.Errorf("LANDLORD_PROVIDER must win over compute.default: %q, %v", def, err)
	}
	if got := config.ParseDatabase("/var/lib/landlord.db"); got.Driver != "sqlite" {
		t.Errorf("a path is SQLite: %+v", got)
	}
}

func TestRefusesMistakes(t *testing.T) {
	for name, tt := range map[string]struct{ body, want string }{
		"unknown key":      {"listne: x\n", "line 1: listne: unknown key; did you mean listen?"},
		"unknown nested":   {"database: {drvier: sqlite}\n", "line 1: database.drvier: unknown key; did you mean database.driver?"},
		"bad duration":     {"controller: {resync: soon}\n", `"soon" is not a duration`},
		"bad driver":       {"database: {driver: mysql}\n", "mysql"},
		"bad log level":    {"log_level: loud\n", "loud"},
		"bad role":         {"tokens: [{name: a, secret: b, role: root}]\n", "root"},
		"malformed":        {"listen: [\n", "yaml"},
		"block not a map":  {"compute: {mock: 5}\n", "compute.mock"},
		"default not name": {"compute: {default: [a]}\n", "compute.default"},
		"lease too short":  {"controller: {lease_ttl: 200ms}\n", "lease TTL 200ms is not between 1s and 5m0s"},
		"lease too long":   {"controller: {lease_ttl: 1h}\n", "controller.lease_ttl"},
		"renew too slow":   {"controller: {lease_ttl: 10s, lease_renew: 5s}\n", "renew every 100ms to 4s"},
		"renew too fast":   {"controller: {lease_renew: 10ms}\n", "controller.lease_ttl and lease_renew"},
		"idem lease short": {"api: {idempotency_lease: 500ms}\n", "api.idempotency_lease: the idempotency lease 500ms is not between 1s and 10m0s"},
		"idem lease long":  {"api: {idempotency_lease: 1h}\n", "api.idempotency_lease"},
		"host with port":   {"api: {hosts: [\"landlord.internal:8080\"]}\n", "api.hosts[0]: \"landlord.internal:8080\" is not a host name"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _, err := config.Load(write(t, tt.body), env(nil))
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				_, err = cfg.ComputeBlocks()
			}
			if err == nil {
				_, err = cfg.ComputeDefault()
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v does not contain %q", err, tt.want)
			}
		})
	}
	if _, _, err := config.Load("", env(map[string]string{"LANDLORD_INSECURE": "maybe"})); err == nil {
		t.Error("LANDLORD_INSECURE=maybe accepted")
	}
}

// api.idempotency_lease within its bounds is read as a duration.
func TestIdempotencyLease(t *testing.T) {
	cfg, _, err := config.Load(write(t, "api: {idempotency_lease: 2s}\n"), env(nil))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil || time.Duration(cfg.API.IdempotencyLease) != 2*time.Second {
		t.Errorf("idempotency_lease 2s: %v, %v", time.Duration(cfg.API.IdempotencyLease), err)
	}
}
