package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providertest"
)

// serveConfig is the configuration of `landlord serve` in these tests: the
// docker provider with local images only and the tests' label prefix, a
// fast resync for drift repair and a short lease so a restart leads soon.
const serveConfig = `compute:
  docker:
    pull_policy: never
    label_prefix: ` + testPrefix + `
    stop_timeout: 2s
controller:
  resync: 1s
  lease_ttl: 3s
`

// startServe starts `landlord serve` with the docker provider for a test:
// the Engine, the echo images, the running server and a context bounding
// the test.
func startServe(t *testing.T) (*client.Client, [2]string, *landlord, context.Context) {
	t.Helper()
	cli := engine(t)
	images := echoImage(t)
	cleanupByLabel(t, cli)
	l := newLandlord(t)
	l.start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return cli, images, l, ctx
}

// landlord is a `landlord serve` process run by a test.
type landlord struct {
	t      *testing.T
	bin    string
	dir    string
	addr   string
	log    *providertest.LogBuffer
	cmd    *exec.Cmd
	client *llclient.Client
}

// buildLandlord builds the landlord binary into dir.
func buildLandlord(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "landlord")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/jaxxstorm/landlord/cmd/landlord")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build landlord: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// newLandlord builds the binary and prepares a config, a database path and a
// free address; start runs it.
func newLandlord(t *testing.T) *landlord {
	t.Helper()
	dir := t.TempDir()
	l := &landlord{t: t, bin: buildLandlord(t, dir), dir: dir, addr: freeAddr(t), log: &providertest.LogBuffer{}}
	if err := os.WriteFile(filepath.Join(dir, "landlord.yaml"), []byte(serveConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := llclient.New(llclient.Config{Address: "http://" + l.addr})
	if err != nil {
		t.Fatal(err)
	}
	l.client = c
	t.Cleanup(func() {
		l.stop()
		if t.Failed() {
			t.Logf("landlord serve log:\n%s", l.log.String())
		}
	})
	return l
}

// start runs `landlord serve` and waits until it answers /healthz.
func (l *landlord) start() {
	l.t.Helper()
	cmd := exec.Command(l.bin, "serve", "--config", filepath.Join(l.dir, "landlord.yaml"),
		"--listen", l.addr, "--database", filepath.Join(l.dir, "landlord.db"))
	cmd.Dir = l.dir
	cmd.Stdout, cmd.Stderr = l.log, l.log
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("start landlord serve: %v", err)
	}
	l.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get("http://" + l.addr + "/healthz")
		if err == nil {
			res.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("landlord serve never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the process with SIGKILL.
func (l *landlord) kill() {
	if l.cmd == nil {
		return
	}
	_ = l.cmd.Process.Signal(syscall.SIGKILL)
	_ = l.cmd.Wait()
	l.cmd = nil
}

// stop stops the process gracefully (SIGTERM), then kills it.
func (l *landlord) stop() {
	if l.cmd == nil {
		return
	}
	_ = l.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = l.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = l.cmd.Process.Signal(syscall.SIGKILL)
		<-done
	}
	l.cmd = nil
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
	var last string
	for {
		env, err := getEnv(ctx, addr)
		if err == nil && env["GREETING"] == want {
			return
		}
		last = fmt.Sprintf("env %v, error %v", env, err)
		select {
		case <-ctx.Done():
			t.Fatalf("GET http://%s/env never showed GREETING=%s; last: %s", addr, want, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
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
