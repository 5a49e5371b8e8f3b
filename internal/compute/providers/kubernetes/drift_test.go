package kubernetes_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// eventually polls cond until it holds, for at most 30 s; cond says what
// it last saw, for the failure.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, what, 30*time.Second, cond)
}

// watching runs p's change watch, and with it the informer cache its
// reads come from, until the test ends.
func watching(t *testing.T, p *kubernetes.Provider, changed func(string)) {
	t.Helper()
	if changed == nil {
		changed = func(string) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.WatchChanges(ctx, changed)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// inspect runs Inspect and fails t on an error.
func inspect(t *testing.T, p *kubernetes.Provider, spec *provider.TenantComputeSpec) *provider.Inspection {
	t.Helper()
	in, err := p.Inspect(context.Background(), spec)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return in
}

// driftAt returns the drift at path, if any.
func driftAt(in *provider.Inspection, path string) (provider.Drift, bool) {
	i := slices.IndexFunc(in.Drift, func(d provider.Drift) bool { return d.Path == path })
	if i < 0 {
		return provider.Drift{}, false
	}
	return in.Drift[i], true
}

// A tenant that uses every field landlord sets shows no drift once
// applied, whether Inspect reads the API server or the informer cache: the
// API server's defaults are not drift. Each field changed by hand is
// reported at its path, secret values never shown, and Update puts it
// back.
func TestInspectEveryField(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	block := blockOf(kubeconfig, "")
	p := newProvider(t, block, nil)
	cached := newProvider(t, block, nil)
	watching(t, cached, nil)
	tn := newTenant(t, p, "every-field")
	const secret = "s3cret-value-every-field"
	config := `{"image": "registry.example/app:1", "command": ["/bin/app", "serve"], "args": ["--listen", ":8080", "a b"],
		"ports": [{"container_port": 8080, "name": "http"}, {"container_port": 9090, "protocol": "udp", "host_port": 9999}],
		"env": {"A": "1", "EMPTY": ""}, "secrets": {"TOKEN": "` + secret + `"},
		"health_check": {"http": {"port": 8080, "path": "/healthz"}, "interval": "5s", "timeout": "2s", "retries": 2, "start_period": "30s"},
		"resources": {"cpu_millicores": 500, "memory_mib": 256}, "service_type": "NodePort",
		"ingress": {"host": "{name}.apps.example.com", "tls_secret": "wildcard", "class": "nginx", "port": "http"},
		"resource_quota": {"pods": "4", "limits.memory": "2Gi"}, "labels": {"team": "a"}, "networking": {"public": true},
		"replicas": 2, "progress_deadline": "5m"}`
	spec := tn.spec(t, 1, config, nil)
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	for name, prov := range map[string]*kubernetes.Provider{"from the API server": p, "from the cache": cached} {
		eventually(t, "Inspect "+name+" shows the applied tenant without drift", func() (bool, string) {
			in := inspect(t, prov, spec)
			return len(in.Drift) == 0 && in.Status.State == provider.StateRunning, fmt_(in)
		})
	}
	ns, name := "landlord-every-field", "every-field"
	deployments, core := c.Client.AppsV1().Deployments(ns), c.Client.CoreV1()
	patchDeployment := func(body string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, err := deployments.Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	hacked := base64.StdEncoding.EncodeToString([]byte("hacked-" + secret))
	for _, tt := range []struct {
		name, path string
		do         func(t *testing.T)
	}{
		{"secret value", "containers/app/secrets/TOKEN", func(t *testing.T) {
			if _, err := core.Secrets(ns).Patch(ctx, name+"-secrets", types.MergePatchType, []byte(`{"data": {"app.TOKEN": "`+hacked+`"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"secret reference", "containers/app/secrets/TOKEN", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"TOKEN","value":"typed-in","valueFrom":null}]}]}}}}`)},
		{"command", "containers/app/command", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","command":["/bin/sh"]}]}}}}`)},
		{"args", "containers/app/args", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","args":["--debug"]}]}}}}`)},
		{"resources", "containers/app/resources/cpu_millicores", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"1"}}}]}}}}`)},
		{"probe", "containers/app/health_check", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","readinessProbe":{"periodSeconds":99}}]}}}}`)},
		{"port", "containers/app/ports", patchDeployment(`{"spec":{"template":{"spec":{"containers":[{"name":"app","ports":[{"containerPort":8080,"name":"web","protocol":"TCP"}]}]}}}}`)},
		{"service port", "service/ports", func(t *testing.T) {
			if _, err := core.Services(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"spec":{"ports":[{"port":8080,"protocol":"TCP","targetPort":8081}]}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"network policy rules", "networkpolicy/ingress", func(t *testing.T) {
			if _, err := c.Client.NetworkingV1().NetworkPolicies(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"ingress":[{}]}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"quota", "resourcequota/hard/pods", func(t *testing.T) {
			if _, err := core.ResourceQuotas(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"100"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"ingress host", "ingress/rules", func(t *testing.T) {
			if _, err := c.Client.NetworkingV1().Ingresses(ns).Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/rules/0/host","value":"elsewhere.example.com"}]`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.do(t)
			for name, prov := range map[string]*kubernetes.Provider{"from the API server": p, "from the cache": cached} {
				eventually(t, "Inspect "+name+" reports "+tt.path, func() (bool, string) {
					in := inspect(t, prov, spec)
					noSecret(t, in, secret)
					_, found := driftAt(in, tt.path)
					return found, fmt_(in)
				})
			}
			if _, err := p.Update(ctx, tn.id, spec); err != nil {
				t.Fatal(err)
			}
			eventually(t, "Inspect after the repair shows no drift", func() (bool, string) {
				in := inspect(t, cached, spec)
				return len(in.Drift) == 0, fmt_(in)
			})
		})
	}
	got, err := core.Secrets(ns).Get(ctx, name+"-secrets", metav1.GetOptions{})
	if err != nil || string(got.Data["app.TOKEN"]) != secret {
		t.Errorf("the Secret after the repairs: %v", err)
	}
}

// noSecret fails t when the inspection shows the secret, or the hacked
// value made from it.
func noSecret(t *testing.T, in *provider.Inspection, secret string) {
	t.Helper()
	b, _ := json.Marshal(in)
	if strings.Contains(string(b), secret) || strings.Contains(string(b), "typed-in") {
		t.Fatalf("Inspect shows a secret value: %s", b)
	}
}

func fmt_(in *provider.Inspection) string {
	b, _ := json.Marshal(in.Drift)
	return string(b) + " state " + string(in.Status.State) + " " + in.Status.Message
}

// A scaling range leaves replicas to an autoscaler: landlord creates the
// Deployment with min, owns no replicas in its managed fields, reports no
// drift when the count changes, and never sets it back; a fixed count
// takes it back, and a range again hands it over at the live count,
// brought into the range.
func TestScalingRange(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "autoscaled")
	deployments := c.Client.AppsV1().Deployments("landlord-autoscaled")
	ranged := `{"image": "registry.example/app:1", "replicas": {"min": 2, "max": 5}}`
	spec := tn.spec(t, 1, ranged, nil)
	res, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	dep, err := deployments.Get(ctx, "autoscaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 2 {
		t.Errorf("a Deployment of range 2..5 was created with %d replicas, want 2", *dep.Spec.Replicas)
	}
	if owner := replicasOwners(t, dep.ManagedFields); slices.Contains(owner, "landlord") {
		t.Errorf("landlord's field manager owns replicas (owners %v): it would fight the autoscaler", owner)
	}
	tn.waitState(t, running)

	// The autoscaler scales (as an HPA does, through the scale subresource).
	if _, err := deployments.Patch(ctx, "autoscaled", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "horizontal-pod-autoscaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	if in := inspect(t, p, spec); len(in.Drift) != 0 {
		t.Errorf("Inspect reports drift when the autoscaler scaled: %v", in.Drift)
	}
	if up, err := p.Update(ctx, tn.id, tn.spec(t, 2, ranged, res.ResourceIDs)); err != nil || !up.NoChanges() {
		t.Errorf("Update to the same range: %v, %v", up, err)
	}
	if got := replicas(t, c, "autoscaled"); got != 4 {
		t.Errorf("after an Update, replicas %d, want the autoscaler's 4", got)
	}

	// A fixed count takes the field back; a range hands it over again at
	// the live count, brought into the range.
	if _, err := p.Update(ctx, tn.id, tn.spec(t, 3, `{"image": "registry.example/app:1", "replicas": 7}`, res.ResourceIDs)); err != nil {
		t.Fatal(err)
	}
	if got := replicas(t, c, "autoscaled"); got != 7 {
		t.Errorf("a fixed count of 7 left %d replicas", got)
	}
	back := tn.spec(t, 4, `{"image": "registry.example/app:1", "replicas": {"min": 1, "max": 3}}`, res.ResourceIDs)
	if _, err := p.Update(ctx, tn.id, back); err != nil {
		t.Fatal(err)
	}
	dep, err = deployments.Get(ctx, "autoscaled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 3 || slices.Contains(replicasOwners(t, dep.ManagedFields), "landlord") {
		t.Errorf("from 7 to the range 1..3: %d replicas, owned by %v; want 3, not landlord's", *dep.Spec.Replicas, replicasOwners(t, dep.ManagedFields))
	}
	if in := inspect(t, p, back); len(in.Drift) != 0 {
		t.Errorf("Inspect after the handover: %v", in.Drift)
	}
}

// replicasOwners are the field managers that own a Deployment's replicas.
func replicasOwners(t *testing.T, fields []metav1.ManagedFieldsEntry) []string {
	t.Helper()
	var out []string
	for _, f := range fields {
		if f.FieldsV1 != nil && strings.Contains(f.FieldsV1.GetRawString(), `"f:replicas"`) {
			out = append(out, f.Manager)
		}
	}
	return out
}

func replicas(t *testing.T, c *kubetest.Cluster, name string) int32 {
	t.Helper()
	dep, err := c.Client.AppsV1().Deployments("landlord-"+name).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return *dep.Spec.Replicas
}

// What landlord does shows in kubectl describe: Events on the Deployment
// for the tenant created, updated and put back, and on an object put back.
func TestEventsDescribeLandlordsActions(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "described")
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 8080}]}`
	res, err := p.Provision(ctx, tn.spec(t, 1, config, nil))
	if err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	if err := c.Client.CoreV1().Services("landlord-described").Delete(ctx, "described", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update(ctx, tn.id, tn.spec(t, 1, config, res.ResourceIDs)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update(ctx, tn.id, tn.spec(t, 2, strings.Replace(config, "app:1", "app:2", 1), res.ResourceIDs)); err != nil {
		t.Fatal(err)
	}
	eventsOf := func(kind, name string) []corev1.Event {
		// As kubectl describe finds them: core/v1 Events by the object they
		// are about (the cluster's controllers record some too).
		list, err := c.Client.CoreV1().Events("landlord-described").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		var out []corev1.Event
		for _, ev := range list.Items {
			if ev.ReportingController == "landlord.dev/landlord" {
				out = append(out, ev)
			}
		}
		return out
	}
	var reasons []string
	for _, ev := range eventsOf("Deployment", "described") {
		reasons = append(reasons, ev.Reason)
	}
	for _, want := range []string{kubernetes.ReasonCreated, kubernetes.ReasonDriftRepaired, kubernetes.ReasonUpdated} {
		if !slices.Contains(reasons, want) {
			t.Errorf("the Deployment's events %v lack %s", reasons, want)
		}
	}
	svc := eventsOf("Service", "described")
	if len(svc) != 1 || svc[0].Reason != kubernetes.ReasonDriftRepaired || !strings.Contains(svc[0].Message, "created Service") {
		t.Errorf("the recreated Service's events: %+v", svc)
	}
}

// A Pod no node has been given waits, and its tenant's status says so.
func TestPendingWithoutNode(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	defer c.Node.Hold("landlord-nodeless")()
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "nodeless")
	if _, err := p.Provision(context.Background(), tn.spec(t, 1, `{"image": "registry.example/app:1"}`, nil)); err != nil {
		t.Fatal(err)
	}
	st := tn.waitState(t, func(st *provider.ComputeStatus) bool {
		return strings.Contains(st.Message, "no node has been assigned")
	})
	if st.State != provider.StatePending {
		t.Errorf("a Pod waiting for a node: state %s (%s), want pending", st.State, st.Message)
	}
}

// With the change watch running, reads come from its informer cache: once
// it has caught up, GetStatus, Inspect and an Update or Provision with
// nothing to change make no request at all, not even past a rollout's
// progress deadline, when the controller keeps provisioning; and a read
// right after landlord's own write sees it.
func TestCachedReads(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	defer c.Node.Hold("landlord-cached")()
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	watching(t, p, nil)
	tn := newTenant(t, p, "cached")
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 8080}], "secrets": {"K": "v"}, "progress_deadline": "1s",
		"resource_quota": {"pods": "3"}, "ingress": {"host": "{name}.example.com"}}`
	spec := tn.spec(t, 1, config, nil)
	res, err := p.Provision(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, func(st *provider.ComputeStatus) bool { return st.State == provider.StateFailed })
	requests := func() int {
		reqs, err := c.Requests()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range reqs {
			if r.Namespace == "landlord-cached" || r.Name == "landlord-cached" {
				n++
			}
		}
		return n
	}
	eventually(t, "a GetStatus that makes no request (the cache has caught up)", func() (bool, string) {
		before := requests()
		_, err := p.GetStatus(ctx, tn.id)
		return err == nil && requests() == before, "requests made"
	})
	before := requests()
	for range 5 {
		if _, err := p.Provision(ctx, spec); err != nil {
			t.Fatal(err)
		}
		if _, err := p.GetStatus(ctx, tn.id); err != nil {
			t.Fatal(err)
		}
		if in := inspect(t, p, spec); len(in.Drift) != 0 {
			t.Fatalf("drift %v", in.Drift)
		}
	}
	if n := requests() - before; n != 0 {
		t.Errorf("5 provisions, statuses and inspections of a tenant past its progress deadline made %d requests, want none", n)
	}
	// Read your writes: the Inspect right after an Update sees it.
	next := tn.spec(t, 2, strings.Replace(config, "app:1", "app:2", 1), res.ResourceIDs)
	if _, err := p.Update(ctx, tn.id, next); err != nil {
		t.Fatal(err)
	}
	if in := inspect(t, p, next); len(in.Drift) != 0 {
		t.Errorf("Inspect right after an Update reports %v: it read the cache from before the write", in.Drift)
	}
	// And the GetStatus right after a Destroy does not find the workload.
	if err := p.Destroy(ctx, tn.id); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetStatus(ctx, tn.id); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("GetStatus right after Destroy = %v, want ErrTenantNotFound", err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "landlord-cached", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the namespace after Destroy: %v", err)
	}
}
