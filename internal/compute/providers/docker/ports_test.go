package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// portSpec is a one-container echo tenant whose server listens on
// containerPort (PORT) published on hostPort (0: chosen by Docker), with
// more fixed host ports published for extra container ports.
func portSpec(id, image, greeting string, containerPort, hostPort int, extra ...int) *provider.TenantComputeSpec {
	c := workload.ContainerSpec{Name: "app", Image: image,
		Env:   map[string]string{"GREETING": greeting, "PORT": strconv.Itoa(containerPort)},
		Ports: []workload.PortMapping{{ContainerPort: containerPort, HostPort: hostPort, Protocol: workload.ProtocolTCP}}}
	for i, hp := range extra {
		c.Ports = append(c.Ports, workload.PortMapping{ContainerPort: 7000 + i, HostPort: hp, Protocol: workload.ProtocolTCP})
	}
	return &provider.TenantComputeSpec{TenantID: id, TenantName: "ports", ProviderType: Name, Generation: 1, Workload: workload.Workload{Containers: []workload.ContainerSpec{c}}}
}

func portID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-0000000b0a70", 0x7a000000+n) }

// takePort listens on a free loopback port until the test ends, as another
// process holding a port would, and returns the port.
func takePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// freePort is a loopback port nobody listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(servetest.FreeAddr(t))
	n, _ := strconv.Atoi(port)
	return n
}

// waitGreeting polls /env on 127.0.0.1:port until GREETING is want.
func waitGreeting(t *testing.T, port int, want string) {
	t.Helper()
	waitEnv(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), want)
}

// containerState is the Engine's state of a container ("running", …).
func containerState(t *testing.T, cli *client.Client, id string) (state, name string) {
	t.Helper()
	res, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatalf("inspect container %s: %v", id, err)
	}
	return string(res.Container.State.Status), strings.TrimPrefix(res.Container.Name, "/")
}

// A host port held by another process makes Provision fail at the start
// step, naming it, and leaves nothing behind.
func TestHostPortTakenByAnotherProcess(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	taken := takePort(t)
	id := portID(1)
	_, err := p.Provision(context.Background(), portSpec(id, image, "taken", 8080, taken))
	if err == nil {
		_ = p.Destroy(context.Background(), id)
		t.Fatalf("Provision publishing the taken port %d succeeded", taken)
	}
	t.Logf("%v", err)
	if !errors.Is(err, provider.ErrProvisionFailed) || !strings.Contains(err.Error(), "start container app") {
		t.Errorf("Provision = %v, want ErrProvisionFailed naming the step (start container app)", err)
	}
	if left := tenantContainers(t, cli, id); len(left) != 0 {
		t.Errorf("the failed Provision left %d containers", len(left))
	}
	if left := tenantNetworks(t, cli, id); len(left) != 0 {
		t.Errorf("the failed Provision left %d networks", len(left))
	}
}

// An Update whose container keeps a fixed host port the old container holds
// stops the old container before starting the new one, and ends with only
// the new one, serving on that port.
func TestUpdateKeepsHostPortStopThenStart(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	ctx := context.Background()
	id := portID(2)
	hostPort := freePort(t)
	if _, err := p.Provision(ctx, portSpec(id, image, "old", 8080, hostPort)); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	waitGreeting(t, hostPort, "old")
	old := tenantContainers(t, cli, id)

	// The container port changes, the host port stays.
	res, err := p.Update(ctx, id, portSpec(id, image, "new", 9090, hostPort))
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if len(res.Changes) != 1 {
		t.Errorf("Update changes = %+v, want one", res.Changes)
	}
	waitGreeting(t, hostPort, "new")
	now := tenantContainers(t, cli, id)
	if len(now) != 1 || now[0] == old[0] {
		t.Errorf("containers after Update = %v (before %v), want one new container", now, old)
	}
	st, err := p.GetStatus(ctx, id)
	if err != nil || len(st.Endpoints) != 1 || st.Endpoints[0].ContainerPort != 9090 || !strings.HasSuffix(st.Endpoints[0].Address, ":"+strconv.Itoa(hostPort)) {
		t.Errorf("GetStatus = %+v, %v; want one endpoint, container port 9090 on host port %d", st, err, hostPort)
	}
}

// An Update that fails after the old container was stopped and renamed
// aside restores it: same container, same name, running and serving.
func TestFailedUpdateRollsBack(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p := mustProvider(t, &providertest.LogBuffer{})
	ctx := context.Background()
	id := portID(3)
	hostPort := freePort(t)
	if _, err := p.Provision(ctx, portSpec(id, image, "old", 8080, hostPort)); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	waitGreeting(t, hostPort, "old")
	before := tenantContainers(t, cli, id)
	_, oldName := containerState(t, cli, before[0])

	// The new container keeps the host port (so the old one is stopped
	// first) and adds one another process holds: it cannot start.
	_, err := p.Update(ctx, id, portSpec(id, image, "new", 8080, hostPort, takePort(t)))
	if err == nil {
		t.Fatal("Update publishing a taken port succeeded")
	}
	t.Logf("%v", err)
	if !errors.Is(err, provider.ErrUpdateFailed) || !strings.Contains(err.Error(), "start container app") || strings.Contains(err.Error(), "rollback") {
		t.Errorf("Update = %v, want ErrUpdateFailed naming the step, with a complete rollback", err)
	}
	after := tenantContainers(t, cli, id)
	if len(after) != 1 || after[0] != before[0] {
		t.Fatalf("containers after the failed Update = %v, want only the old %v", after, before)
	}
	state, name := containerState(t, cli, after[0])
	if state != "running" || name != oldName {
		t.Errorf("old container after the rollback: %s, named %s; want running, named %s", state, name, oldName)
	}
	waitGreeting(t, hostPort, "old")
	st, err := p.GetStatus(ctx, id)
	if err != nil || st.State != provider.StateRunning {
		t.Errorf("GetStatus after the rollback = %+v, %v; want running", st, err)
	}
	// The same spec again is a no-op: the rollback left no trace.
	if res, err := p.Update(ctx, id, portSpec(id, image, "old", 8080, hostPort)); err != nil || len(res.Changes) != 0 {
		t.Errorf("Update to the old spec = %+v, %v; want no changes", res, err)
	}
}
