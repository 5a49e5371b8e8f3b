package mockplugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock/mockplugin"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// servePluginEnv makes this test binary the plugin: the tests start it
// again with it set (go-plugin's own tests do the same), so that the
// boundary is a real process and a real handshake without a build.
const servePluginEnv = "LANDLORD_TEST_SERVE_MOCK_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(servePluginEnv) == "1" {
		mockplugin.Serve()
		return
	}
	os.Exit(m.Run())
}

// start starts this binary as the mock plugin, with its control API.
func start(t *testing.T, logs io.Writer) (*plugin.Plugin, *controller) {
	t.Helper()
	return startWith(t, logs, plugin.Options{})
}

// startWith is start with opts over the defaults.
func startWith(t *testing.T, logs io.Writer, opts plugin.Options) (*plugin.Plugin, *controller) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "control")
	opts.Env = append(opts.Env, mockplugin.ControlFileEnv+"="+file)
	p, err := launch(t, logs, opts)
	if err != nil {
		t.Fatalf("start the mock plugin: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	addr, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the mock plugin wrote no control address: %v", err)
	}
	return p, &controller{t: t, base: "http://" + string(addr)}
}

// launch starts this binary as the mock plugin with opts over the
// defaults.
func launch(t testing.TB, logs io.Writer, opts plugin.Options) (*plugin.Plugin, error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if opts.Name == "" {
		opts.Name = "mock"
	}
	if opts.Path == "" {
		opts.Path = self
	}
	opts.Env = append(opts.Env, servePluginEnv+"=1")
	opts.HashKey = []byte("0123456789abcdef0123456789abcdef")
	// go-plugin's own lines about the process are debug; the provider's
	// are info and above.
	opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	p, err := plugin.Start(context.Background(), opts)
	if err == nil {
		t.Cleanup(func() { _ = p.Close() })
	}
	return p, err
}

// controller is the test's side of the mock plugin's control API.
type controller struct {
	t    *testing.T
	base string
}

func (c *controller) do(method, path string, form url.Values) string {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path+"?"+form.Encode(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("control %s: %v", path, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		c.t.Fatalf("control %s: %s %s", path, res.Status, body)
	}
	return string(body)
}

func (c *controller) tamper(what string) func(*testing.T, string) {
	return func(_ *testing.T, id string) { c.do("POST", "/tamper", url.Values{"tenant": {id}, "what": {what}}) }
}

func (c *controller) crash(container string, code int) func(*testing.T, string) {
	return func(_ *testing.T, id string) {
		c.do("POST", "/crash", url.Values{"tenant": {id}, "container": {container}, "code": {strconv.Itoa(code)}})
	}
}

func config(variant int) json.RawMessage {
	c, _ := workload.Merge(json.RawMessage(fmt.Sprintf(`{
		"image": "example.com/app:%d",
		"env": {"VARIANT": "%d"},
		"ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"path": "/healthz", "port": 8080}},
		"resources": {"cpu_millicores": 250, "memory_mib": 128},
		"sidecars": [{"name": "log", "image": "example.com/log:1"}]
	}`, variant+1, variant)), json.RawMessage(`{"x-mock": {"listen": true}}`))
	return c
}

// TestConformanceOverTheBoundary runs the conformance suite, with its
// drift and tamper checks, against the mock provider served as a plugin:
// every call crosses the process boundary, its context and its errors
// with it. The suite's restart check is left to providers whose workloads
// outlive their process (the mock's live in the plugin's memory).
func TestConformanceOverTheBoundary(t *testing.T) {
	logs := &providertest.LogBuffer{}
	p, c := start(t, logs)
	providertest.Run(t, providertest.Harness{
		Provider:      p.Provider(),
		Config:        config,
		DialEndpoints: true,
		InvalidConfigs: []providertest.InvalidConfig{
			{Name: "port out of range", Config: json.RawMessage(`{"image":"a","ports":[{"container_port":0}]}`), Pointer: "/ports/0/container_port"},
			{Name: "unknown x-mock field", Config: json.RawMessage(`{"image":"a","x-mock":{"fial":"transient"}}`), Pointer: "/x-mock/fial"},
			{Name: "bad failure kind", Config: json.RawMessage(`{"image":"a","x-mock":{"fail":"sometimes"}}`), Pointer: "/x-mock/fail"},
		},
		Disrupt: c.crash("app", 137),
		Tampers: []providertest.Tamper{
			{Name: "image", Path: "containers/app/image", Do: c.tamper("image")},
			{Name: "env", Path: "containers/app/env/VARIANT", Do: c.tamper("env")},
			{Name: "command", Path: "containers/log/command", Do: c.tamper("command")},
			{Name: "secret", Path: "containers/app/secrets", Do: c.tamper("secret")},
			{Name: "crash", Path: "containers/log/state", Do: c.crash("log", 1)},
			{Name: "remove", Path: "workload", Do: func(_ *testing.T, id string) { c.do("POST", "/remove", url.Values{"tenant": {id}}) }},
		},
		CountResources: func(t *testing.T, id string) int {
			n, err := strconv.Atoi(strings.TrimSpace(c.do("GET", "/containers", url.Values{"tenant": {id}})))
			if err != nil {
				t.Fatal(err)
			}
			return n
		},
		Logs:         logs.Bytes,
		ReadyTimeout: 5 * time.Second,
	})
}

// resolve resolves config for a new tenant of the plugin, as landlord does.
func resolve(t testing.TB, p provider.Provider, id, config string) *provider.TenantComputeSpec {
	t.Helper()
	m := computetest.Manager(t, p, compute.ManagerOptions{HashKey: []byte("0123456789abcdef0123456789abcdef")})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: id, TenantName: id, Generation: 1, ComputeConfig: json.RawMessage(config)})
	if err != nil {
		t.Fatalf("resolve %s: %v", config, err)
	}
	return res.Spec
}

// TestCrashedPluginIsRestarted: a plugin killed with SIGKILL is started
// again; meanwhile calls fail as ErrProviderUnavailable, retryable, and say
// so in landlord's log with the plugin's name.
func TestCrashedPluginIsRestarted(t *testing.T) {
	logs := &providertest.LogBuffer{}
	p, _ := start(t, logs)
	prov := p.Provider()
	spec := resolve(t, prov, "t-crash", `{"image": "example.com/app:1"}`)
	if _, err := prov.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	pid := p.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var down error
	poll.Until(t, "a call fails as provider_unavailable while the plugin is down", 10*time.Second, func() (bool, string) {
		_, err := prov.GetStatus(context.Background(), "t-crash")
		down = err
		return errors.Is(err, provider.ErrProviderUnavailable), fmt.Sprint(err)
	})
	if !provider.IsRetryable(down) {
		t.Errorf("a call while the plugin is down must be retryable: %v", down)
	}
	poll.Until(t, "the plugin runs again", 10*time.Second, func() (bool, string) {
		_, err := prov.GetStatus(context.Background(), "t-crash")
		return p.PID() != 0 && p.PID() != pid && !errors.Is(err, provider.ErrProviderUnavailable), fmt.Sprintf("pid %d: %v", p.PID(), err)
	})
	// The mock's workloads lived in the dead process: the new one has none,
	// and says so as the contract has it (a real platform keeps them).
	if _, err := prov.GetStatus(context.Background(), "t-crash"); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("GetStatus after the restart = %v, want ErrTenantNotFound from the new process", err)
	}
	if !strings.Contains(logs.String(), `"msg":"the provider plugin exited; its tenants' operations fail as provider_unavailable until it is back","plugin":"mock"`) {
		t.Errorf("landlord's log does not say the plugin exited:\n%s", logs)
	}
}

// TestHungPluginIsBoundedByTheDeadline: a plugin that answers nothing
// (stopped with SIGSTOP) holds a call no longer than its deadline and the
// grace after it; the call fails with the context's error, retryable.
func TestHungPluginIsBoundedByTheDeadline(t *testing.T) {
	p, _ := startWith(t, io.Discard, plugin.Options{CancelGrace: 200 * time.Millisecond})
	pid := p.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := p.Provider().GetStatus(ctx, "t-hung")
	if !errors.Is(err, context.DeadlineExceeded) || !provider.IsRetryable(err) {
		t.Errorf("GetStatus of a hung plugin = %v; want a retryable error wrapping context.DeadlineExceeded", err)
	}
}

// TestCancelCrossesTheBoundary: cancelling a Provision in progress cancels
// it in the plugin, which removes what it created before it answers.
func TestCancelCrossesTheBoundary(t *testing.T) {
	p, _ := start(t, io.Discard)
	prov := p.Provider()
	spec := resolve(t, prov, "t-cancel", `{"image": "example.com/app:1", "x-mock": {"latency": "1h"}}`)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := prov.Provision(ctx, spec)
	if !errors.Is(err, context.Canceled) || !provider.IsRetryable(err) {
		t.Fatalf("a cancelled Provision = %v; want a retryable error wrapping context.Canceled", err)
	}
	if _, err := prov.GetStatus(context.Background(), "t-cancel"); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("after a cancelled Provision, GetStatus = %v; want ErrTenantNotFound", err)
	}
}

// TestErrorsCrossTheBoundary: a provider's error reaches landlord with its
// sentinel, its verdict and its violations.
func TestErrorsCrossTheBoundary(t *testing.T) {
	p, _ := start(t, io.Discard)
	prov := p.Provider()
	for _, tc := range []struct {
		fail     string
		terminal bool
	}{{"transient", false}, {"terminal", true}} {
		spec := resolve(t, prov, "t-"+tc.fail, `{"image": "example.com/app:1", "x-mock": {"fail": "`+tc.fail+`"}}`)
		_, err := prov.Provision(context.Background(), spec)
		if !errors.Is(err, provider.ErrProvisionFailed) || provider.IsTerminal(err) != tc.terminal {
			t.Errorf("Provision failing %s = %v; want ErrProvisionFailed, terminal %v", tc.fail, err, tc.terminal)
		}
	}
	spec := resolve(t, prov, "t-invalid", `{"image": "example.com/app:1"}`)
	spec.Containers[0].Image = ""
	err := prov.Validate(context.Background(), spec)
	if v := violation.Of(err); !errors.Is(err, provider.ErrInvalidSpec) || !provider.IsTerminal(err) || len(v) != 1 || v[0].Pointer != "/containers/0/image" {
		t.Errorf("Validate of a container without image = %v; want a terminal violation at /containers/0/image", err)
	}
	if _, err := prov.GetStatus(context.Background(), "nobody"); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("GetStatus of no tenant = %v, want ErrTenantNotFound", err)
	}
}

// TestRefusedPlugins: a binary that is not what its checksum says, or a
// plugin that is another provider than configured, is not started.
func TestRefusedPlugins(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts plugin.Options
		want string
	}{
		{"checksum", plugin.Options{SHA256: strings.Repeat("ab", 32)}, "checksums did not match"},
		{"bad checksum", plugin.Options{SHA256: "xyz"}, "is not 64 hex digits"},
		{"name", plugin.Options{Name: "docker"}, `says it is provider "mock"`},
		{"no binary", plugin.Options{Path: "/nonexistent/landlord-plugin"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := launch(t, io.Discard, tc.opts)
			if !errors.Is(err, plugin.ErrPlugin) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start = %v; want ErrPlugin saying %q", err, tc.want)
			}
		})
	}
}
