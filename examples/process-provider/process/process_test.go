package process_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/examples/process-provider/process"
	"github.com/jaxxstorm/landlord/sdk/plugin"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// The test binary is also the tenants' workload and the plugin: started
// again with one of these set, it serves HTTP on $PORT (or sleeps) or
// serves the provider as a plugin.
const (
	workloadEnv = "PROCESS_TEST_WORKLOAD"
	pluginEnv   = "PROCESS_TEST_PLUGIN"
)

var hashKey = []byte("0123456789abcdef0123456789abcdef")

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(workloadEnv) == "http":
		_ = http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "tenant %s, variant %s\n", os.Getenv("LANDLORD_TENANT_ID"), os.Getenv("VARIANT"))
		}))
		os.Exit(1)
	case os.Getenv(workloadEnv) == "sleep":
		select {}
	case os.Getenv(workloadEnv) == "fork":
		// A worker beside the main process, as servers that fork have.
		worker := exec.Command(os.Args[0])
		worker.Env = append(os.Environ(), workloadEnv+"=sleep")
		if err := worker.Start(); err != nil {
			os.Exit(2)
		}
		select {}
	case os.Getenv(pluginEnv) == "1":
		plugin.Serve(func(_ context.Context, c plugin.Config) (provider.Provider, error) {
			return process.New(process.Options{Block: c.Settings, HashKey: c.HashKey, Logger: c.Logger})
		})
		return
	}
	os.Exit(m.Run())
}

// images are two copies of this binary, the images of config variants 0
// and 1.
func images(t *testing.T) [2]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The tenants' processes outlive the provider by design: those a
	// failed test leaves are killed.
	t.Cleanup(func() { killUnder(dir) })
	var out [2]string
	for i := range out {
		out[i] = filepath.Join(dir, fmt.Sprintf("app-%d", i+1))
		if err := os.WriteFile(out[i], b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func configs(images [2]string) func(int) json.RawMessage {
	return func(v int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{
			"image": %q,
			"env": {"VARIANT": "%d", %q: "http"},
			"ports": [{"name": "http", "container_port": 8080}],
			"sidecars": [{"name": "log", "image": %q, "env": {%q: "sleep"}}]
		}`, images[v%2], v, workloadEnv, images[0], workloadEnv))
	}
}

// block is the provider's settings for a test: a state directory of its
// own and a port range of its own.
func block(t *testing.T) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"state_dir": %q, "port_range": "31000-31999", "stop_timeout": "2s"}`, t.TempDir()))
}

func newProvider(t *testing.T, settings json.RawMessage, logs io.Writer) *process.Provider {
	t.Helper()
	p, err := process.New(process.Options{Block: settings, HashKey: hashKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestConformance runs the conformance suite, with the drift and tamper
// checks, against the provider in this process.
func TestConformance(t *testing.T) {
	logs := &providertest.LogBuffer{}
	settings := block(t)
	p := newProvider(t, settings, logs)
	img := images(t)
	providertest.Run(t, harness(p, img, logs, func(t *testing.T) provider.Provider { return newProvider(t, settings, logs) }))
}

// TestConformanceAsAPlugin runs the same suite against the provider served
// as a plugin: this binary, started by the SDK's host as landlord starts
// it.
func TestConformanceAsAPlugin(t *testing.T) {
	logs := &providertest.LogBuffer{}
	settings := block(t)
	start := func(t *testing.T) provider.Provider {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		pl, err := plugin.Start(context.Background(), plugin.Options{Name: process.Name, Path: self, Env: []string{pluginEnv + "=1"},
			Settings: settings, HashKey: hashKey, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pl.Close() })
		return pl.Provider()
	}
	providertest.Run(t, harness(start(t), images(t), logs, start))
}

func harness(p provider.Provider, img [2]string, logs *providertest.LogBuffer, restart func(*testing.T) provider.Provider) providertest.Harness {
	return providertest.Harness{
		Provider:      p,
		Config:        configs(img),
		DialEndpoints: true,
		InvalidConfigs: []providertest.InvalidConfig{
			{Name: "relative image", Config: json.RawMessage(`{"image": "bin/app"}`), Pointer: "/containers/0/image"},
			{Name: "no such executable", Config: json.RawMessage(`{"image": "/nonexistent/app"}`), Pointer: "/containers/0/image"},
		},
		Disrupt: func(t *testing.T, id string) { kill(t, id, "app") },
		Tampers: []providertest.Tamper{
			{Name: "kill", Path: "containers/app/state", Do: func(t *testing.T, id string) { kill(t, id, "app") }},
			{Name: "env", Path: "containers/app/env/VARIANT", Do: replace(func(exe string, argv, env []string) (string, []string, []string) {
				return exe, argv, append(env, "VARIANT=hacked")
			})},
			{Name: "command", Path: "containers/app/command", Do: replace(func(exe string, argv, env []string) (string, []string, []string) {
				return exe, append(argv, "--hacked"), env
			})},
			{Name: "image", Path: "containers/app/image", Do: replace(func(exe string, argv, env []string) (string, []string, []string) {
				return img[1], argv, env
			})},
			{Name: "secret", Path: "containers/app/env/LANDLORD_CONFORMANCE_SECRET", Do: replace(func(exe string, argv, env []string) (string, []string, []string) {
				return exe, argv, append(env, "LANDLORD_CONFORMANCE_SECRET=hacked")
			})},
		},
		CountResources: func(t *testing.T, id string) int { return len(process.Processes(id)) },
		Restart:        restart,
		Logs:           logs.Bytes,
		ReadyTimeout:   10 * time.Second,
	}
}

// killUnder kills every process whose executable is in dir.
func killUnder(dir string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && strings.HasPrefix(exe, dir+"/") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// container is the pid of the process of the tenant's container.
func container(t *testing.T, tenantID, name string) int {
	t.Helper()
	for _, pid := range process.Processes(tenantID) {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if slices.Contains(strings.Split(string(env), "\x00"), "LANDLORD_CONTAINER="+name) {
			return pid
		}
	}
	t.Fatalf("no process of container %s of tenant %s", name, tenantID)
	return 0
}

// kill kills the container's process, as an operator's kill -9 would.
func kill(t *testing.T, tenantID, name string) {
	t.Helper()
	pid := container(t, tenantID, name)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for range 500 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d does not exit", pid)
}

// replace kills the app container's process and starts it again by hand,
// changed by edit, as an operator restarting it with the machine's own
// tools would.
func replace(edit func(exe string, argv, env []string) (string, []string, []string)) func(*testing.T, string) {
	return func(t *testing.T, tenantID string) {
		pid := container(t, tenantID, "app")
		dir := "/proc/" + strconv.Itoa(pid)
		exe, err := os.Readlink(dir + "/exe")
		if err != nil {
			t.Fatal(err)
		}
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		environ, _ := os.ReadFile(dir + "/environ")
		cwd, _ := os.Readlink(dir + "/cwd")
		argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")[1:]
		env := strings.Split(strings.TrimSuffix(string(environ), "\x00"), "\x00")
		exe, argv, env = edit(exe, argv, env)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pid)
		cmd := exec.Command(exe, argv...)
		cmd.Env, cmd.Dir = env, cwd
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait() }()
	}
}

// TestForkedAndLinked: a process that forks a worker, run from an image
// named by a symbolic link, is one container: Provision again keeps both
// processes (what runs is what the link names), Inspect finds no drift,
// and Destroy stops the worker with it.
func TestForkedAndLinked(t *testing.T) {
	p := newProvider(t, block(t), io.Discard)
	img := images(t)
	link := filepath.Join(t.TempDir(), "app")
	if err := os.Symlink(img[0], link); err != nil {
		t.Fatal(err)
	}
	spec := resolveSpec(t, p, "t-fork", fmt.Sprintf(`{"image": %q, "env": {%q: "fork"}}`, link, workloadEnv))
	ctx := context.Background()
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var before []int
	for range 200 {
		if before = process.Processes("t-fork"); len(before) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(before) != 2 {
		t.Fatalf("processes of the tenant = %v, want the main one and its worker", before)
	}
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if after := process.Processes("t-fork"); !slices.Equal(after, before) {
		t.Errorf("a second Provision changed the processes from %v to %v", before, after)
	}
	in, err := p.Inspect(ctx, spec)
	if err != nil || len(in.Drift) > 0 {
		t.Errorf("Inspect = %v, %v; want no drift", in, err)
	}
	if err := p.Destroy(ctx, "t-fork"); err != nil {
		t.Fatal(err)
	}
	if left := process.Processes("t-fork"); len(left) > 0 {
		t.Errorf("Destroy left %v", left)
	}
}

// resolveSpec resolves config as landlord would, for a test that calls
// the provider itself.
func resolveSpec(t *testing.T, p provider.Provider, id, config string) *provider.TenantComputeSpec {
	t.Helper()
	spec := &provider.TenantComputeSpec{TenantID: id, TenantName: id, ProviderType: process.Name, ProviderConfig: json.RawMessage(config)}
	spec.MarkResolved()
	if err := provider.DecodeSpec(p, spec.ProviderConfig, true, spec); err != nil {
		t.Fatal(err)
	}
	return spec
}
