package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// newNamespace creates a namespace, as the admin, for the test's life.
func newNamespace(t *testing.T, c *kubetest.Cluster, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}) })
}

// tenantOf is one tenant of a behaviour test, resolved through a Manager
// as the controller would.
type tenantOf struct {
	id, name string
	p        *kubernetes.Provider
	m        *compute.Manager
}

func newTenant(t *testing.T, p *kubernetes.Provider, name string) *tenantOf {
	t.Helper()
	tn := unmanagedTenant(t, p, name)
	t.Cleanup(func() {
		if err := p.Destroy(context.Background(), tn.id); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return tn
}

// unmanagedTenant is a tenant nothing destroys when the test ends.
func unmanagedTenant(t *testing.T, p *kubernetes.Provider, name string) *tenantOf {
	t.Helper()
	return &tenantOf{id: uuid.NewString(), name: name, p: p, m: computetest.Manager(t, p, compute.ManagerOptions{HashKey: hashKey})}
}

func (tn *tenantOf) spec(t *testing.T, generation int64, config string, ids map[string]string) *provider.TenantComputeSpec {
	t.Helper()
	res, err := tn.m.Resolve(context.Background(), compute.ResolveRequest{TenantID: tn.id, TenantName: tn.name, Generation: generation,
		ComputeConfig: json.RawMessage(config), ResourceIDs: ids})
	if err != nil {
		t.Fatalf("resolve %s: %v", config, err)
	}
	return res.Spec
}

// waitState polls GetStatus until ok holds.
func (tn *tenantOf) waitState(t *testing.T, ok func(*provider.ComputeStatus) bool) *provider.ComputeStatus {
	t.Helper()
	var st *provider.ComputeStatus
	poll.Until(t, "tenant "+tn.name+" in the state wanted", 30*time.Second, func() (bool, string) {
		var err error
		st, err = tn.p.GetStatus(context.Background(), tn.id)
		return err == nil && ok(st), fmt.Sprintf("status %+v, %v", st, err)
	})
	return st
}

func running(st *provider.ComputeStatus) bool { return st.State == provider.StateRunning }

func blockOf(kubeconfig, extra string) string {
	return fmt.Sprintf(`{"kubeconfig": %q%s}`, kubeconfig, extra)
}

// writes are the requests landlord made that change something in
// namespace (or the namespace itself); tests run in parallel.
func writes(t *testing.T, c *kubetest.Cluster, namespace string) int {
	t.Helper()
	reqs, err := c.Requests()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range reqs {
		if r.Namespace != namespace && (r.Resource != "namespaces" || r.Name != namespace) {
			continue
		}
		if r.Verb == "create" || r.Verb == "patch" || r.Verb == "update" || r.Verb == "delete" || r.Verb == "deletecollection" {
			n++
		}
	}
	return n
}

// An update to a spec the objects already match, at a new generation,
// makes no request that writes.
func TestNoOpUpdateWritesNothing(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "noop")
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 8080}], "secrets": {"TOKEN": "s3cret"},
		"health_check": {"http": {"port": 8080, "path": "/healthz"}}, "resources": {"cpu_millicores": 500, "memory_mib": 256},
		"ingress": {"host": "{name}.apps.example.com"}, "resource_quota": {"pods": "4"}, "labels": {"team": "a"}}`
	if _, err := p.Provision(context.Background(), tn.spec(t, 1, config, nil)); err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	before := writes(t, c, "landlord-noop")
	for gen := int64(2); gen <= 3; gen++ {
		res, err := p.Update(context.Background(), tn.id, tn.spec(t, gen, config, nil))
		if err != nil {
			t.Fatal(err)
		}
		if !res.NoChanges() {
			t.Errorf("update at generation %d to the same spec changed %v", gen, res.Changes)
		}
	}
	if _, err := p.Provision(context.Background(), tn.spec(t, 4, config, nil)); err != nil {
		t.Fatal(err)
	}
	if n := writes(t, c, "landlord-noop") - before; n != 0 {
		t.Errorf("updates and a provision to the same spec made %d requests that write", n)
	}
	res, err := p.Update(context.Background(), tn.id, tn.spec(t, 5, strings.Replace(config, `"team": "a"`, `"team": "b"`, 1), nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.NoChanges() || writes(t, c, "landlord-noop") == before {
		t.Errorf("a changed label wrote nothing: %v", res.Changes)
	}
}

// Secret values live in a Secret the Pods read them from; the Deployment
// names them only, and a rotated value rolls the Pods.
func TestSecretsStayInASecret(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "secrets")
	config := `{"image": "registry.example/app:1", "secrets": {"TOKEN": "first-value"}}`
	if _, err := p.Provision(context.Background(), tn.spec(t, 1, config, nil)); err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	ctx := context.Background()
	dep, err := c.Client.AppsV1().Deployments("landlord-secrets").Get(ctx, "secrets", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dep)
	if strings.Contains(string(b), "first-value") {
		t.Error("the Deployment shows the secret value")
	}
	env := dep.Spec.Template.Spec.Containers[0].Env
	if len(env) != 1 || env[0].ValueFrom == nil || env[0].ValueFrom.SecretKeyRef == nil || env[0].ValueFrom.SecretKeyRef.Name != "secrets-secrets" {
		t.Fatalf("env %+v does not read TOKEN from the tenant's Secret", env)
	}
	secret, err := c.Client.CoreV1().Secrets("landlord-secrets").Get(ctx, "secrets-secrets", metav1.GetOptions{})
	if err != nil || string(secret.Data[env[0].ValueFrom.SecretKeyRef.Key]) != "first-value" {
		t.Fatalf("the Secret holds %v, %v", secret, err)
	}
	template := dep.Spec.Template.Annotations["landlord.dev/template-hash"]
	if _, err := p.Update(ctx, tn.id, tn.spec(t, 2, strings.Replace(config, "first-value", "second-value", 1), nil)); err != nil {
		t.Fatal(err)
	}
	dep, err = c.Client.AppsV1().Deployments("landlord-secrets").Get(ctx, "secrets", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dep.Spec.Template.Annotations["landlord.dev/template-hash"] == template {
		t.Error("a rotated secret left the Pod template as it was: the Pods would keep the old value")
	}
}

// Pods that cannot start make the status failed, with the kubelet's
// reason; a rollout past its deadline is failed too.
func TestFailingPods(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	for _, tt := range []struct {
		name, config string
		want         []string
	}{
		{"pull", `{"image": "registry.example/unpullable:1"}`, []string{"ImagePullBackOff", "registry.example/unpullable:1"}},
		{"crash", `{"image": "registry.example/crashloop:1"}`, []string{"CrashLoopBackOff", "its last run exited with code 3, Error"}},
		{"quota", `{"image": "registry.example/app:1", "resource_quota": {"requests.cpu": "1"}}`, []string{"Pods cannot be created (FailedCreate)", "must specify requests.cpu"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tn := newTenant(t, p, "failing-"+tt.name)
			if _, err := p.Provision(context.Background(), tn.spec(t, 1, tt.config, nil)); err != nil {
				t.Fatal(err)
			}
			st := tn.waitState(t, func(st *provider.ComputeStatus) bool { return st.State == provider.StateFailed })
			for _, w := range tt.want {
				if !strings.Contains(st.Message, w) {
					t.Errorf("message %q lacks %q", st.Message, w)
				}
			}
		})
	}
	t.Run("deadline", func(t *testing.T) {
		defer c.Node.Hold("landlord-failing-deadline")()
		tn := newTenant(t, p, "failing-deadline")
		if _, err := p.Provision(context.Background(), tn.spec(t, 1, `{"image": "registry.example/app:1", "progress_deadline": "1s"}`, nil)); err != nil {
			t.Fatal(err)
		}
		st := tn.waitState(t, func(st *provider.ComputeStatus) bool { return st.State == provider.StateFailed })
		if !strings.Contains(st.Message, "no progress within its deadline") {
			t.Errorf("message %q does not say the deadline passed", st.Message)
		}
	})
}

// In namespace_mode shared, tenants' objects live side by side in the
// operator's namespace, each tenant's destroy removes only its own, and
// an object of a tenant's name that is no tenant's is refused.
func TestSharedNamespace(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	newNamespace(t, c, "shared-tenants")
	p := newProvider(t, blockOf(kubeconfig, `, "namespace_mode": "shared", "namespace": "shared-tenants"`), nil)
	if err := p.CheckHealth(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := newTenant(t, p, "alpha"), newTenant(t, p, "beta")
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 80}], "secrets": {"K": "v"}}`
	for _, tn := range []*tenantOf{a, b} {
		res, err := p.Provision(ctx, tn.spec(t, 1, config, nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.ResourceIDs["namespace"] != "shared-tenants" || res.ResourceIDs["deployment"] != tn.name {
			t.Errorf("resource ids %v", res.ResourceIDs)
		}
		tn.waitState(t, running)
	}
	pol, err := c.Client.NetworkingV1().NetworkPolicies("shared-tenants").Get(ctx, "alpha", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pol.Spec.PodSelector.MatchLabels["landlord.dev/tenant-id"]; got != a.id {
		t.Errorf("alpha's policy selects %q", got)
	}
	if err := p.Destroy(ctx, a.id); err != nil {
		t.Fatal(err)
	}
	if n := countObjects(t, c, a.id); n != 0 {
		t.Errorf("%d of alpha's objects left", n)
	}
	if n := countObjects(t, c, b.id); n != 4 { // Deployment, Service, Secret, NetworkPolicy
		t.Errorf("beta has %d objects after alpha's destroy, want 4", n)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "shared-tenants", metav1.GetOptions{}); err != nil {
		t.Errorf("the shared namespace: %v", err)
	}

	// A Deployment of gamma's name that is someone else's.
	foreign := newTenant(t, p, "gamma")
	labels := map[string]string{"app": "gamma"}
	squat := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "gamma", Labels: labels}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "someone/else:1"}}}},
	}}
	if squat, err = c.Client.AppsV1().Deployments("shared-tenants").Create(ctx, squat, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = p.Provision(ctx, foreign.spec(t, 1, `{"image": "registry.example/app:1"}`, nil))
	if !errors.Is(err, provider.ErrProviderConflict) || provider.IsRetryable(err) || !strings.Contains(err.Error(), "Deployment shared-tenants/gamma") {
		t.Errorf("provision over someone else's Deployment = %v; want a terminal conflict naming it", err)
	}
	if err := p.Destroy(ctx, foreign.id); err != nil {
		t.Fatal(err)
	}

	// An object of a tenant's name that the tenant does not need (no
	// network policy) is none of its business.
	policy := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "delta"}}
	if policy, err = c.Client.NetworkingV1().NetworkPolicies("shared-tenants").Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	delta := newTenant(t, p, "delta")
	if _, err := p.Provision(ctx, delta.spec(t, 1, `{"image": "registry.example/app:1", "network_policy": "none"}`, nil)); err != nil {
		t.Errorf("provision beside someone else's object of a kind the tenant does not use: %v", err)
	}
	if err := p.Destroy(ctx, delta.id); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Client.NetworkingV1().NetworkPolicies("shared-tenants").Get(ctx, "delta", metav1.GetOptions{}); err != nil || got.UID != policy.UID {
		t.Errorf("someone else's NetworkPolicy was removed: %v", err)
	}
	if got, err := c.Client.AppsV1().Deployments("shared-tenants").Get(ctx, "gamma", metav1.GetOptions{}); err != nil || got.Generation != squat.Generation {
		t.Errorf("someone else's Deployment was changed or removed: %v", err)
	}
}

// A config that moves the tenant's objects is refused, naming where they
// are, instead of leaving them behind.
func TestPlacementCannotMove(t *testing.T) {
	t.Parallel()
	_, kubeconfig := start(t)
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "mover")
	res, err := p.Provision(context.Background(), tn.spec(t, 1, `{"image": "registry.example/app:1"}`, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Update(context.Background(), tn.id, tn.spec(t, 2, `{"image": "registry.example/app:1", "namespace_prefix": "elsewhere-"}`, res.ResourceIDs))
	if !errors.Is(err, provider.ErrInvalidSpec) || provider.IsRetryable(err) || !strings.Contains(err.Error(), "landlord-mover/mover") {
		t.Errorf("moving the tenant = %v; want a terminal ErrInvalidSpec naming where it is", err)
	}
}

// Endpoints: node ports at a node's address, a load balancer's address,
// and the Ingress host.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "endpoints-node"}}
	node, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}) })
	// The node lifecycle controller writes to new nodes too.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}}
		_, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, blockOf(kubeconfig, ""), nil)

	np := newTenant(t, p, "nodeport")
	if _, err := p.Provision(ctx, np.spec(t, 1, `{"image": "registry.example/app:1", "ports": [{"container_port": 8080, "name": "http"}], "service_type": "NodePort"}`, nil)); err != nil {
		t.Fatal(err)
	}
	st := np.waitState(t, running)
	svc, err := c.Client.CoreV1().Services("landlord-nodeport").Get(ctx, "nodeport", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nodeport.landlord-nodeport.svc.cluster.local:8080", fmt.Sprintf("192.0.2.10:%d", svc.Spec.Ports[0].NodePort)}
	if got := addresses(st); !slices.Equal(got, want) {
		t.Errorf("NodePort endpoints %v, want %v", got, want)
	}

	lb := newTenant(t, p, "public")
	if _, err := p.Provision(ctx, lb.spec(t, 1, `{"image": "registry.example/app:1", "ports": [{"container_port": 8080, "host_port": 443}], "networking": {"public": true},
		"ingress": {"host": "{name}.apps.example.com", "tls_secret": "wildcard"}}`, nil)); err != nil {
		t.Fatal(err)
	}
	lb.waitState(t, running)
	svc, err = c.Client.CoreV1().Services("landlord-public").Get(ctx, "public", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.Ports[0].Port != 443 {
		t.Fatalf("a public tenant's Service: %s, ports %+v", svc.Spec.Type, svc.Spec.Ports)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.7"}}
	if svc, err = c.Client.CoreV1().Services("landlord-public").UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st = lb.waitState(t, running)
	want = []string{"public.landlord-public.svc.cluster.local:443", "203.0.113.7:443", fmt.Sprintf("192.0.2.10:%d", svc.Spec.Ports[0].NodePort), "public.apps.example.com:443"}
	if got := addresses(st); !slices.Equal(got, want) {
		t.Errorf("public endpoints %v, want %v", got, want)
	}
}

func addresses(st *provider.ComputeStatus) []string {
	var out []string
	for _, e := range st.Endpoints {
		out = append(out, e.Address)
	}
	return out
}

// An identity the cluster's RBAC does not allow gets a terminal error that
// says so.
func TestForbiddenIsTerminal(t *testing.T) {
	t.Parallel()
	c, _ := start(t)
	ctx := context.Background()
	ns := "nobody-system"
	newNamespace(t, c, ns)
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := c.TokenKubeconfig(t, ns, "nobody")
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := unmanagedTenant(t, p, "forbidden")
	_, err := p.Provision(ctx, tn.spec(t, 1, `{"image": "registry.example/app:1"}`, nil))
	if err == nil || provider.IsRetryable(err) || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "deploy/kubernetes/rbac.yaml") {
		t.Errorf("provision without rights = %v; want a terminal error that points at the ClusterRole", err)
	}
}

// An Update that fails halfway sets back what it had changed: the Pods
// that restart meanwhile get the old secret under the old template.
func TestFailedUpdateIsTakenBack(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	p := newProvider(t, blockOf(kubeconfig, ""), nil)
	tn := newTenant(t, p, "takeback")
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 80}], "secrets": {"TOKEN": "one"}}`
	res, err := p.Provision(ctx, tn.spec(t, 1, config, nil))
	if err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	before, err := c.Client.AppsV1().Deployments("landlord-takeback").Get(ctx, "takeback", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The Ingress, applied last, is refused: its annotations are larger than
	// Kubernetes allows.
	huge := strings.Repeat("x", 300*1024)
	broken := fmt.Sprintf(`{"image": "registry.example/app:2", "ports": [{"container_port": 80}], "secrets": {"TOKEN": "two"},
		"ingress": {"host": "{name}.example.com", "annotations": {"example.com/huge": %q}}}`, huge)
	_, err = p.Update(ctx, tn.id, tn.spec(t, 2, broken, res.ResourceIDs))
	if !errors.Is(err, provider.ErrInvalidSpec) || provider.IsRetryable(err) || !strings.Contains(err.Error(), "Ingress landlord-takeback/takeback") {
		t.Fatalf("update with an Ingress the API server refuses = %v", err)
	}
	after, err := c.Client.AppsV1().Deployments("landlord-takeback").Get(ctx, "takeback", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := after.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:1" ||
		after.Spec.Template.Annotations["landlord.dev/template-hash"] != before.Spec.Template.Annotations["landlord.dev/template-hash"] {
		t.Errorf("after the failed update the Deployment runs %s with another template", img)
	}
	secret, err := c.Client.CoreV1().Secrets("landlord-takeback").Get(ctx, "takeback-secrets", metav1.GetOptions{})
	if err != nil || string(secret.Data["app.TOKEN"]) != "one" {
		t.Errorf("after the failed update the Secret holds %q, %v; want the old value back", secret.Data["app.TOKEN"], err)
	}
	if res, err := p.Update(ctx, tn.id, tn.spec(t, 3, config, res.ResourceIDs)); err != nil || !res.NoChanges() {
		t.Errorf("the old spec after the failed update: changes %v, %v", res, err)
	}
}

// Image pull secrets are copied into a namespace of the tenant's own from
// the block's pull_secrets_namespace, used by the Pods, and deleted when
// the config drops them.
func TestPullSecretsAreCopied(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	newNamespace(t, c, "registry-credentials")
	for _, name := range []string{"regcred", "othercred"} {
		src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example":{"auth":"` + name + `"}}}`)}}
		if _, err := c.Client.CoreV1().Secrets("registry-credentials").Create(ctx, src, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := newProvider(t, blockOf(kubeconfig, `, "pull_secrets_namespace": "registry-credentials"`), nil)
	tn := newTenant(t, p, "pulls")
	res, err := p.Provision(ctx, tn.spec(t, 1, `{"image": "registry.example/app:1", "image_pull_secrets": ["regcred", "othercred"]}`, nil))
	if err != nil {
		t.Fatal(err)
	}
	tn.waitState(t, running)
	for _, name := range []string{"regcred", "othercred"} {
		copied, err := c.Client.CoreV1().Secrets("landlord-pulls").Get(ctx, name, metav1.GetOptions{})
		if err != nil || !strings.Contains(string(copied.Data[corev1.DockerConfigJsonKey]), name) {
			t.Errorf("the copy of %s: %v", name, err)
		}
	}
	dep, err := c.Client.AppsV1().Deployments("landlord-pulls").Get(ctx, "pulls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.ImagePullSecrets; len(got) != 2 || got[0].Name != "regcred" {
		t.Errorf("the Pods pull with %v", got)
	}
	if _, err := p.Update(ctx, tn.id, tn.spec(t, 2, `{"image": "registry.example/app:1", "image_pull_secrets": ["regcred"]}`, res.ResourceIDs)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Secrets("landlord-pulls").Get(ctx, "othercred", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a pull secret dropped from the config is still copied: %v", err)
	}
	if _, err := c.Client.CoreV1().Secrets("landlord-pulls").Get(ctx, "regcred", metav1.GetOptions{}); err != nil {
		t.Errorf("the pull secret still named: %v", err)
	}
	_, err = p.Update(ctx, tn.id, tn.spec(t, 3, `{"image": "registry.example/app:1", "image_pull_secrets": ["missing"]}`, res.ResourceIDs))
	if !errors.Is(err, provider.ErrInvalidSpec) || !strings.Contains(err.Error(), "registry-credentials/missing does not exist") {
		t.Errorf("a pull secret that does not exist = %v", err)
	}
}
