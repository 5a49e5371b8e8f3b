package main

import (
	"context"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/server"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

//go:generate go test -run ^TestProviderDocIsCurrent$ -update .

// providerTable lists the compute providers of this build, and is the only
// place one is registered: start-up, the --provider help of serve, the
// errors that name what exists, GET /v1/compute/providers and the generated
// section of docs/compute-providers.md all read it.
var providerTable = server.Providers{
	{Name: docker.Name, Summary: "Docker Engine: each container of a tenant is a Docker container, on a network of the tenant's own or the operator's", New: func(ctx context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return docker.New(ctx, docker.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: ecs.Name, Summary: "AWS ECS: each tenant is one ECS service (Fargate, EC2 or external), with a task definition built from its workload or given", New: func(ctx context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return ecs.New(ctx, ecs.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: kubernetes.Name, Summary: "Kubernetes: each tenant is a Deployment with its Service, Secret and Ingress, in a namespace of its own (quota, network policy) or a shared one", New: func(ctx context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return kubernetes.New(ctx, kubernetes.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: nomad.Name, Summary: "HashiCorp Nomad: each tenant is one service job (a task per container), secrets through Nomad Variables, health as service checks", New: func(ctx context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return nomad.New(ctx, nomad.Options{Block: env.Block, Logger: env.Logger, HashKey: env.HashKey})
	}},
	{Name: mock.Name, Summary: "memory: runs nothing, with latency and failure injection, for tests and demos", New: func(_ context.Context, env server.ProviderEnv) (provider.Provider, error) {
		return mock.New(mock.Options{Block: env.Block, Logger: env.Logger})
	}},
}

// lookupProvider returns the entry of providerTable called name, or an
// error that says what the build has.
func lookupProvider(name string) (server.ProviderFactory, error) { return providerTable.Lookup(name) }

// providerNames lists the names in providerTable, sorted.
func providerNames() []string { return providerTable.Names() }

// oneOf words a list of names as a choice: "a", "a or b", "a, b or c".
func oneOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
