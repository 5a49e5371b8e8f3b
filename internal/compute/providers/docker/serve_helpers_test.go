package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// serveConfig is the configuration of `landlord serve` in these tests: the
// docker provider with local images only and the tests' label prefix, a
// fast resync for drift repair and a short lease so a restart leads soon.
var serveConfig = `compute:
  docker:
    pull_policy: never
    label_prefix: ` + testPrefix + `
    stop_timeout: 2s
    address_pool: ` + dockertest.AddressPool + `
controller:
  resync: 1s
  lease_ttl: 3s
`

// startServe starts `landlord serve` with the docker provider for a test:
// the Engine, the echo images, the running server and a context bounding
// the test.
func startServe(t *testing.T) (*client.Client, [2]string, *servetest.Process, context.Context) {
	t.Helper()
	cli := dockertest.Engine(t)
	images := dockertest.EchoImage(t)
	cleanupByLabel(t, cli)
	l := servetest.New(t, servetest.Options{Config: serveConfig})
	l.Start()
	// A bound, not a measure: generous for a two-core CI machine that runs
	// other providers' test servers beside these.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return cli, images, l, ctx
}

// echoConfig is a tenant's compute_config running the echo image.
func echoConfig(image, greeting string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{
		"image": %q,
		"env": {"GREETING": %q},
		"ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"path": "/healthz", "port": 8080}, "interval": "1s"}
	}`, image, greeting))
}

// getEnv GETs /env of the echo server at addr ("host:port").
func getEnv(ctx context.Context, addr string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/env", nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /env: %s: %s", res.Status, body)
	}
	env := map[string]string{}
	return env, json.Unmarshal(body, &env)
}

// waitEnv polls /env at the endpoint until GREETING is want.
func waitEnv(t *testing.T, addr, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	poll.Until(t, fmt.Sprintf("GET http://%s/env shows GREETING=%s", addr, want), 20*time.Second, func() (bool, string) {
		env, err := getEnv(ctx, addr)
		return err == nil && env["GREETING"] == want, fmt.Sprintf("env %v, error %v", env, err)
	})
}

// waitServe waits until cond holds, for as long as ctx (the test's bound)
// allows.
func waitServe(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline, ok := ctx.Deadline()
	if !ok {
		t.Fatalf("waiting for %s: the test's context has no deadline", what)
	}
	poll.Until(t, what, time.Until(deadline), cond)
}

// httpEndpoint is the published address of the tenant's port 8080.
func httpEndpoint(t *testing.T, tn *llclient.Tenant) string {
	t.Helper()
	for _, e := range tn.Endpoints {
		if e.ContainerPort == 8080 && e.Address != "" {
			return e.Address
		}
	}
	t.Fatalf("tenant %s has no endpoint for port 8080: %+v", tn.Name, tn.Endpoints)
	return ""
}

// tenantContainers lists every container, running or not, of a tenant.
func tenantContainers(t *testing.T, cli *client.Client, tenantID string) []string {
	t.Helper()
	cs, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: tenantFilter(tenantID)})
	if err != nil {
		t.Fatalf("list containers of %s: %v", tenantID, err)
	}
	ids := make([]string, len(cs.Items))
	for i, c := range cs.Items {
		ids[i] = c.ID
	}
	return ids
}

// tenantNetworks lists the networks of a tenant.
func tenantNetworks(t *testing.T, cli *client.Client, tenantID string) []string {
	t.Helper()
	ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: tenantFilter(tenantID)})
	if err != nil {
		t.Fatalf("list networks of %s: %v", tenantID, err)
	}
	ids := make([]string, len(ns.Items))
	for i, n := range ns.Items {
		ids[i] = n.ID
	}
	return ids
}
