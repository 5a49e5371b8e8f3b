package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
)

//go:generate go test -run ^TestProviderDocIsCurrent$ -update .

// providerTable lists the compute providers of this build, and is the only
// place one is registered: start-up, the --provider help of serve, the
// errors that name what exists, GET /v1/compute/providers and the generated
// section of docs/compute-providers.md all read it.
var providerTable = []providerEntry{
	{Name: docker.Name, Summary: "Docker Engine: each container of a tenant is a Docker container, on a network of the tenant's own or the operator's", New: func(ctx context.Context, env providerEnv) (compute.Provider, error) {
		return docker.New(ctx, docker.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: ecs.Name, Summary: "AWS ECS: each tenant is one ECS service (Fargate, EC2 or external), with a task definition built from its workload or given", New: func(ctx context.Context, env providerEnv) (compute.Provider, error) {
		return ecs.New(ctx, ecs.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: kubernetes.Name, Summary: "Kubernetes: each tenant is a Deployment with its Service, Secret and Ingress, in a namespace of its own (quota, network policy) or a shared one", New: func(ctx context.Context, env providerEnv) (compute.Provider, error) {
		return kubernetes.New(ctx, kubernetes.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: nomad.Name, Summary: "HashiCorp Nomad: each tenant is one service job (a task per container), secrets through Nomad Variables, health as service checks", New: func(ctx context.Context, env providerEnv) (compute.Provider, error) {
		return nomad.New(ctx, nomad.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: mock.Name, Summary: "memory: runs nothing, with latency and failure injection, for tests and demos", New: func(_ context.Context, env providerEnv) (compute.Provider, error) {
		return mock.New(mock.Options{Block: env.Block, Logger: env.Logger})
	}},
}

// providersNotBuilt are providers that are planned but not in this build. A
// configuration block for one says so, instead of calling it unknown. A
// provider that joins providerTable is found there first.
var providersNotBuilt []string

// providerEntry is one provider of this build.
type providerEntry struct {
	// Name is the provider's key under compute: and the Name of the
	// compute.Provider that New returns.
	Name string
	// Summary says in one line what the provider runs tenants on.
	Summary string
	// New makes the provider from its configuration block. Its provider is
	// used only when the error is nil.
	New func(ctx context.Context, env providerEnv) (compute.Provider, error)
}

// providerEnv is what serve hands a provider's constructor.
type providerEnv struct {
	// Block is the provider's configuration block, the keys under
	// compute.<name>; nil means its defaults.
	Block json.RawMessage
	// Logger is landlord's logger.
	Logger *slog.Logger
	// HashKey is the install's secret key, kept in the database, for
	// providers that key hashes of tenant configuration with it.
	HashKey []byte
}

// newProvider makes the provider called name from env. A name not in
// providerTable is an error that says what the build has.
func newProvider(ctx context.Context, name string, env providerEnv) (compute.Provider, error) {
	e, err := lookupProvider(name)
	if err != nil {
		return nil, fmt.Errorf("config: compute.%s: %w", name, err)
	}
	p, err := e.New(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if p.Name() != e.Name {
		return nil, fmt.Errorf("provider table: the %s entry made a provider named %q", e.Name, p.Name())
	}
	return p, nil
}

// lookupProvider returns the entry of providerTable called name.
func lookupProvider(name string) (providerEntry, error) {
	for _, e := range providerTable {
		if e.Name == name {
			return e, nil
		}
	}
	available := strings.Join(providerNames(), ", ")
	if slices.Contains(providersNotBuilt, name) {
		return providerEntry{}, fmt.Errorf("provider %s is not available in this build (available: %s)", name, available)
	}
	return providerEntry{}, fmt.Errorf("no such provider in this build (available: %s)", available)
}

// providerNames lists the names in providerTable, sorted.
func providerNames() []string {
	names := make([]string, len(providerTable))
	for i, e := range providerTable {
		names[i] = e.Name
	}
	slices.Sort(names)
	return names
}

// oneOf words a list of names as a choice: "a", "a or b", "a, b or c".
func oneOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
