package docker

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// waitHealth polls GetStatus until the tenant's health is want.
func waitHealth(t *testing.T, p *Provider, id string, want provider.HealthStatus) *provider.ComputeStatus {
	t.Helper()
	var st *provider.ComputeStatus
	poll.Until(t, fmt.Sprintf("health of %s becomes %s", id, want), 20*time.Second, func() (bool, string) {
		var err error
		st, err = p.GetStatus(context.Background(), id)
		return err == nil && st.Health == want, fmt.Sprintf("status %+v, error %v", st, err)
	})
	return st
}

// HTTP and TCP probes run from landlord's host against the published port:
// a server that starts failing its health check reads as unhealthy, and a
// probe of a port that is not published as unknown.
func TestHostSideProbes(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	ctx := context.Background()
	probes := map[string]*workload.HealthCheckConfig{
		"http":        {HTTP: &workload.HTTPProbe{Path: "/healthz", Port: 8080}},
		"tcp":         {TCP: &workload.TCPProbe{Port: 8080}},
		"unpublished": {HTTP: &workload.HTTPProbe{Path: "/healthz", Port: 9999}},
	}
	want := map[string]provider.HealthStatus{"http": provider.HealthHealthy, "tcp": provider.HealthHealthy, "unpublished": provider.HealthUnknown}
	ids := map[string]string{}
	n := 0
	for name, hc := range probes {
		n++
		id := portID(100 + n)
		ids[name] = id
		spec := portSpec(id, image, name, 8080, 0)
		spec.Containers[0].HealthCheck = hc
		if _, err := p.Provision(ctx, spec); err != nil {
			t.Fatalf("Provision %s: %v", name, err)
		}
		t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	}
	for name, id := range ids {
		waitHealth(t, p, id, want[name])
	}

	// Tell the HTTP-probed server to fail its health check.
	st := waitHealth(t, p, ids["http"], provider.HealthHealthy)
	if len(st.Endpoints) != 1 {
		t.Fatalf("endpoints %+v, want one", st.Endpoints)
	}
	res, err := http.Get("http://" + st.Endpoints[0].Address + "/fail-health")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	st = waitHealth(t, p, ids["http"], provider.HealthUnhealthy)
	if st.State != provider.StateRunning || st.Containers[0].Health != provider.HealthUnhealthy {
		t.Errorf("status %+v, want a running workload whose container is unhealthy", st)
	}
}
