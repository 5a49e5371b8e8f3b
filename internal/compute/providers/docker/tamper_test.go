package docker

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// tampers are the conformance suite's changes to a running tenant behind
// the provider's back, each made through the Engine API as the docker CLI
// makes it (the command each mirrors is in its comment). The conformance
// config's containers are "app" (main) and "side"; otherImage is an image
// the config does not use; tenantNet is the id of the network the tenant's
// containers join (its own, or the one every tenant shares).
func tampers(cli *client.Client, otherImage string, tenantNet func(t *testing.T, tenantID string) string) []providertest.Tamper {
	return []providertest.Tamper{
		// docker stop <app>
		{Name: "stop", Path: "containers/app/state", Do: func(t *testing.T, tenantID string) {
			c := tenantContainer(t, cli, tenantID, "app")
			secs := 1
			if _, err := cli.ContainerStop(context.Background(), c.ID, client.ContainerStopOptions{Timeout: &secs}); err != nil {
				t.Fatalf("docker stop: %v", err)
			}
		}},
		// docker pause <app>
		{Name: "pause", Path: "containers/app/state", Do: func(t *testing.T, tenantID string) {
			c := tenantContainer(t, cli, tenantID, "app")
			if _, err := cli.ContainerPause(context.Background(), c.ID, client.ContainerPauseOptions{}); err != nil {
				t.Fatalf("docker pause: %v", err)
			}
		}},
		// docker rm -f <side>
		{Name: "remove-sidecar", Path: "containers/side", Do: func(t *testing.T, tenantID string) {
			c := tenantContainer(t, cli, tenantID, "side")
			if _, err := cli.ContainerRemove(context.Background(), c.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
				t.Fatalf("docker rm -f: %v", err)
			}
		}},
		// docker network disconnect <tenant network> <app>
		{Name: "disconnect-network", Path: "containers/app/networks", Do: func(t *testing.T, tenantID string) {
			c := tenantContainer(t, cli, tenantID, "app")
			if _, err := cli.NetworkDisconnect(context.Background(), tenantNet(t, tenantID), client.NetworkDisconnectOptions{Container: c.ID}); err != nil {
				t.Fatalf("docker network disconnect: %v", err)
			}
		}},
		// docker update --cpus 0.5 <app>
		{Name: "update-cpus", Path: "containers/app/resources/cpu_millicores", Do: func(t *testing.T, tenantID string) {
			c := tenantContainer(t, cli, tenantID, "app")
			if _, err := cli.ContainerUpdate(context.Background(), c.ID, client.ContainerUpdateOptions{Resources: &container.Resources{NanoCPUs: 500_000_000}}); err != nil {
				t.Fatalf("docker update --cpus: %v", err)
			}
		}},
		// docker rm -f <app>; docker run with everything copied, labels
		// included, but GREETING
		{Name: "recreate-with-other-env", Path: "containers/app/env/GREETING", Do: func(t *testing.T, tenantID string) {
			recreate(t, cli, tenantID, "app", func(cfg *container.Config) {
				cfg.Env = slices.DeleteFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, "GREETING=") })
				cfg.Env = append(cfg.Env, "GREETING=set-by-hand")
			})
		}},
		// the same, with another image
		{Name: "image", Path: "containers/app/image", Do: func(t *testing.T, tenantID string) {
			recreate(t, cli, tenantID, "app", func(cfg *container.Config) { cfg.Image = otherImage })
		}},
		// docker network disconnect every container; docker network rm
		{Name: "delete-network", Path: "network", Do: func(t *testing.T, tenantID string) {
			ctx := context.Background()
			netID := tenantNet(t, tenantID)
			res, err := cli.NetworkInspect(ctx, netID, client.NetworkInspectOptions{})
			if err != nil {
				t.Fatalf("docker network inspect: %v", err)
			}
			for id := range res.Network.Containers {
				if _, err := cli.NetworkDisconnect(ctx, netID, client.NetworkDisconnectOptions{Container: id}); err != nil {
					t.Fatalf("docker network disconnect: %v", err)
				}
			}
			if _, err := cli.NetworkRemove(ctx, netID, client.NetworkRemoveOptions{}); err != nil {
				t.Fatalf("docker network rm: %v", err)
			}
		}},
	}
}

// tenantContainer is the tenant's container of the spec's container name.
func tenantContainer(t *testing.T, cli *client.Client, tenantID, name string) container.Summary {
	t.Helper()
	f := tenantFilter(tenantID).Add("label", testPrefix+".container="+name)
	cs, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: f})
	if err != nil || len(cs.Items) != 1 {
		t.Fatalf("docker ps for container %s of tenant %s: %v (%d found)", name, tenantID, err, len(cs.Items))
	}
	return cs.Items[0]
}

// tenantNetwork is the id of the tenant's own network.
func tenantNetwork(t *testing.T, cli *client.Client, tenantID string) string {
	t.Helper()
	ns := tenantNetworks(t, cli, tenantID)
	if len(ns) != 1 {
		t.Fatalf("tenant %s has %d networks, want 1", tenantID, len(ns))
	}
	return ns[0]
}

// recreate removes the tenant's container name and runs a copy of it under
// the same name, labels included, with edit applied to its configuration,
// as an operator copying it with docker inspect and docker run would.
func recreate(t *testing.T, cli *client.Client, tenantID, name string, edit func(*container.Config)) {
	t.Helper()
	ctx := context.Background()
	old := tenantContainer(t, cli, tenantID, name)
	res, err := cli.ContainerInspect(ctx, old.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("docker inspect: %v", err)
	}
	c := res.Container
	cfg := *c.Config
	cfg.Hostname = "" // the old container's id
	edit(&cfg)
	endpoints := map[string]*network.EndpointSettings{}
	for netName, ep := range c.NetworkSettings.Networks {
		endpoints[netName] = &network.EndpointSettings{NetworkID: ep.NetworkID, Aliases: slices.DeleteFunc(slices.Clone(ep.Aliases), func(a string) bool { return strings.HasPrefix(c.ID, a) })}
	}
	if _, err := cli.ContainerRemove(ctx, old.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatalf("docker rm -f: %v", err)
	}
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: strings.TrimPrefix(c.Name, "/"), Config: &cfg, HostConfig: c.HostConfig,
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: endpoints}})
	if err != nil {
		t.Fatalf("docker create: %v", err)
	}
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatalf("docker start: %v", err)
	}
}
