// Package examples_test keeps examples/ true: every provider's
// landlord.yaml loads and starts its provider, every tenant template is a
// valid config of the providers it is for, and quickstart.sh walks the
// README's quickstart on the Docker Engine (quickstart_unix_test.go).
package examples_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dockerclient "github.com/moby/moby/client"
	"go.yaml.in/yaml/v3"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The quickstart's containers and networks are named after this run
// (dockertest.Prefix("lltest")): what a crashed run left is swept first,
// and this run's removed last. The examples that need PostgreSQL get a
// database of pgtest's, whose cluster pgtest.Main removes.
func TestMain(m *testing.M) {
	if cli, err := dockerclient.New(dockerclient.FromEnv); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := cli.Ping(ctx, dockerclient.PingOptions{NegotiateAPIVersion: true}); err == nil {
			if _, err := dockertest.Sweep(ctx, cli, "lltest"); err != nil {
				fmt.Fprintf(os.Stderr, "dockertest: sweep what ended runs left: %v\n", err)
			}
		}
		cancel()
		_ = cli.Close()
	}
	code := pgtest.Main(m)
	dockertest.End("lltest")
	os.Exit(code)
}

// hashKey stands for the install key landlord serve keeps in its database.
var hashKey = []byte("examples-test-install-key-32byte")

// exampleProvider is how the test makes a provider from an example's block,
// as landlord serve's provider table does, without reaching its platform:
// no constructor connects (Docker, ECS and Nomad make clients that connect
// on first use; Kubernetes reads the kubeconfig the test writes).
type exampleProvider struct {
	new func(block json.RawMessage) (provider.Provider, error)
	// portable says that the templates of examples/tenants are valid
	// configs of the provider, besides those of examples/<name>/tenants.
	// ECS's are not: it takes secrets as ARNs only, and health checks as
	// commands only.
	portable bool
}

var exampleProviders = map[string]exampleProvider{
	docker.Name: {portable: true, new: func(b json.RawMessage) (provider.Provider, error) {
		return docker.New(context.Background(), docker.Options{Block: b, HashKey: hashKey})
	}},
	ecs.Name: {new: func(b json.RawMessage) (provider.Provider, error) {
		return ecs.New(context.Background(), ecs.Options{Block: b, HashKey: hashKey})
	}},
	kubernetes.Name: {portable: true, new: func(b json.RawMessage) (provider.Provider, error) {
		return kubernetes.New(context.Background(), kubernetes.Options{Block: b, HashKey: hashKey})
	}},
	nomad.Name: {portable: true, new: func(b json.RawMessage) (provider.Provider, error) {
		return nomad.New(context.Background(), nomad.Options{Block: b, HashKey: hashKey, Getenv: func(string) string { return "" }})
	}},
	mock.Name: {portable: true, new: func(b json.RawMessage) (provider.Provider, error) {
		return mock.New(mock.Options{Block: b})
	}},
}

// exampleEnv is the environment the examples are loaded with: what a
// deployment of them would set (the Kubernetes example takes its admin
// token and its encryption key from the environment), and nothing of the
// environment the test runs in.
var exampleEnv = map[string]string{
	"LANDLORD_ADMIN_TOKEN":    "example-admin-token",
	"LANDLORD_SECRETS_KEY_K1": base64.StdEncoding.EncodeToString(make([]byte, 32)),
}

func getenv(k string) string { return exampleEnv[k] }

// Every provider of this build has an example, and every example directory
// is a provider's (or the portable tenant templates).
func TestEveryProviderHasAnExample(t *testing.T) {
	built := providersInThisBuild(t)
	if tested := slices.Sorted(maps.Keys(exampleProviders)); !slices.Equal(built, tested) {
		t.Errorf("this build's providers are %v, and this test makes %v: add the provider to exampleProviders", built, tested)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		// tenants holds tenant templates; process-provider is a provider
		// plugin, a module of its own (docs/plugins.md), not of this build.
		if e.IsDir() && e.Name() != "tenants" && e.Name() != "process-provider" {
			dirs = append(dirs, e.Name())
		}
	}
	if !slices.Equal(dirs, built) {
		t.Errorf("examples/ has the directories %v besides tenants, want one per provider: %v", dirs, built)
	}
}

// providersInThisBuild reads the names of cmd/landlord's provider table
// from the section of docs/compute-providers.md generated from it (which
// cmd/landlord's tests keep current).
func providersInThisBuild(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "compute-providers.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "<!-- providers:begin -->")
	section, _, ok := strings.Cut(section, "<!-- providers:end -->")
	if !ok {
		t.Fatal("docs/compute-providers.md has no providers:begin … providers:end section")
	}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9]+)` \\|").FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	if len(names) == 0 {
		t.Fatal("found no provider in docs/compute-providers.md's providers section")
	}
	return names
}

// Each examples/<provider>/landlord.yaml loads, validates and enables its
// provider as landlord serve would, with only keys that exist; the tenant
// templates meant for the provider resolve against its schema, merged with
// the example's tenant defaults, as the API resolves a create.
func TestProviderExamples(t *testing.T) {
	// A kubeconfig of one cluster nothing answers on: the provider reads it,
	// and the examples' context (its current one) must be in it.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	mustWrite(t, kubeconfig, `apiVersion: v1
kind: Config
clusters: [{name: example, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: example, user: {token: example}}]
contexts: [{name: example, context: {cluster: example, user: example}}]
current-context: example
`)
	t.Setenv("KUBECONFIG", kubeconfig)
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a Pod, even when the test runs in one

	portable := templates(t, "tenants")
	for _, name := range slices.Sorted(maps.Keys(exampleProviders)) {
		ep := exampleProviders[name]
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(name, "landlord.yaml")
			cfg, _, err := config.Load(path, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			checkServeSettings(t, cfg)
			blocks, err := cfg.ComputeBlocks()
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(blocks)); !slices.Equal(got, []string{name}) {
				t.Fatalf("%s enables %v, want %s alone", path, got, name)
			}
			def, err := cfg.ComputeDefault()
			if err != nil || def != name {
				t.Fatalf("%s: compute.default is %q (%v), want %s", path, def, err, name)
			}
			p, err := ep.new(blocks[name])
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			registry := compute.NewRegistry()
			if err := registry.Register(p); err != nil { // checks the tenant defaults against the schema
				t.Fatalf("%s: %v", path, err)
			}
			m, err := compute.NewManager(registry, compute.ManagerOptions{DefaultProvider: def, HashKey: hashKey})
			if err != nil {
				t.Fatal(err)
			}

			ts := templates(t, filepath.Join(name, "tenants"))
			if ep.portable {
				ts = append(ts, portable...)
			}
			if len(ts) == 0 {
				t.Fatalf("no tenant template is meant for %s", name)
			}
			for _, tpl := range ts {
				t.Run(filepath.ToSlash(tpl.path), func(t *testing.T) {
					res, err := m.Resolve(context.Background(), compute.ResolveRequest{
						TenantID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", TenantName: "acme", Generation: 1, ComputeConfig: tpl.config,
					})
					if err != nil {
						t.Fatalf("%s on %s: %v", tpl.path, name, err)
					}
					if res.Spec.ProviderType != name {
						t.Errorf("%s resolved to provider %s, want %s", tpl.path, res.Spec.ProviderType, name)
					}
				})
			}
		})
	}
}

// checkServeSettings checks what landlord serve checks of the file before
// it opens anything beyond what config.Validate does: tokens and the
// address they allow, plain HTTP off loopback, and the encryption keys.
func checkServeSettings(t *testing.T, cfg config.Config) {
	t.Helper()
	tokens := make([]api.Token, len(cfg.Tokens))
	for i, tk := range cfg.Tokens {
		tokens[i] = api.Token{Name: tk.Name, Secret: tk.Secret, SHA256: tk.SHA256, Role: api.Role(tk.Role)}
		if tk.SHA256 != "" {
			if b, err := hex.DecodeString(tk.SHA256); err != nil || len(b) != 32 {
				t.Errorf("token %s: sha256 %q is not 64 hex digits", tk.Name, tk.SHA256)
			}
		}
	}
	if err := api.CheckListen(cfg.Listen, len(tokens) > 0 || cfg.OIDC.Enabled(), cfg.Insecure); err != nil {
		t.Error(err)
	}
	if err := cfg.CheckPlainHTTP(); err != nil {
		t.Error(err)
	}
	if _, err := cfg.Encryption.Keyring(getenv, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Error(err)
	}
}

// template is a tenant config template: the file, and its config as JSON.
type template struct {
	path   string
	config json.RawMessage
}

// templates reads the YAML tenant templates in dir (none when it does not
// exist), as landlord create --config @file reads them.
func templates(t *testing.T, dir string) []template {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []template
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, template{path: path, config: j})
	}
	return out
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(fmt.Errorf("write %s: %w", path, err))
	}
}
