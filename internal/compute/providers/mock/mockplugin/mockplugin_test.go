package mockplugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock/mockplugin"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "control")
	p, err := plugin.Start(context.Background(), plugin.Options{
		Name: "mock", Path: self,
		Env:     []string{servePluginEnv + "=1", mockplugin.ControlFileEnv + "=" + file},
		HashKey: []byte("0123456789abcdef0123456789abcdef"),
		Logger:  slog.New(slog.NewJSONHandler(logs, nil)), // go-plugin's own lines about the process are debug
	})
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

var _ provider.Provider = (*plugin.Plugin)(nil)
