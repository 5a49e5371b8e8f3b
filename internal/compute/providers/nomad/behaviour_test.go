package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// resolve resolves config for a new tenant of p.
func resolve(t *testing.T, p provider.Provider, id, name string, config json.RawMessage) *provider.TenantComputeSpec {
	t.Helper()
	m := computetest.Manager(t, p, compute.ManagerOptions{HashKey: hashKey})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: id, TenantName: name, Generation: 1, ComputeConfig: config})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	return res.Spec
}

// waitState polls the tenant's status until its state is want.
func waitState(t *testing.T, p provider.Provider, tenantID string, want provider.ComputeState) *provider.ComputeStatus {
	t.Helper()
	var st *provider.ComputeStatus
	poll.Until(t, fmt.Sprintf("tenant %s %s", tenantID, want), 60*time.Second, func() (bool, string) {
		var err error
		st, err = p.GetStatus(context.Background(), tenantID)
		return err == nil && st.State == want, fmt.Sprintf("%+v %v", st, err)
	})
	return st
}

// A namespace or region the cluster does not have, or a Nomad that does
// not answer, fails the health check with what to fix; landlord serve
// says so at start-up.
func TestHealthCheckNamesTheProblem(t *testing.T) {
	a, _ := start(t)
	for _, tt := range []struct{ block, want string }{
		{block(a, `"namespace": "nope"`), `namespace "nope" does not exist`},
		{block(a, `"region": "mars"`), `region "mars" is not one of the cluster's`},
		{`{"address": "http://127.0.0.1:1"}`, "does not answer"},
	} {
		err := newProvider(t, tt.block, nil).CheckHealth(context.Background())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckHealth with %s = %v, want %q", tt.block, err, tt.want)
		}
	}
	if err := newProvider(t, block(a, ""), nil).CheckHealth(context.Background()); err != nil {
		t.Errorf("CheckHealth of the agent: %v", err)
	}
	if testing.Short() {
		return
	}
	l := servetest.New(t, servetest.Options{Config: fmt.Sprintf("compute:\n  nomad:\n    address: %s\n    namespace: nope\n", a.Address)})
	l.Start()
	l.Stop()
	if log := l.Log(); !strings.Contains(log, "health check fails at start-up") || !strings.Contains(log, `namespace \"nope\" does not exist`) {
		t.Errorf("landlord serve did not say at start-up that the namespace does not exist:\n%s", log)
	}
}

// The settings a block cannot have are refused by New, naming the key.
func TestNewRefusesBadSettings(t *testing.T) {
	for _, tt := range []struct{ block, want string }{
		{`{"driver": "raw_exec"}`, "/driver"},
		{`{"job_prefix": "Landlord_"}`, "/job_prefix"},
		{`{"client_cert": "/etc/hosts"}`, "/client_key"},
		{`{"ca_cert": "/nonexistent/ca.pem"}`, "/ca_cert"},
		{`{"adress": "http://127.0.0.1:4646"}`, "/adress"},
	} {
		_, err := nomad.New(context.Background(), nomad.Options{Block: json.RawMessage(tt.block), HashKey: hashKey, Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s) = %v, want an error naming %s", tt.block, err, tt.want)
		}
	}
}

// The event stream tells of a tenant's job being registered, deploying,
// and stopped behind landlord's back.
func TestWatchChangesHearsTheEventStream(t *testing.T) {
	a, images := start(t)
	proxy := newAPIProxy(t, a.Address)
	p := newProvider(t, block(&nomadtest.Agent{Address: proxy.URL}, ""), nil)
	// streamOpen waits until the agent has a watcher's event stream
	// request, through proxy: it tells the watcher of every event after.
	streamOpen := func(proxy *apiProxy) {
		t.Helper()
		poll.Until(t, "the event stream is open", 20*time.Second, func() (bool, string) {
			return proxy.streams.Load() > 0, "no event stream request written to the agent"
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 1024)
	done := make(chan error, 1)
	go func() { done <- p.WatchChanges(ctx, func(id string) { heard <- id }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchChanges = %v", err)
		}
	}()
	expect := func(id, when string) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case got := <-heard:
				if got == id {
					return
				}
			case <-timeout:
				t.Fatalf("no notification for tenant %s %s", id, when)
			}
		}
	}
	const id = "00000000-0000-4000-8000-00000000a001"
	spec := resolve(t, p, id, "watched", echoConfig(images[0], "w"))
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	streamOpen(proxy)
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	expect(id, "after Provision")
	waitState(t, p, id, provider.StateRunning)
	for len(heard) > 0 {
		<-heard
	}
	if _, _, err := a.Client.Jobs().Deregister("landlord-watched", false, nil); err != nil {
		t.Fatal(err)
	}
	expect(id, "after nomad job stop")
	// A restarted landlord knows no job yet: it reads the job's meta.
	freshProxy := newAPIProxy(t, a.Address)
	fresh := newProvider(t, block(&nomadtest.Agent{Address: freshProxy.URL}, ""), nil)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { _ = fresh.WatchChanges(ctx2, func(id string) { heard <- id }) }()
	streamOpen(freshProxy)
	for len(heard) > 0 {
		<-heard
	}
	if _, err := fresh.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	expect(id, "after a restarted provider repaired the job")
}

// With the operator's consent, driver raw_exec runs the tenant's command
// on the node: here the echo server's binary, listening on a host port.
func TestRawExec(t *testing.T) {
	a, _ := start(t)
	bin, err := dockertest.EchoBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "echo")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	p := newProvider(t, block(a, `"allow_raw_exec": true`), nil)
	const id = "00000000-0000-4000-8000-00000000a002"
	config := fmt.Sprintf(`{"image": "echo", "driver": "raw_exec", "command": [%q], "env": {"PORT": "%d", "GREETING": "raw"},
		"ports": [{"container_port": %d}], "health_check": {"tcp": {"port": %d}, "interval": "1s"}, %s}`, path, port, port, port, fastUpdate)
	spec := resolve(t, p, id, "raw", json.RawMessage(config))
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, p, id, provider.StateRunning)
	if len(st.Endpoints) != 1 || st.Endpoints[0].Address != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("endpoints %+v, want 127.0.0.1:%d", st.Endpoints, port)
	}
	resp, err := http.Get("http://" + st.Endpoints[0].Address + "/env")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env["GREETING"] != "raw" {
		t.Errorf("the raw_exec task's environment: %v %v", env, err)
	}
}

// A config Nomad itself refuses (here a constraint operator on an
// attribute Nomad cannot parse) fails terminally as an invalid spec, with
// Nomad's message, and leaves nothing behind.
func TestNomadRefusalIsTerminal(t *testing.T) {
	a, images := start(t)
	p := newProvider(t, block(a, ""), nil)
	const id = "00000000-0000-4000-8000-00000000a003"
	var m map[string]any
	_ = json.Unmarshal(echoConfig(images[0], "x"), &m)
	m["constraints"] = []any{map[string]any{"attribute": "${attr.kernel.name}", "operator": "regexp", "value": "(unclosed"}}
	config, _ := json.Marshal(m)
	spec := resolve(t, p, id, "refused", config)
	_, err := p.Provision(context.Background(), spec)
	if err == nil || provider.IsRetryable(err) || !strings.Contains(err.Error(), "regexp") {
		t.Fatalf("Provision of a job Nomad refuses = %v; want a terminal error with Nomad's reason", err)
	}
	if n := countResources(t, a, id, "landlord-refused"); n != 0 {
		t.Errorf("%d resources left after a refused Provision", n)
	}
}

// A tenant recorded in a namespace the block no longer names is still
// found, read and destroyed there; Provision refuses to move it.
func TestTenantStaysInItsRecordedNamespace(t *testing.T) {
	a, images := start(t)
	if _, err := a.Client.Namespaces().Register(&api.Namespace{Name: "before"}, nil); err != nil {
		t.Fatal(err)
	}
	before := newProvider(t, block(a, `"namespace": "before"`), nil)
	const id = "00000000-0000-4000-8000-00000000a004"
	spec := resolve(t, before, id, "moved", echoConfig(images[0], "ns"))
	res, err := before.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = before.Destroy(context.Background(), id) })
	waitState(t, before, id, provider.StateRunning)

	now := newProvider(t, block(a, ""), nil)
	ref := provider.TenantRef{ID: id, Name: "moved", Provider: "nomad", ResourceIDs: res.ResourceIDs}
	st, err := now.GetStatusOf(context.Background(), ref)
	if err != nil || st.State != provider.StateRunning {
		t.Fatalf("GetStatusOf a tenant recorded in namespace before = %+v, %v", st, err)
	}
	moved := resolve(t, now, id, "moved", echoConfig(images[0], "ns"))
	moved.ResourceIDs = res.ResourceIDs
	if _, err := now.Provision(context.Background(), moved); err == nil || provider.IsRetryable(err) || !strings.Contains(err.Error(), "cannot move") {
		t.Errorf("Provision into another namespace = %v; want a terminal refusal", err)
	}
	if err := now.DestroyOf(context.Background(), ref); err != nil {
		t.Fatalf("DestroyOf: %v", err)
	}
	q := &api.QueryOptions{Namespace: "before"}
	if _, _, err := a.Client.Jobs().Info("landlord-moved", q); err == nil {
		t.Error("the job is left in namespace before after DestroyOf")
	}
	if n := len(a.Containers(t, "landlord-moved")); n != 0 {
		t.Errorf("%d containers left", n)
	}
}

// A tenant scaled to count 0 runs all it should: ready, with nothing
// running.
func TestCountZeroIsRunning(t *testing.T) {
	a, images := start(t)
	p := newProvider(t, block(a, ""), nil)
	const id = "00000000-0000-4000-8000-00000000a005"
	var m map[string]any
	_ = json.Unmarshal(echoConfig(images[0], "zero"), &m)
	m["count"] = 0
	config, _ := json.Marshal(m)
	if _, err := p.Provision(context.Background(), resolve(t, p, id, "zero", config)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	st := waitState(t, p, id, provider.StateRunning)
	if len(st.Endpoints) != 0 || !strings.Contains(st.Message, "count is 0") {
		t.Errorf("status of a tenant at count 0: %+v", st)
	}
}
