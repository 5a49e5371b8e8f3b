package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/client"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata and the generated section of docs/compute-providers.md")

// checkGolden compares got with testdata/name.golden, or rewrites it with
// -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

var (
	goldenNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	ago       = func(d time.Duration) time.Time { return goldenNow.Add(-d) }
)

func goldenTenants() []client.Tenant {
	retry := goldenNow.Add(8 * time.Second)
	return []client.Tenant{
		{
			ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", Name: "acme", ComputeProvider: "docker",
			ComputeConfig: json.RawMessage(`{"image":"ghcr.io/example/app:1.4","env":{"MODE":"prod"},"secrets":{"DB_PASSWORD":"[redacted]"},"ports":[{"container_port":8080}]}`),
			Labels:        map[string]string{"tier": "gold", "region": "eu"},
			Annotations:   map[string]string{"owner": "platform-team"},
			Status:        "ready", Generation: 2, ObservedGeneration: 2, Version: 5,
			Endpoints: []client.Endpoint{
				{Container: "app", Name: "http", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:49153"},
				{Container: "metrics", ContainerPort: 9090, Protocol: "tcp", Address: "127.0.0.1:49154"},
			},
			CreatedAt: ago(4*24*time.Hour + 3*time.Hour), UpdatedAt: ago(2*time.Hour + 10*time.Minute),
		},
		{
			ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f11", Name: "globex-corporation", ComputeProvider: "docker",
			ComputeConfig: json.RawMessage(`{"image":"nginx:latest"}`),
			Status:        "provisioning", StatusMessage: "provision attempt 2 of 11 failed: pull nginx:latest: connection reset by peer; retrying",
			Generation: 1, Version: 4, Attempts: 2, RetryAt: &retry,
			CreatedAt: ago(3 * time.Minute), UpdatedAt: ago(5 * time.Second),
		},
		{
			ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f12", Name: "initech", ComputeProvider: "mock",
			ComputeConfig: json.RawMessage(`{"image":"a"}`),
			Status:        "failed", StatusMessage: "provision: injected terminal failure (permanent)",
			Generation: 1, ObservedGeneration: 1, Version: 3, Attempts: 1,
			CreatedAt: ago(42 * time.Second), UpdatedAt: ago(40 * time.Second),
		},
	}
}

// goldenPlaced is a tenant of three placements: web on docker, ready,
// with its drift repaired; worker on nomad, retrying; old on docker,
// removed.
func goldenPlaced() client.Tenant {
	retry := goldenNow.Add(8 * time.Second)
	repaired := ago(time.Minute)
	web := []client.Endpoint{{Container: "app", Name: "http", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:49153"}}
	worker := []client.Endpoint{{Container: "worker", ContainerPort: 9090, Protocol: "tcp", Address: "10.0.0.7:24510"}}
	return client.Tenant{
		ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f14", Name: "umbrella", ComputeProvider: "docker",
		ComputeConfig: json.RawMessage(`{"image":"ghcr.io/example/web:2"}`),
		Labels:        map[string]string{"tier": "gold"},
		Status:        "provisioning", StatusMessage: "worker: provision attempt 2 of 11 failed: nomad: no node has capacity; retrying",
		Generation: 3, ObservedGeneration: 2, Version: 9, Attempts: 2, RetryAt: &retry,
		Endpoints: append(slices.Clone(web), worker...),
		Placements: []client.Placement{
			{
				Name: "web", ComputeProvider: "docker", ComputeConfig: json.RawMessage(`{"image":"ghcr.io/example/web:2","ports":[{"container_port":8080}]}`),
				WorkloadID: "0199a3c2-7d4e-8b1a-9c3f-2e5d8a6b4f15", WorkloadName: "umbrella-web",
				Status: "ready", ObservedGeneration: 3, Endpoints: web,
				Drift: &client.Drift{DetectedAt: ago(2 * time.Minute), ResolvedAt: &repaired, Generation: 3, Policy: "repair", Differences: []client.DriftDifference{
					{Path: "containers/app/image", Kind: "image", Expected: "ghcr.io/example/web:2", Found: "ghcr.io/example/web:2-hacked"},
				}},
			},
			{
				Name: "worker", ComputeProvider: "nomad", ComputeConfig: json.RawMessage(`{"image":"ghcr.io/example/worker:2","compute_provider":"nomad"}`),
				WorkloadID: "0199a3c2-7d4e-8b1a-9c3f-2e5d8a6b4f16", WorkloadName: "umbrella-worker",
				Status: "provisioning", StatusMessage: "provision attempt 2 of 11 failed: nomad: no node has capacity; retrying",
				ObservedGeneration: 2, Attempts: 2, RetryAt: &retry, Endpoints: worker,
			},
			{
				Name: "old", ComputeProvider: "docker", ComputeConfig: json.RawMessage(`{"image":"ghcr.io/example/old:1"}`),
				WorkloadID: "0199a3c2-7d4e-8b1a-9c3f-2e5d8a6b4f17", WorkloadName: "umbrella-old", Removed: true,
				Status: "deleting", ObservedGeneration: 2,
			},
		},
		CreatedAt: ago(3 * 24 * time.Hour), UpdatedAt: ago(30 * time.Second),
	}
}

func TestRenderGolden(t *testing.T) {
	tenants := goldenTenants()
	// The list shows a tenant with one endpoint too.
	listed := append(goldenTenants(), client.Tenant{
		ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f13", Name: "hooli", ComputeProvider: "kubernetes",
		Status: "ready", Generation: 1, ObservedGeneration: 1, Version: 2,
		Endpoints: []client.Endpoint{{Container: "app", ContainerPort: 8080, Protocol: "tcp", Address: "hooli.landlord-hooli.svc.cluster.local:8080"}},
		CreatedAt: ago(20 * time.Minute), UpdatedAt: ago(19 * time.Minute),
	})
	quickstart := []client.Tenant{
		{
			Name: "acme", ComputeProvider: "docker", Status: "ready", CreatedAt: ago(2 * time.Minute),
			Endpoints: []client.Endpoint{{Container: "app", ContainerPort: 8080, Protocol: "tcp", Address: "127.0.0.1:8081"}},
		},
		{
			Name: "beta", ComputeProvider: "docker", Status: "provisioning", CreatedAt: ago(20 * time.Second),
			StatusMessage: "cannot resolve or reach the registry registry-1.docker.io to pull nginx:1.27-alpine; pulling again in 2s",
		},
	}
	onPlans := goldenTenants()
	onPlans[0].Plan = &client.TenantPlan{Name: "standard", Version: 3}
	onPlans[0].ComputeConfig = json.RawMessage(`{"env":{"MODE":"prod"}}`)
	onPlans[0].MaintenanceWindow = &client.MaintenanceWindow{Days: []string{"sat", "sun"}, Start: "02:00", End: "04:00", TimeZone: "Europe/Paris"}
	onPlans[2].Plan = &client.TenantPlan{Name: "premium", Version: 12, Pinned: true}
	for _, tt := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"list", func(b *bytes.Buffer) error { return renderTenants(b, listed, goldenNow, nil, 0) }},
		{"list_empty", func(b *bytes.Buffer) error { return renderTenants(b, nil, goldenNow, nil, 0) }},
		{"list_not_enabled", func(b *bytes.Buffer) error {
			return renderTenants(b, listed, goldenNow, func(p string) bool { return p == "mock" }, 0)
		}},
		// On a terminal the message is cut to the width the other columns
		// leave, one column short: the quickstart's tenants on 80 columns.
		{"list_80_columns", func(b *bytes.Buffer) error { return renderTenants(b, quickstart, goldenNow, nil, 80) }},
		// A message left fewer than 20 columns takes them from the
		// endpoints, cut in their middle; on a wide terminal nothing is cut
		// but the message, at 80 columns as without a terminal.
		{"list_100_columns", func(b *bytes.Buffer) error { return renderTenants(b, listed, goldenNow, nil, 100) }},
		{"list_200_columns", func(b *bytes.Buffer) error { return renderTenants(b, listed, goldenNow, nil, 200) }},
		// Too narrow for even that: the endpoints keep 21 columns, the
		// message 20, and rows wrap.
		{"list_40_columns", func(b *bytes.Buffer) error { return renderTenants(b, listed, goldenNow, nil, 40) }},
		{"get", func(b *bytes.Buffer) error { return renderTenant(b, tenants[0], goldenNow) }},
		// A tenant on a plan: its plan and window, and its config as the
		// overrides it is.
		{"get_plan", func(b *bytes.Buffer) error { return renderTenant(b, onPlans[0], goldenNow) }},
		// PLAN is shown when a tenant listed follows a plan.
		{"list_plans", func(b *bytes.Buffer) error { return renderTenants(b, onPlans, goldenNow, nil, 0) }},
		{"get_retrying", func(b *bytes.Buffer) error { return renderTenant(b, tenants[1], goldenNow) }},
		// A tenant with placements: its providers joined, then each
		// placement with its own status, endpoints, drift and config.
		{"get_placements", func(b *bytes.Buffer) error { return renderTenant(b, goldenPlaced(), goldenNow) }},
		// PROVIDER of a tenant with placements is their providers joined;
		// one not enabled is named when others are.
		{"list_placements", func(b *bytes.Buffer) error {
			return renderTenants(b, append(goldenTenants(), goldenPlaced()), goldenNow, func(p string) bool { return p != "nomad" }, 0)
		}},
		{"create_dry_run_placements", func(b *bytes.Buffer) error {
			would := goldenPlaced()
			would.Placements = would.Placements[:2]
			for i := range would.Placements {
				would.Placements[i].EffectiveConfig = json.RawMessage(`{"env":{"FROM_DEFAULTS":"yes"}}`)
			}
			return renderDryRun(b, would, goldenNow)
		}},
		// An event about a placement names it; one about the tenant as a
		// whole does not.
		{"history_placements", func(b *bytes.Buffer) error {
			return renderEvents(b, []client.Event{
				{Time: ago(4 * time.Minute), Type: "created", To: "requested", Generation: 1, Actor: "admin"},
				{Time: ago(4 * time.Minute), Placement: "web", Type: "status", From: "requested", To: "provisioning", Generation: 1, Actor: "controller@host:1"},
				{Time: ago(4 * time.Minute), Placement: "worker", Type: "status", From: "requested", To: "provisioning", Generation: 1, Actor: "controller@host:1"},
				{Time: ago(90 * time.Second), Placement: "web", Type: "status", From: "provisioning", To: "ready", Generation: 1, Actor: "controller@host:1"},
				{Time: ago(80 * time.Second), Type: "status", From: "provisioning", To: "ready", Generation: 1, Actor: "controller@host:1"},
			}, goldenNow)
		}},
		// The last drift: when, what was done, every path.
		{"get_drift", func(b *bytes.Buffer) error {
			drifted := tenants[0]
			drifted.Drift = &client.Drift{DetectedAt: ago(2 * time.Minute), Generation: 2, Policy: "observe", Differences: []client.DriftDifference{
				{Path: "containers/app/image", Kind: "image", Expected: "ghcr.io/example/app:1.4", Found: "ghcr.io/example/app:1.4-hacked"},
				{Path: "deployment/replicas", Kind: "scale", Expected: "1", Found: "5"},
				{Path: "networkpolicy", Kind: "missing", Expected: "present"},
			}}
			return renderTenant(b, drifted, goldenNow)
		}},
		// What the server answers to a dry run, shown with no id, status
		// or times: nothing was stored.
		{"create_dry_run", func(b *bytes.Buffer) error {
			would := tenants[2]
			would.Status, would.StatusMessage, would.Attempts, would.ObservedGeneration = "requested", "", 0, 0
			would.EffectiveConfig = json.RawMessage(`{"image":"a","env":{"FROM_DEFAULTS":"yes"}}`)
			return renderDryRun(b, would, goldenNow)
		}},
		{"history", func(b *bytes.Buffer) error {
			return renderEvents(b, []client.Event{
				{Time: ago(4 * time.Minute), Type: "created", To: "requested", Generation: 1, Actor: "admin"},
				{Time: ago(4 * time.Minute), Type: "status", From: "requested", To: "provisioning", Generation: 1, Actor: "controller@host:1"},
				{Time: ago(3 * time.Minute), Type: "attempt_failed", Generation: 1, Message: "provision attempt 1 of 11 failed: pull nginx:latest: timeout", Actor: "controller@host:1"},
				{Time: ago(90 * time.Second), Type: "status", From: "provisioning", To: "ready", Generation: 1, Actor: "controller@host:1"},
				{Time: ago(5 * time.Second), Type: "updated", Generation: 2, Message: "compute_config changed", Actor: "admin"},
			}, goldenNow)
		}},
		{"providers", func(b *bytes.Buffer) error {
			return renderProviders(b, []client.Provider{
				{Name: "docker", Default: true, Healthy: true},
				{Name: "mock", Healthy: true},
				{Name: "ecs", Healthy: false, Message: "describe clusters: access denied"},
			})
		}},
		{"compute", func(b *bytes.Buffer) error {
			return renderComputeConfig(b, client.ComputeConfig{
				Provider: "mock",
				Schema: json.RawMessage(`{
					"type": "object",
					"required": ["image"],
					"$defs": {
						"port": {"type": "object", "description": "A port."},
						"health_check": {"type": "object", "description": "How to tell the container is healthy."}
					},
					"properties": {
						"image": {"type": "string", "description": "Image reference."},
						"env": {"type": "object", "description": "Environment variables."},
						"ports": {"type": "array", "items": {"$ref": "#/$defs/port"}, "description": "Ports the container listens on."},
						"command": {"type": "array", "items": {"type": "string"}},
						"health_check": {"$ref": "#/$defs/health_check"},
						"x-mock": {"type": "object", "properties": {"fail": {"enum": ["transient", "terminal"]}}, "description": "Behaviour the mock simulates."},
						"mode": {"enum": ["fast", "slow"], "description": "Speed."}
					}
				}`),
				Defaults:     json.RawMessage(`{"env":{"FROM_DEFAULTS":"yes"},"resources":{"memory_mib":128}}`),
				Capabilities: map[string]bool{"multiple_containers": true, "secrets": true, "in_place_update": false, "scaling": false},
			})
		}},
		{"compute_no_defaults", func(b *bytes.Buffer) error {
			return renderComputeConfig(b, client.ComputeConfig{Provider: "docker", Schema: json.RawMessage(`{"properties":{"image":{"type":"string"}}}`), Defaults: json.RawMessage("null")})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name, b.Bytes())
		})
	}
}

// An endpoints cell fits its columns by cutting the address in its
// middle, keeping the port and the count of the others.
func TestEndpointsCell(t *testing.T) {
	one := []client.Endpoint{{Address: "hooli.landlord-hooli.svc.cluster.local:8080"}}
	three := append(slices.Clone(one), client.Endpoint{Address: "127.0.0.1:1"}, client.Endpoint{Address: "127.0.0.1:2"})
	for _, tt := range []struct {
		name string
		es   []client.Endpoint
		cols int
		want string
	}{
		{"none", nil, 0, ""},
		{"one, no limit", one, 0, "hooli.landlord-hooli.svc.cluster.local:8080"},
		{"three, no limit", three, 0, "hooli.landlord-hooli.svc.cluster.local:8080 +2"},
		{"one that fits", one, 43, "hooli.landlord-hooli.svc.cluster.local:8080"},
		{"one cut", one, 21, "hooli.land…local:8080"},
		{"three cut", three, 21, "hooli.lan…cal:8080 +2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := endpointsCell(tt.es, tt.cols)
			if got != tt.want {
				t.Errorf("endpointsCell(%d) = %q, want %q", tt.cols, got, tt.want)
			}
			if n := utf8.RuneCountInString(got); tt.cols > 0 && n > tt.cols {
				t.Errorf("endpointsCell(%d) = %q: %d columns", tt.cols, got, n)
			}
		})
	}
}

func TestPrintObjectYAML(t *testing.T) {
	var b bytes.Buffer
	if err := printObject(&b, "yaml", goldenTenants()[1]); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "get_yaml", b.Bytes())
}

func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                    "0s",
		0:                               "0s",
		59 * time.Second:                "59s",
		time.Minute:                     "1m",
		59*time.Minute + 59*time.Second: "59m",
		2*time.Hour + 30*time.Minute:    "2h",
		23 * time.Hour:                  "23h",
		4*24*time.Hour + 5*time.Hour:    "4d",
		400 * 24 * time.Hour:            "400d",
	} {
		if got := age(d); got != want {
			t.Errorf("age(%s) = %s, want %s", d, got, want)
		}
	}
}
