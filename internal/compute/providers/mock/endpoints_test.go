package mock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Without "listen" an endpoint is a mock:// name that no client can take
// for an address to dial: there is nothing behind it.
func TestEndpointsAreMockNames(t *testing.T) {
	p := mustNew(t, mock.Options{})
	spec := resolve(t, p, "tenant-1", `{"image":"a","ports":[{"name":"http","container_port":8080},{"container_port":53,"protocol":"udp"}],
		"sidecars":[{"name":"metrics","image":"b","ports":[{"container_port":9090,"host_port":9090}]}]}`)
	spec.TenantName = "acme"
	res, err := p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mock://acme/app:8080", "mock://acme/app:53", "mock://acme/metrics:9090"}
	if got := addresses(res.Endpoints); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("endpoints %q, want %q", got, want)
	}
	for _, e := range res.Endpoints {
		if _, _, err := net.SplitHostPort(e.Address); err == nil {
			t.Errorf("endpoint %q reads as host:port", e.Address)
		}
	}
}

// With "listen" each port gets a real listener on 127.0.0.1 that answers
// with a line naming the workload; an update keeps the address of a port
// that stays and closes the listener of one that goes; a crash closes the
// crashed container's until a Provision restarts it; Destroy closes them
// all. A host_port is honoured, and one that is taken fails the Provision
// (retryable) without recording anything.
func TestEndpointsListen(t *testing.T) {
	platform := mock.NewPlatform()
	t.Cleanup(platform.Close)
	p := mustNew(t, mock.Options{Platform: platform})
	ctx := context.Background()
	const twoPorts = `{"image":"a:%d","ports":[{"name":"http","container_port":8080},{"name":"admin","container_port":9000}],"x-mock":{"listen":true}}`
	spec := resolve(t, p, "tenant-1", fmt.Sprintf(twoPorts, 1))
	spec.TenantName, spec.Generation = "acme", 1
	res, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Endpoints) != 2 {
		t.Fatalf("endpoints %+v, want 2", res.Endpoints)
	}
	http0, admin := res.Endpoints[0].Address, res.Endpoints[1].Address
	for _, addr := range []string{http0, admin} {
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("endpoint %q is not on 127.0.0.1", addr)
		}
	}
	mustAnswer(t, http0, "mock workload of tenant acme: container app (image a:1), port 8080/tcp, generation 1")

	// Update: the http port stays (same address, new generation), admin goes.
	next := resolve(t, p, "tenant-1", `{"image":"a:2","ports":[{"name":"http","container_port":8080}],"x-mock":{"listen":true}}`)
	next.TenantName, next.Generation = "acme", 2
	up, err := p.Update(ctx, "tenant-1", next)
	if err != nil {
		t.Fatal(err)
	}
	if got := addresses(up.Endpoints); len(got) != 1 || got[0] != http0 {
		t.Errorf("endpoints after the update %q, want [%s]", got, http0)
	}
	mustAnswer(t, http0, "container app (image a:2), port 8080/tcp, generation 2")
	mustNotAnswer(t, admin)

	// A crash closes the container's listener and drops its endpoint; a
	// Provision restarts it.
	if err := p.Crash("tenant-1", "app", 137); err != nil {
		t.Fatal(err)
	}
	mustNotAnswer(t, http0)
	if st, err := p.GetStatus(ctx, "tenant-1"); err != nil || len(st.Endpoints) != 0 {
		t.Errorf("after a crash the status has endpoints %+v (%v), want none", st.Endpoints, err)
	}
	res, err = p.Provision(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	mustAnswer(t, res.Endpoints[0].Address, "generation 2")

	// Destroy closes every listener.
	if err := p.Destroy(ctx, "tenant-1"); err != nil {
		t.Fatal(err)
	}
	mustNotAnswer(t, res.Endpoints[0].Address)

	// A fixed host_port, and one that is taken.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	fixed := resolve(t, p, "tenant-2", fmt.Sprintf(`{"image":"a","ports":[{"container_port":80,"host_port":%d}],"x-mock":{"listen":true}}`, port))
	res, err = p.Provision(ctx, fixed)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Endpoints[0].Address, fmt.Sprintf("127.0.0.1:%d", port); got != want {
		t.Errorf("endpoint %s, want the host_port's %s", got, want)
	}
	mustAnswer(t, res.Endpoints[0].Address, "port 80/tcp")
	taken := resolve(t, p, "tenant-3", fmt.Sprintf(`{"image":"a","ports":[{"container_port":81,"host_port":%d}],"x-mock":{"listen":true}}`, port))
	_, err = p.Provision(ctx, taken)
	if !errors.Is(err, provider.ErrProvisionFailed) || !provider.IsRetryable(err) || !strings.Contains(err.Error(), "listen for port 81/tcp of container app") {
		t.Errorf("Provision on a taken host_port = %v, want a retryable ErrProvisionFailed saying which port", err)
	}
	if _, err := p.GetStatus(ctx, "tenant-3"); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("a failed Provision recorded a workload: GetStatus = %v", err)
	}
}

// A UDP port under "listen" answers each datagram with the workload's line.
func TestEndpointsListenUDP(t *testing.T) {
	platform := mock.NewPlatform()
	t.Cleanup(platform.Close)
	p := mustNew(t, mock.Options{Platform: platform})
	spec := resolve(t, p, "tenant-1", `{"image":"a","ports":[{"container_port":53,"protocol":"udp"}],"x-mock":{"listen":true}}`)
	res, err := p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp", res.Endpoints[0].Address)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), "port 53/udp") {
		t.Errorf("the UDP endpoint answered %q, %v", buf[:n], err)
	}
}

func addresses(eps []provider.Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.Address)
	}
	return out
}

func mustAnswer(t *testing.T, addr, want string) {
	t.Helper()
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("GET http://%s/: %v", addr, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(b), want) {
		t.Errorf("http://%s/ answered %q (%v), want it to contain %q", addr, b, err, want)
	}
}

func mustNotAnswer(t *testing.T, addr string) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections", addr)
	}
}

// "listen" in the block's defaults makes every tenant's ports listen.
func TestEndpointsListenByDefault(t *testing.T) {
	platform := mock.NewPlatform()
	t.Cleanup(platform.Close)
	p := mustNew(t, mock.Options{Platform: platform, Block: []byte(`{"x-mock": {"listen": true}}`)})
	res, err := p.Provision(context.Background(), resolve(t, p, "tenant-1", `{"image":"a","ports":[{"container_port":8080}]}`))
	if err != nil {
		t.Fatal(err)
	}
	mustAnswer(t, res.Endpoints[0].Address, "port 8080/tcp")
}

// Close closes the listeners of a provider that made its own platform,
// as landlord serve closes its providers when it stops; a platform given
// in Options is left to its giver.
func TestCloseClosesListeners(t *testing.T) {
	own := mustNew(t, mock.Options{})
	shared := mock.NewPlatform()
	t.Cleanup(shared.Close)
	given := mustNew(t, mock.Options{Platform: shared})
	ctx := context.Background()
	var addrs []string
	for _, p := range []*mock.Provider{own, given} {
		spec := resolve(t, p, "tenant-1", `{"image":"a:1","ports":[{"container_port":8080}],"x-mock":{"listen":true}}`)
		spec.TenantName, spec.Generation = "acme", 1
		res, err := p.Provision(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, res.Endpoints[0].Address)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	mustNotAnswer(t, addrs[0])
	mustAnswer(t, addrs[1], "mock workload of tenant acme")
}
