// Package helm tests landlord's Helm chart (deploy/helm/landlord) with
// Helm's own Go module: it lints, renders under several sets of values,
// refuses bad ones with messages that name the value, renders the plain
// manifests of deploy/kubernetes/landlord.yaml, and its objects are taken
// by a real API server (server-side dry run).
package helm

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/config"
)

var update = flag.Bool("update", false, "write deploy/kubernetes/landlord.yaml from the chart")

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

const chartDir = "landlord"

// plainValues are the values deploy/kubernetes/landlord.yaml is rendered
// with: the defaults, and its Namespace.
var plainValues = map[string]any{"namespace": map[string]any{"create": true}}

// Values the tests render with besides the defaults.
var (
	postgresHA = map[string]any{
		"replicaCount": 3,
		"database":     map[string]any{"urlSecret": map[string]any{"name": "landlord-db"}},
		"encryption":   map[string]any{"secretName": "landlord-keys", "keys": []any{"k1", "k2"}, "primary": "k2"},
		"auth": map[string]any{"oidc": map[string]any{
			"issuer": "https://sso.example.com/realms/ops", "audience": "landlord",
			"adminGroups": []any{"platform"}, "readerGroups": []any{"support"}, "caSecret": "sso-ca",
		}},
		"tls":            map[string]any{"secretName": "", "certManager": map[string]any{"enabled": true, "issuerRef": map[string]any{"name": "internal-ca"}}},
		"serviceMonitor": map[string]any{"enabled": true, "bearerTokenSecret": map[string]any{"name": "landlord-tokens"}, "caSecret": map[string]any{"name": "landlord-tls"}},
		"networkPolicy":  map[string]any{"from": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"team": "platform"}}}}},
		"compute": map[string]any{"default": "kubernetes", "kubernetes": map[string]any{"namespace_mode": "per-tenant"},
			"docker": map[string]any{"host": "tcp://docker.internal:2376"}},
		"config": map[string]any{"controller": map[string]any{"workers": 32}, "log_level": "debug"},
	}
	behindProxy = map[string]any{
		"tls": map[string]any{"enabled": false}, "trustedProxies": []any{"10.0.0.0/8"},
		"rbac": map[string]any{"create": false}, "compute": map[string]any{"default": "nomad", "nomad": map[string]any{}},
		"podDisruptionBudget": map[string]any{"enabled": false}, "networkPolicy": map[string]any{"enabled": false},
	}
)

func TestChartLints(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "postgres and HA": postgresHA, "behind a proxy": behindProxy} {
		t.Run(name, func(t *testing.T) {
			res := lint.RunAll(chartDir, vals, "landlord-system")
			for _, m := range res.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("lint: %v", m)
				}
			}
		})
	}
}

// render renders the chart as release landlord in namespace ns with vals
// over the defaults, and returns its objects' manifests by template.
func render(t *testing.T, ns string, vals map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := util.ToRenderValuesWithSchemaValidation(ch, vals, common.ReleaseOptions{Name: "landlord", Namespace: ns, IsInstall: true}, common.DefaultCapabilities, false)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	objs := map[string]string{}
	for path, doc := range out {
		if strings.HasSuffix(path, ".yaml") && strings.TrimSpace(doc) != "" {
			objs[strings.TrimPrefix(path, "landlord/templates/")] = doc
		}
	}
	return objs, nil
}

func mustRender(t *testing.T, ns string, vals map[string]any) map[string]string {
	t.Helper()
	objs, err := render(t, ns, vals)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// landlordConfig is the landlord.yaml of a render, as landlord loads it.
func landlordConfig(t *testing.T, objs map[string]string, env map[string]string) config.Config {
	t.Helper()
	var cm struct{ Data map[string]string }
	if err := yaml.Unmarshal([]byte(objs["configmap.yaml"]), &cm); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "landlord.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["landlord.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("landlord refuses the chart's landlord.yaml: %v\n%s", err, cm.Data["landlord.yaml"])
	}
	return cfg
}

func TestChartRenders(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		objs := mustRender(t, "landlord-system", nil)
		for _, want := range []string{"configmap.yaml", "deployment.yaml", "service.yaml", "serviceaccount.yaml", "rbac.yaml", "pdb.yaml", "networkpolicy.yaml", "pvc.yaml"} {
			if objs[want] == "" {
				t.Errorf("no %s", want)
			}
		}
		for _, absent := range []string{"namespace.yaml", "servicemonitor.yaml", "certificate.yaml"} {
			if objs[absent] != "" {
				t.Errorf("%s rendered by default", absent)
			}
		}
		cfg := landlordConfig(t, objs, map[string]string{"LANDLORD_ADMIN_TOKEN": "x"})
		if cfg.Database.Driver != "sqlite" || cfg.Database.Path != "/var/lib/landlord/landlord.db" || cfg.TLS.CertFile != "/etc/landlord/tls/tls.crt" {
			t.Errorf("config: %+v", cfg)
		}
		d := objs["deployment.yaml"]
		for _, want := range []string{"type: Recreate", "claimName: landlord-data", "path: /readyz", "scheme: HTTPS", "readOnlyRootFilesystem: true", "runAsNonRoot: true", "secretName: landlord-tls", "name: LANDLORD_ADMIN_TOKEN"} {
			if !strings.Contains(d, want) {
				t.Errorf("the Deployment lacks %q:\n%s", want, d)
			}
		}
	})
	t.Run("postgres and HA", func(t *testing.T) {
		objs := mustRender(t, "ops", postgresHA)
		cfg := landlordConfig(t, objs, map[string]string{"LANDLORD_DATABASE": "postgres://db/landlord", "LANDLORD_ADMIN_TOKEN": "x"})
		if cfg.Database.Driver != "postgres" || cfg.OIDC.Issuer == "" || cfg.OIDC.CAFile != "/etc/landlord/oidc/ca.crt" || cfg.Encryption.Primary != "k2" || len(cfg.Encryption.Keys) != 2 || cfg.Controller.Workers != 32 {
			t.Errorf("config: %+v", cfg)
		}
		if objs["pvc.yaml"] != "" {
			t.Error("a volume for SQLite beside PostgreSQL")
		}
		d := objs["deployment.yaml"]
		for _, want := range []string{"replicas: 3", "maxUnavailable: 0", "name: landlord-db", "secretName: landlord-tls", "mountPath: /etc/landlord/encryption"} {
			if !strings.Contains(d, want) {
				t.Errorf("the Deployment lacks %q:\n%s", want, d)
			}
		}
		for _, want := range []string{"kind: Certificate", "name: internal-ca", "landlord.ops.svc"} {
			if !strings.Contains(objs["certificate.yaml"], want) {
				t.Errorf("the Certificate lacks %q:\n%s", want, objs["certificate.yaml"])
			}
		}
		if !strings.Contains(objs["servicemonitor.yaml"], "scheme: https") {
			t.Errorf("ServiceMonitor:\n%s", objs["servicemonitor.yaml"])
		}
	})
	t.Run("behind a proxy", func(t *testing.T) {
		objs := mustRender(t, "landlord-system", behindProxy)
		cfg := landlordConfig(t, objs, map[string]string{"LANDLORD_ADMIN_TOKEN": "x"})
		if len(cfg.TrustedProxies) != 1 || cfg.TLS.CertFile != "" {
			t.Errorf("config: %+v", cfg)
		}
		for _, absent := range []string{"rbac.yaml", "pdb.yaml", "networkpolicy.yaml"} {
			if objs[absent] != "" {
				t.Errorf("%s rendered though off", absent)
			}
		}
	})
}

// TestChartRefusesBadValues: a mistake is refused at render time, naming
// the value, never a Pod that crash-loops.
func TestChartRefusesBadValues(t *testing.T) {
	for _, tt := range []struct {
		name string
		vals map[string]any
		want string
	}{
		{"an unknown key", map[string]any{"replicas": 2}, "replicas"},
		{"a mistyped value", map[string]any{"replicaCount": "two"}, "replicaCount"},
		{"a bad pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
		{"replicas on SQLite", map[string]any{"replicaCount": 2}, "more than one replica needs PostgreSQL"},
		{"no credentials", map[string]any{"auth": map[string]any{"tokensSecret": map[string]any{"name": ""}}}, "auth.tokensSecret"},
		{"plain HTTP", map[string]any{"tls": map[string]any{"enabled": false}}, "insecureHTTP"},
		{"keys without ids", map[string]any{"encryption": map[string]any{"secretName": "k"}}, "encryption.keys"},
		{"a monitor without a token", map[string]any{"serviceMonitor": map[string]any{"enabled": true}}, "serviceMonitor.bearerTokenSecret.name"},
		{"a monitor without the CA", map[string]any{"serviceMonitor": map[string]any{"enabled": true, "bearerTokenSecret": map[string]any{"name": "t"}}}, "serviceMonitor.caSecret.name"},
		{"a monitor's token over plain HTTP", map[string]any{"tls": map[string]any{"enabled": false}, "trustedProxies": []any{"10.0.0.0/8"},
			"serviceMonitor": map[string]any{"enabled": true, "bearerTokenSecret": map[string]any{"name": "t"}}}, "Prometheus would send its token over plain HTTP"},
		{"cert-manager without an issuer", map[string]any{"tls": map[string]any{"certManager": map[string]any{"enabled": true}}}, "tls.certManager.issuerRef.name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, "landlord-system", tt.vals)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

// installOrder is the order the plain manifests list objects in, that of
// `kubectl apply -f`: what others refer to first.
var installOrder = []string{"namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "configmap.yaml", "pvc.yaml", "service.yaml", "deployment.yaml", "pdb.yaml", "networkpolicy.yaml", "certificate.yaml", "servicemonitor.yaml"}

// plainManifests renders deploy/kubernetes/landlord.yaml.
func plainManifests(t *testing.T) []byte {
	objs := mustRender(t, "landlord-system", plainValues)
	var b strings.Builder
	b.WriteString(`# landlord for kubectl apply -f, rendered from the Helm chart
# (deploy/helm/landlord) with its defaults into the namespace
# landlord-system; do not edit: go test ./deploy/helm -run TestPlainManifests -update
# writes it. Before applying, create its two Secrets in landlord-system:
#   kubectl create namespace landlord-system
#   kubectl -n landlord-system create secret generic landlord-tokens \
#     --from-literal=admin-token=$(openssl rand -hex 32)
#   kubectl -n landlord-system create secret tls landlord-tls --cert=tls.crt --key=tls.key
# and change the image to the one you pushed.
`)
	for name := range objs {
		if !slices.Contains(installOrder, name) {
			t.Errorf("%s is not in installOrder", name)
		}
	}
	for _, name := range installOrder {
		if doc, ok := objs[name]; ok {
			b.WriteString("---\n# Source: " + name + "\n" + strings.TrimLeft(doc, "-\n"))
			if !strings.HasSuffix(doc, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return []byte(b.String())
}

func TestPlainManifests(t *testing.T) {
	const path = "../kubernetes/landlord.yaml"
	got := plainManifests(t)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./deploy/helm -run TestPlainManifests -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not the chart's rendering; go test ./deploy/helm -run TestPlainManifests -update (-want +got):\n%s", path, diff)
	}
}

// TestRBACMatchesTheProviderTests: the chart's ClusterRole grants what
// deploy/kubernetes/rbac.yaml grants, the role the Kubernetes provider's
// tests run under.
func TestRBACMatchesTheProviderTests(t *testing.T) {
	rolesOf := func(doc string) []rbacv1.PolicyRule {
		for part := range strings.SplitSeq(doc, "\n---") {
			var r rbacv1.ClusterRole
			if err := yaml.Unmarshal([]byte(part), &r); err == nil && r.Kind == "ClusterRole" {
				return r.Rules
			}
		}
		t.Fatalf("no ClusterRole in\n%s", doc)
		return nil
	}
	shipped, err := os.ReadFile("../kubernetes/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rolesOf(string(shipped)), rolesOf(mustRender(t, "landlord-system", nil)["rbac.yaml"])); diff != "" {
		t.Errorf("the chart's ClusterRole differs from deploy/kubernetes/rbac.yaml (-shipped +chart):\n%s", diff)
	}
}

// TestManifestsApply: a real API server takes every object of the plain
// manifests and of the PostgreSQL render (server-side dry run: schema,
// defaulting and admission, nothing stored), but the Certificate and the
// ServiceMonitor, whose CRDs the test cluster lacks.
func TestManifestsApply(t *testing.T) {
	c := kubetest.Start(t)
	kubeconfig, err := c.WriteKubeconfig("helm-admin", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(t *testing.T, manifest []byte, args ...string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		if err := os.WriteFile(path, manifest, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(c.Kubectl(), append([]string{"--kubeconfig", kubeconfig, "apply", "--server-side", "--field-manager", "helm-test", "-f", path}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		// The namespace enforces the restricted Pod Security profile; the
		// API server warns of a Pod template that would break it.
		if strings.Contains(string(out), "would violate PodSecurity") {
			t.Errorf("the Pod is not restricted:\n%s", out)
		}
		t.Logf("%s", out)
	}
	t.Run("plain manifests", func(t *testing.T) {
		m := plainManifests(t)
		// The Namespace for real, so that the dry run of what is in it
		// can be judged; the rest dry.
		ns, rest, _ := strings.Cut(string(m), "\n---\n# Source: serviceaccount.yaml")
		apply(t, []byte(ns))
		apply(t, []byte("# Source: serviceaccount.yaml"+rest), "--dry-run=server")
	})
	t.Run("postgres and HA", func(t *testing.T) {
		objs := mustRender(t, "landlord-system", postgresHA)
		var b strings.Builder
		for _, name := range installOrder {
			if doc, ok := objs[name]; ok && name != "certificate.yaml" && name != "servicemonitor.yaml" {
				b.WriteString("---\n" + doc + "\n")
			}
		}
		apply(t, []byte(b.String()), "--dry-run=server")
	})
}
