package mock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func mustNew(t *testing.T, opts mock.Options) *mock.Provider {
	t.Helper()
	p, err := mock.New(opts)
	if err != nil {
		t.Fatalf("mock.New: %v", err)
	}
	return p
}

func config(variant int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{
		"image": "example.com/app:%d",
		"env": {"VARIANT": "%d"},
		"ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"path": "/healthz", "port": 8080}},
		"resources": {"cpu_millicores": 250, "memory_mib": 128},
		"sidecars": [{"name": "log", "image": "example.com/log:1"}]
	}`, variant+1, variant))
}

func TestConformance(t *testing.T) {
	t.Run("mock endpoints", func(t *testing.T) { conformance(t, config) })
	// With real listeners, the suite dials every endpoint.
	t.Run("listening", func(t *testing.T) {
		conformance(t, func(v int) json.RawMessage {
			c, err := workload.Merge(config(v), json.RawMessage(`{"x-mock": {"listen": true}}`))
			if err != nil {
				t.Fatal(err)
			}
			return c
		})
	})
}

func conformance(t *testing.T, config func(int) json.RawMessage) {
	logs := &providertest.LogBuffer{}
	platform := mock.NewPlatform()
	t.Cleanup(platform.Close)
	p := mustNew(t, mock.Options{Platform: platform, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	providertest.Run(t, providertest.Harness{
		Provider:      p,
		Config:        config,
		DialEndpoints: true,
		InvalidConfigs: []providertest.InvalidConfig{
			{Name: "port out of range", Config: json.RawMessage(`{"image":"a","ports":[{"container_port":0}]}`), Pointer: "/ports/0/container_port"},
			{Name: "unknown x-mock field", Config: json.RawMessage(`{"image":"a","x-mock":{"fial":"transient"}}`), Pointer: "/x-mock/fial"},
			{Name: "bad failure kind", Config: json.RawMessage(`{"image":"a","x-mock":{"fail":"sometimes"}}`), Pointer: "/x-mock/fail"},
		},
		Disrupt: func(t *testing.T, tenantID string) {
			if err := p.Crash(tenantID, "app", 137); err != nil {
				t.Fatal(err)
			}
		},
		Tampers: []providertest.Tamper{
			{Name: "image", Path: "containers/app/image", Do: tamper(p, func(w *workload.Workload) { w.Containers[0].Image = "example.com/app:hacked" })},
			{Name: "env", Path: "containers/app/env/VARIANT", Do: tamper(p, func(w *workload.Workload) { w.Containers[0].Env["VARIANT"] = "hacked" })},
			{Name: "command", Path: "containers/log/command", Do: tamper(p, func(w *workload.Workload) { w.Containers[1].Command = []string{"sh"} })},
			{Name: "secret", Path: "containers/app/secrets", Do: tamper(p, func(w *workload.Workload) { w.Secrets = nil })},
			{Name: "crash", Path: "containers/log/state", Do: func(t *testing.T, id string) {
				if err := p.Crash(id, "log", 1); err != nil {
					t.Fatal(err)
				}
			}},
			{Name: "remove", Path: "workload", Do: func(_ *testing.T, id string) { p.Remove(id) }},
		},
		CountResources: func(t *testing.T, tenantID string) int { return p.Containers(tenantID) },
		Restart: func(t *testing.T) provider.Provider {
			return mustNew(t, mock.Options{Platform: platform, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
		},
		Logs:         logs.Bytes,
		ReadyTimeout: 5 * time.Second,
	})
}

// tamper is a tamper hook that changes the tenant's running workload.
func tamper(p *mock.Provider, change func(w *workload.Workload)) func(t *testing.T, tenantID string) {
	return func(t *testing.T, tenantID string) {
		if err := p.Tamper(tenantID, change); err != nil {
			t.Fatal(err)
		}
	}
}

// resolve builds a spec for the mock through a Manager, as the controller does.
func resolve(t *testing.T, p *mock.Provider, tenantID, config string) *provider.TenantComputeSpec {
	t.Helper()
	m := computetest.Manager(t, p, compute.ManagerOptions{})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: tenantID, ComputeConfig: json.RawMessage(config)})
	if err != nil {
		t.Fatalf("resolve %s: %v", config, err)
	}
	return res.Spec
}

func TestInjectedFailures(t *testing.T) {
	tests := []struct {
		name      string
		config    string
		op        mock.Operation
		failures  int // consecutive failures before success; -1 = never succeeds
		retryable bool
	}{
		{"transient twice", `{"image":"a","x-mock":{"fail":"transient","fail_times":2}}`, mock.OpProvision, 2, true},
		{"terminal always", `{"image":"a","x-mock":{"fail":"terminal"}}`, mock.OpProvision, -1, false},
		{"update only", `{"image":"a","x-mock":{"fail":"transient","fail_times":1,"operations":["update"]}}`, mock.OpUpdate, 1, true},
		{"destroy", `{"image":"a","x-mock":{"fail":"transient","fail_times":3,"operations":["destroy"]}}`, mock.OpDestroy, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, mock.Options{})
			spec := resolve(t, p, "tenant-1", tt.config)
			ctx := context.Background()
			if tt.op != mock.OpProvision {
				// Provision succeeds: the failure is for another operation.
				if _, err := p.Provision(ctx, spec); err != nil {
					t.Fatalf("Provision: %v", err)
				}
			}
			do := func() error {
				switch tt.op {
				case mock.OpProvision:
					_, err := p.Provision(ctx, spec)
					return err
				case mock.OpUpdate:
					_, err := p.Update(ctx, spec.TenantID, spec)
					return err
				default:
					return p.Destroy(ctx, spec.TenantID)
				}
			}
			attempts := tt.failures + 1
			if tt.failures < 0 {
				attempts = 4
			}
			for i := 1; i <= attempts; i++ {
				err := do()
				wantFail := tt.failures < 0 || i <= tt.failures
				if wantFail != (err != nil) {
					t.Fatalf("call %d: err = %v, want failure %v", i, err, wantFail)
				}
				if err != nil && provider.IsRetryable(err) != tt.retryable {
					t.Fatalf("call %d: retryable = %v, want %v (%v)", i, provider.IsRetryable(err), tt.retryable, err)
				}
				if err != nil && tt.op == mock.OpProvision && !errors.Is(err, provider.ErrProvisionFailed) {
					t.Errorf("call %d: %v does not wrap ErrProvisionFailed", i, err)
				}
			}
			if got := p.Calls(spec.TenantID, tt.op); got != attempts {
				t.Errorf("Calls(%s) = %d, want %d", tt.op, got, attempts)
			}
		})
	}
}

func TestFailureRate(t *testing.T) {
	draws := []float64{0.1, 0.9, 0.4, 0.6}
	var mu sync.Mutex
	next := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		v := draws[0]
		draws = draws[1:]
		return v
	}
	p := mustNew(t, mock.Options{Block: json.RawMessage(`{"failure_rate": 0.5}`), Rand: next})
	spec := resolve(t, p, "tenant-1", `{"image":"a"}`)
	var got []bool
	for range 4 {
		_, err := p.Provision(context.Background(), spec)
		if err != nil && !provider.IsRetryable(err) {
			t.Fatalf("failure_rate error must be retryable: %v", err)
		}
		got = append(got, err != nil)
	}
	if want := []bool{true, false, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
}

func TestLatencyRespectsContext(t *testing.T) {
	p := mustNew(t, mock.Options{Block: json.RawMessage(`{"latency": "1h"}`)})
	spec := resolve(t, p, "tenant-1", `{"image":"a"}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := p.Provision(ctx, spec)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !provider.IsRetryable(err) {
		t.Fatalf("Provision = %v, want a retryable error wrapping context.Canceled", err)
	}
	if p.Workloads() != 0 {
		t.Errorf("a cancelled Provision left %d workloads", p.Workloads())
	}
}

func TestBlock(t *testing.T) {
	tests := []struct {
		name     string
		block    string
		defaults string
		err      string
	}{
		{"empty", ``, ``, ""},
		{"settings only", `{"latency":"5ms","failure_rate":0.25}`, ``, ""},
		{"defaults", `{"image":"nginx:latest","env":{"A":"1"}}`, `{"env":{"A":"1"},"image":"nginx:latest"}`, ""},
		{"unknown key", `{"imgae":"nginx"}`, ``, "/imgae: unknown key"},
		{"bad default", `{"ports":[{"container_port":"x"}]}`, ``, "/ports/0/container_port: must be an integer, not a string"},
		{"bad setting type", `{"failure_rate":"often"}`, ``, "/failure_rate: must be a number, not a JSON string"},
		{"bad latency", `{"latency":"soon"}`, ``, `/latency: "soon" is not a duration`},
		{"rate out of range", `{"failure_rate":2}`, ``, "/failure_rate: 2 is not a fraction between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A provider is enabled by making it and registering it, which
			// compiles its schema and checks its defaults against it.
			p, err := mock.New(mock.Options{Block: json.RawMessage(tt.block)})
			if err == nil {
				err = compute.NewRegistry().Register(p)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("New and Register = %v, want an error containing %q", err, tt.err)
				}
				if !strings.HasPrefix(err.Error(), "compute.mock: ") {
					t.Errorf("error %q does not say which block is wrong", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(p.ConfigDefaults()); got != tt.defaults {
				t.Errorf("ConfigDefaults() = %s, want %s", got, tt.defaults)
			}
		})
	}
}

func TestRemoveOutOfBand(t *testing.T) {
	p := mustNew(t, mock.Options{})
	spec := resolve(t, p, "tenant-1", `{"image":"a"}`)
	ctx := context.Background()
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	p.Remove(spec.TenantID)
	if _, err := p.GetStatus(ctx, spec.TenantID); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Fatalf("GetStatus after Remove = %v, want ErrTenantNotFound", err)
	}
	if _, err := p.Update(ctx, spec.TenantID, spec); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Fatalf("Update after Remove = %v, want ErrTenantNotFound", err)
	}
}

func TestCrashShowsInStatus(t *testing.T) {
	p := mustNew(t, mock.Options{})
	spec := resolve(t, p, "tenant-1", `{"image":"a","health_check":{"command":["true"]},"sidecars":[{"name":"b","image":"b"}]}`)
	ctx := context.Background()
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := p.Crash(spec.TenantID, "app", 2); err != nil {
		t.Fatal(err)
	}
	st, err := p.GetStatus(ctx, spec.TenantID)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != provider.StateDegraded || st.Health != provider.HealthUnhealthy {
		t.Errorf("state, health = %s, %s; want degraded, unhealthy", st.State, st.Health)
	}
	if c := st.Containers[0]; c.ExitCode == nil || *c.ExitCode != 2 || c.State != provider.ContainerExited {
		t.Errorf("crashed container status = %+v", c)
	}
	if err := p.Crash(spec.TenantID, "nope", 1); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("Crash of an unknown container = %v", err)
	}
}

func TestFailTimesCountsFromTheRequest(t *testing.T) {
	p := mustNew(t, mock.Options{})
	ctx := context.Background()
	if _, err := p.Provision(ctx, resolve(t, p, "tenant-1", `{"image":"a"}`)); err != nil {
		t.Fatal(err)
	}
	// Asked for after a successful call, one failure still happens.
	failing := resolve(t, p, "tenant-1", `{"image":"b","x-mock":{"fail":"transient","fail_times":1}}`)
	if _, err := p.Update(ctx, "tenant-1", failing); err == nil {
		t.Fatal("the first update after asking for a failure succeeded")
	}
	if _, err := p.Update(ctx, "tenant-1", failing); err != nil {
		t.Fatalf("the second update failed: %v", err)
	}
}

func TestStartAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := mustNew(t, mock.Options{Now: func() time.Time { return now }})
	spec := resolve(t, p, "tenant-1", `{"image":"a","x-mock":{"start_after":"10s"}}`)
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	st, err := p.GetStatus(context.Background(), "tenant-1")
	if err != nil || st.State != provider.StatePending || st.Health != provider.HealthStarting || st.Containers[0].State != provider.ContainerCreated {
		t.Fatalf("status right after provisioning = %+v, %v; want pending", st, err)
	}
	now = now.Add(11 * time.Second)
	if st, err := p.GetStatus(context.Background(), "tenant-1"); err != nil || st.State != provider.StateRunning {
		t.Fatalf("status after start_after = %+v, %v; want running", st, err)
	}
}

// TestConfigCheckedOncePerStep: a create that reaches ready validates the
// config against the schema, and has the provider read it, once where it
// enters the API and at most once per reconcile after that.
func TestConfigCheckedOncePerStep(t *testing.T) {
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	config := json.RawMessage(`{"image":"example.com/app:1","secrets":{"TOKEN":"s3cr3t"},"ports":[{"container_port":8080}],
		"health_check":{"tcp":{"port":8080}},"x-mock":{"start_after":"50ms"}}`)
	c := clienttest.CountChecks(t, p, config, 30*time.Second)
	t.Logf("checks: %+v", c)
	if err := c.Err(); err != nil {
		t.Error(err)
	}
}
