// Package config reads landlord's configuration: defaults, then a YAML or
// JSON file, then LANDLORD_* environment variables; cmd/landlord applies its
// flags last. Every key and its default is documented in
// docs/configuration.md.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Config is landlord's configuration.
type Config struct {
	// Listen is the API's address.
	Listen string `yaml:"listen"`
	// Insecure allows serving without tokens on a non-loopback address.
	Insecure bool `yaml:"insecure"`
	// InsecureHTTP allows serving plain HTTP, and taking bearer tokens over
	// it, on a non-loopback address.
	InsecureHTTP bool `yaml:"insecure_http"`
	// TrustedProxies are the CIDRs of TLS-terminating proxies: plain HTTP
	// from them with X-Forwarded-Proto: https counts as HTTPS.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// TLS configures HTTPS and client certificates.
	TLS TLS `yaml:"tls"`
	// LogLevel is debug, info, warn or error.
	LogLevel string   `yaml:"log_level"`
	Database Database `yaml:"database"`
	// Compute holds "default" and one block per enabled provider.
	Compute map[string]any `yaml:"compute"`
	// Plugins are provider plugins to start and enable.
	Plugins []Plugin `yaml:"plugins"`
	Tokens  []Token  `yaml:"tokens"`
	// OIDC accepts an identity provider's JWTs as bearer tokens.
	OIDC       OIDC       `yaml:"oidc"`
	Controller Controller `yaml:"controller"`
	API        API        `yaml:"api"`
	// Encryption configures the encryption of secrets at rest.
	Encryption Encryption `yaml:"encryption"`
	// Events tunes the event feed and webhooks.
	Events Events `yaml:"events"`
}

// Database says where tenants are stored.
type Database struct {
	// Driver is sqlite or postgres.
	Driver string `yaml:"driver"`
	// Path is the SQLite file.
	Path string `yaml:"path"`
	// URL is the PostgreSQL connection URL.
	URL string `yaml:"url"`
}

// Token is an API token.
type Token struct {
	Name   string `yaml:"name"`
	Secret string `yaml:"secret"`
	SHA256 string `yaml:"sha256"`
	Role   string `yaml:"role"`
}

// Controller tunes the controller; zero values take its defaults.
type Controller struct {
	Enabled          *bool             `yaml:"enabled"`
	Workers          int               `yaml:"workers"`
	Resync           workload.Duration `yaml:"resync"`
	Sweep            workload.Duration `yaml:"sweep"`
	MaxRetries       int               `yaml:"max_retries"`
	ProgressDeadline workload.Duration `yaml:"progress_deadline"`
	PollInterval     workload.Duration `yaml:"poll_interval"`
	LeaseTTL         workload.Duration `yaml:"lease_ttl"`
	LeaseRenew       workload.Duration `yaml:"lease_renew"`
	ShutdownTimeout  workload.Duration `yaml:"shutdown_timeout"`
}

// API tunes the HTTP API; zero values take its defaults.
type API struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// IdempotencyLease is how long a create's reservation of its
	// Idempotency-Key, left by a request that died, keeps retries waiting.
	IdempotencyLease workload.Duration `yaml:"idempotency_lease"`
	// Hosts are the names, besides localhost and loopback addresses, that
	// requests to a landlord without credentials on loopback may carry in
	// their Host header: the names of this machine a reverse proxy on it
	// passes on. Any other Host is refused (DNS rebinding).
	Hosts []string `yaml:"hosts"`
}

// Defaults are the configuration without a file, environment or flags.
func Defaults() Config {
	return Config{
		Listen:   "127.0.0.1:8080",
		LogLevel: "info",
		Database: Database{Driver: "sqlite", Path: "landlord.db"},
	}
}

// DefaultFile is read when no file is named and it exists.
const DefaultFile = "landlord.yaml"

// Load reads the configuration: defaults, then the file (path, else
// LANDLORD_CONFIG, else ./landlord.yaml when it exists), then the
// environment. Unknown keys are errors that name them.
func Load(path string, getenv func(string) string) (Config, string, error) {
	cfg := Defaults()
	if path == "" {
		path = getenv("LANDLORD_CONFIG")
	}
	if path == "" {
		if _, err := os.Stat(DefaultFile); err == nil {
			path = DefaultFile
		}
	}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, path, fmt.Errorf("config: %w", err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return cfg, path, fmt.Errorf("config %s: %w", path, err)
		}
		// Every unknown key and bad value, with its line, before yaml's
		// decoder, which stops at the first and names Go types.
		if err := checkKeys(path, &doc); err != nil {
			return cfg, path, err
		}
		if len(doc.Content) > 0 {
			if err := doc.Decode(&cfg); err != nil {
				return cfg, path, fmt.Errorf("config %s: %w", path, err)
			}
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, path, err
	}
	return cfg, path, nil
}

// applyEnv reads the LANDLORD_* variables.
func applyEnv(cfg *Config, getenv func(string) string) error {
	if v := getenv("LANDLORD_LISTEN"); v != "" {
		cfg.Listen = v
	}
	if v := getenv("LANDLORD_DATABASE"); v != "" {
		cfg.Database = ParseDatabase(v)
	}
	if v := getenv("LANDLORD_LOG_LEVEL"); v != "" {
		cfg.LogLevel = v
	}
	if v := getenv("LANDLORD_PROVIDER"); v != "" {
		cfg.SetComputeDefault(v)
	}
	if v := getenv("LANDLORD_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: LANDLORD_INSECURE=%q is not true or false", v)
		}
		cfg.Insecure = b
	}
	applyOIDCEnv(cfg, getenv)
	if err := applyTLSEnv(cfg, getenv); err != nil {
		return err
	}
	for _, t := range []struct{ env, name, role string }{
		{"LANDLORD_ADMIN_TOKEN", "admin", "admin"},
		{"LANDLORD_READER_TOKEN", "reader", "reader"},
	} {
		if v := getenv(t.env); v != "" {
			cfg.Tokens = append(cfg.Tokens, Token{Name: t.name, Secret: v, Role: t.role})
		}
	}
	return nil
}

// ParseDatabase reads a --database value: a postgres:// URL, else a SQLite
// file path.
func ParseDatabase(v string) Database {
	if strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		return Database{Driver: "postgres", URL: v}
	}
	return Database{Driver: "sqlite", Path: v}
}

// SetComputeDefault makes name the default provider (compute.default).
func (c *Config) SetComputeDefault(name string) {
	if c.Compute == nil {
		c.Compute = map[string]any{}
	}
	c.Compute["default"] = name
}

// ComputeDefault is the configured default provider, or "".
func (c Config) ComputeDefault() (string, error) {
	v, ok := c.Compute["default"]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errors.New("config: compute.default must be a provider name")
	}
	return s, nil
}

// ComputeBlocks returns each enabled provider's block as JSON, by name.
func (c Config) ComputeBlocks() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	names := make([]string, 0, len(c.Compute))
	for k := range c.Compute {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "default" {
			continue
		}
		block := c.Compute[name]
		if block == nil {
			block = map[string]any{}
		}
		b, err := json.Marshal(block)
		if err != nil {
			return nil, fmt.Errorf("config: compute.%s: %w", name, err)
		}
		if b[0] != '{' {
			return nil, fmt.Errorf("config: compute.%s must be a mapping of settings and defaults", name)
		}
		out[name] = b
	}
	return out, nil
}

// Validate checks what can be checked without opening anything.
func (c Config) Validate() error {
	var errs []error
	switch c.Database.Driver {
	case "sqlite":
		if c.Database.Path == "" {
			errs = append(errs, errors.New("database.path is required for sqlite"))
		}
	case "postgres":
		if c.Database.URL == "" {
			errs = append(errs, errors.New("database.url is required for postgres"))
		}
	default:
		errs = append(errs, fmt.Errorf("database.driver %q is not sqlite or postgres", c.Database.Driver))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log_level %q is not debug, info, warn or error", c.LogLevel))
	}
	for i, t := range c.Tokens {
		if t.Name == "" || strings.ContainsFunc(t.Name, unicode.IsControl) {
			errs = append(errs, fmt.Errorf("tokens[%d]: name %q must be set, without control characters: it is the actor in the history", i, t.Name))
		}
		if t.Role != "admin" && t.Role != "reader" {
			errs = append(errs, fmt.Errorf("tokens[%d] (%s): role %q is not admin or reader", i, t.Name, t.Role))
		}
	}
	if err := c.Controller.checkLease(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Encryption.validate()...)
	errs = append(errs, c.validatePlugins()...)
	errs = append(errs, c.TLS.validate()...)
	errs = append(errs, c.OIDC.validate()...)
	errs = append(errs, c.Events.validate()...)
	if _, err := c.Proxies(); err != nil {
		errs = append(errs, err)
	}
	for i, h := range c.API.Hosts {
		if h == "" || strings.ContainsAny(h, "/:@ \t") {
			errs = append(errs, fmt.Errorf("api.hosts[%d]: %q is not a host name: give the name alone, without a scheme, port or path (e.g. landlord.internal)", i, h))
		}
	}
	if lease := time.Duration(c.API.IdempotencyLease); lease != 0 {
		if err := tenant.CheckIdempotencyLease(lease); err != nil {
			errs = append(errs, fmt.Errorf("api.idempotency_lease: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// checkLease checks lease_ttl and lease_renew, with the controller's
// defaults for those unset.
func (c Controller) checkLease() error {
	o := controller.Options{LeaseTTL: time.Duration(c.LeaseTTL), LeaseRenew: time.Duration(c.LeaseRenew)}.WithDefaults()
	if err := controller.CheckLease(o.LeaseTTL, o.LeaseRenew); err != nil {
		return fmt.Errorf("controller.lease_ttl and lease_renew: %w", err)
	}
	return nil
}
