package nomad

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

var testKey = []byte("landlord-nomad-unit-test-hash-key")

func testProvider(t *testing.T, block string) *Provider {
	t.Helper()
	p, err := New(context.Background(), Options{Block: json.RawMessage(block), HashKey: testKey, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testSpec(t *testing.T, p *Provider, name string, generation int64, config string) *provider.TenantComputeSpec {
	t.Helper()
	m := computetest.Manager(t, p, compute.ManagerOptions{HashKey: testKey})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "00000000-0000-4000-8000-000000000001", TenantName: name,
		Generation: generation, ComputeConfig: json.RawMessage(config)})
	if err != nil {
		t.Fatal(err)
	}
	return res.Spec
}

const sidecarConfig = `{"image": "app:1", "command": ["/app", "serve"], "args": ["--port", "8080"], "env": {"MODE": "prod"},
	"secrets": {"API_KEY": "s3cret-value"},
	"ports": [{"container_port": 8080, "name": "http"}, {"container_port": 9000, "host_port": 19000, "protocol": "udp"}],
	"health_check": {"http": {"port": 8080, "path": "/healthz"}},
	"resources": {"cpu_millicores": 500, "memory_mib": 256},
	"sidecars": [{"name": "log-shipper", "image": "shipper:2"}],
	"update": {"canary": 1, "min_healthy_time": "5s"}, "restart": {"attempts": 0}, "count": 2}`

// The job carries the workload as Nomad runs it, and no secret value.
func TestJobOfASpec(t *testing.T) {
	p := testProvider(t, `{"mhz_per_core": 2000}`)
	d := p.desiredOf(testSpec(t, p, "acme", 3, sidecarConfig), "landlord-acme")
	b, err := json.Marshal(d.job)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret-value") {
		t.Fatalf("the job holds a secret value: %s", b)
	}
	if got := d.secrets["nomad/jobs/landlord-acme/tenant/app"]["API_KEY"]; got != "s3cret-value" {
		t.Errorf("the app task's Variable holds %q", got)
	}
	tg := d.job.TaskGroups[0]
	if *tg.Count != 2 || len(tg.Tasks) != 2 || !tg.Tasks[0].Leader || tg.Tasks[1].Leader {
		t.Errorf("group: count %d, %d tasks, leaders %v %v", *tg.Count, len(tg.Tasks), tg.Tasks[0].Leader, tg.Tasks[1].Leader)
	}
	app := tg.Tasks[0]
	if app.Config["image"] != "app:1" || strings.Join(app.Config["entrypoint"].([]string), " ") != "/app serve" ||
		strings.Join(app.Config["args"].([]string), " ") != "--port 8080" || strings.Join(app.Config["ports"].([]string), ",") != "app_http,app_udp_9000" {
		t.Errorf("app task config %v", app.Config)
	}
	if *app.Resources.CPU != 1000 || *app.Resources.MemoryMB != 256 {
		t.Errorf("app resources: cpu %d MHz, memory %d MB; want 1000 (500 millicores at 2000 MHz a core) and 256", *app.Resources.CPU, *app.Resources.MemoryMB)
	}
	if len(app.Templates) != 1 || !*app.Templates[0].Envvars || !strings.Contains(*app.Templates[0].EmbeddedTmpl, `nomadVar "nomad/jobs/landlord-acme/tenant/app"`) {
		t.Errorf("app templates %+v", app.Templates)
	}
	if len(tg.Tasks[1].Templates) != 0 {
		t.Error("the sidecar, which has no secret, renders a template")
	}
	net := tg.Networks[0]
	if net.Mode != "host" || len(net.DynamicPorts) != 1 || net.DynamicPorts[0].To != 8080 || len(net.ReservedPorts) != 1 || net.ReservedPorts[0].Value != 19000 {
		t.Errorf("network %+v", net)
	}
	if len(tg.Services) != 2 || tg.Services[0].Name != "landlord-acme-app-http" || len(tg.Services[0].Checks) != 1 ||
		tg.Services[0].Checks[0].Type != "http" || tg.Services[0].Checks[0].Path != "/healthz" || len(tg.Services[1].Checks) != 0 {
		t.Errorf("services %+v", tg.Services)
	}
	if *tg.Update.Canary != 1 || !*tg.Update.AutoPromote || *tg.RestartPolicy.Attempts != 0 {
		t.Errorf("update %+v restart %+v", tg.Update, tg.RestartPolicy)
	}
	meta := d.job.Meta
	if meta[metaTenantID] != "00000000-0000-4000-8000-000000000001" || meta[metaGeneration] != "3" || meta[metaConfigHash] != d.hash || meta[metaManagedBy] != "landlord" {
		t.Errorf("meta %v", meta)
	}
	// The meta says what each label is; the host port is the allocation's.
	want := append([]port(nil), d.ports...)
	for i := range want {
		want[i].hostPort = 0
	}
	ports := portsOfJob(d.job)
	if len(ports) != 2 || ports[0] != want[0] || ports[1] != want[1] {
		t.Errorf("ports read back from the meta %+v, want %+v", ports, want)
	}
}

// The fingerprint changes with a secret value, not with the generation.
func TestFingerprint(t *testing.T) {
	p := testProvider(t, "")
	base := p.desiredOf(testSpec(t, p, "acme", 1, sidecarConfig), "landlord-acme")
	if again := p.desiredOf(testSpec(t, p, "acme", 2, sidecarConfig), "landlord-acme"); again.hash != base.hash {
		t.Error("a new generation of the same config changes the fingerprint")
	}
	rotated := p.desiredOf(testSpec(t, p, "acme", 2, strings.Replace(sidecarConfig, "s3cret-value", "rotated", 1)), "landlord-acme")
	if rotated.hash == base.hash {
		t.Error("a rotated secret leaves the fingerprint as it was")
	}
	other := testProvider(t, `{"mhz_per_core": 3000}`)
	if moved := other.desiredOf(testSpec(t, other, "acme", 1, sidecarConfig), "landlord-acme"); moved.hash == base.hash {
		t.Error("a setting that changes the job leaves the fingerprint as it was")
	}
}

// Job IDs are deterministic and bounded, so that every Variable path fits
// Nomad's 128 characters.
func TestNames(t *testing.T) {
	p := testProvider(t, `{"job_prefix": "landlord-production-eu-"}`)
	long := strings.Repeat("a", 63)
	id := p.jobID(long)
	if len(id) > maxJobID || id != p.jobID(long) || id == p.jobID(strings.Repeat("a", 62)+"b") {
		t.Errorf("jobID of a long name: %q", id)
	}
	if path := secretsPath(id, strings.Repeat("c", 32)); len(path) > 128 {
		t.Errorf("the longest Variable path is %d characters", len(path))
	}
	if got := testProvider(t, "").jobID("acme"); got != "landlord-acme" {
		t.Errorf("jobID(acme) = %q", got)
	}
}
