package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// conformanceConfig is variant v of the suite's tenant config: every
// object landlord writes (a namespace of the tenant's own, a quota, a
// network policy, a Secret, once the suite adds a secret, a Service, an
// Ingress, the Deployment). Its images are the demo image on the real
// node (conformanceImages); its CPU request is small enough for the
// suite's tenants to fit on a two-core node at once.
func conformanceConfig(v int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": "registry.example/app:1.%d", "ports": [{"container_port": 8080}], "env": {"GREETING": "v%d"},
		"resources": {"cpu_millicores": 20, "memory_mib": 128}, "resource_quota": {"pods": "10"}, "ingress": {"host": "{name}.apps.example.com"}}`, v, v))
}

var invalidConfigs = []providertest.InvalidConfig{
	{Name: "landlord's label", Config: json.RawMessage(`{"image": "app:1", "labels": {"landlord.dev/tenant-id": "x"}}`), Pointer: "/labels/landlord.dev~1tenant-id"},
	{Name: "quantity", Config: json.RawMessage(`{"image": "app:1", "resource_quota": {"requests.cpu": "lots"}}`), Pointer: "/resource_quota/requests.cpu"},
	{Name: "unknown context", Config: json.RawMessage(`{"image": "app:1", "context": "elsewhere"}`), Pointer: "/context"},
	{Name: "ingress without ports", Config: json.RawMessage(`{"image": "app:1", "ingress": {"host": "{name}.apps.example.com"}}`), Pointer: "/ingress"},
	{Name: "port name", Config: json.RawMessage(`{"image": "app:1", "ports": [{"container_port": 80, "name": "80"}]}`), Pointer: "/ports/0/name"},
	{Name: "scaling range upside down", Config: json.RawMessage(`{"image": "app:1", "replicas": {"min": 3, "max": 2}}`), Pointer: "/replicas"},
	{Name: "scaling range without max", Config: json.RawMessage(`{"image": "app:1", "replicas": {"min": 3}}`), Pointer: "/replicas"},
	{Name: "quota in a shared namespace", Config: json.RawMessage(`{"image": "app:1", "namespace_mode": "shared", "resource_quota": {"pods": "3"}}`), Pointer: "/resource_quota"},
}

// conformanceNamespace is the namespace the suite's tenants get in
// namespace_mode per-tenant: the suite names them conf-<last 8 of the id>.
func conformanceNamespace(tenantID string) string {
	return "landlord-conf-" + tenantID[len(tenantID)-8:]
}

// TestConformance runs the suite on the real node: the tenants' Pods run,
// their endpoints (the Service's cluster DNS name, through kube-proxy)
// answer, and the tampers change what runs.
func TestConformance(t *testing.T) {
	c, kubeconfig := startNode(t)
	logs := &providertest.LogBuffer{}
	block := fmt.Sprintf(`{"kubeconfig": %q}`, kubeconfig)
	providertest.Run(t, providertest.Harness{
		Provider:       newProvider(t, block, logs),
		Config:         conformanceConfig,
		InvalidConfigs: invalidConfigs,
		Disrupt: func(t *testing.T, tenantID string) {
			name := "conf-" + tenantID[len(tenantID)-8:]
			if err := c.Client.AppsV1().Deployments(conformanceNamespace(tenantID)).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		Squat:          squatNamespace(c),
		Tampers:        tampers(c),
		CountResources: func(t *testing.T, tenantID string) int { return countObjects(t, c, tenantID) },
		Restart:        func(t *testing.T) provider.Provider { return newProvider(t, block, logs) },
		Logs:           logs.Bytes,
		DialEndpoints:  true,
		Dial: func(ctx context.Context, address string) (net.Conn, error) {
			conn, err := c.Dial(ctx, address)
			if errors.Is(err, kubetest.ErrOutsideCluster) {
				// The Ingress host: no ingress controller or DNS here.
				err = fmt.Errorf("%w: %w", providertest.ErrUnreachable, err)
			}
			return conn, err
		},
		ReadyTimeout: time.Minute,
		Parallel:     20,
	})
}

// conformanceNames are the namespace and object name of a suite tenant.
func conformanceNames(tenantID string) (namespace, name string) {
	return conformanceNamespace(tenantID), "conf-" + tenantID[len(tenantID)-8:]
}

// tampers change a running suite tenant as the admin would with kubectl,
// through the same API requests.
func tampers(c *kubetest.Cluster) []providertest.Tamper {
	ctx := context.Background()
	patch := func(t *testing.T, tenantID string, pt types.PatchType, body, manager string, subresource ...string) {
		t.Helper()
		ns, name := conformanceNames(tenantID)
		if _, err := c.Client.AppsV1().Deployments(ns).Patch(ctx, name, pt, []byte(body), metav1.PatchOptions{FieldManager: manager}, subresource...); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(kind string, del func(ns, name string) error) func(t *testing.T, tenantID string) {
		return func(t *testing.T, tenantID string) {
			t.Helper()
			ns, name := conformanceNames(tenantID)
			if kind == "Secret" {
				name += "-secrets"
			}
			if err := del(ns, name); err != nil {
				t.Fatalf("delete %s %s/%s: %v", kind, ns, name, err)
			}
		}
	}
	core, net := c.Client.CoreV1(), c.Client.NetworkingV1()
	opts := metav1.DeleteOptions{}
	return []providertest.Tamper{
		// kubectl scale deployment/NAME --replicas=5
		{Name: "scale", Path: "deployment/replicas", Do: func(t *testing.T, id string) {
			patch(t, id, types.MergePatchType, `{"spec":{"replicas":5}}`, "kubectl-scale", "scale")
		}},
		// kubectl set image deployment/NAME app=127.0.0.1:1/app:1.0-hacked (a
		// registry on the machine, where nothing answers: the node's pull
		// fails there, never off the machine)
		{Name: "image", Path: "containers/app/image", Do: func(t *testing.T, id string) {
			patch(t, id, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"127.0.0.1:1/app:1.0-hacked"}]}}}}`, "kubectl-set")
		}},
		// kubectl set env deployment/NAME GREETING=hacked
		{Name: "env", Path: "containers/app/env/GREETING", Do: func(t *testing.T, id string) {
			patch(t, id, types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"GREETING","value":"hacked"}]}]}}}}`, "kubectl-set")
		}},
		// kubectl delete service/NAME, secret/NAME-secrets, networkpolicy/NAME, resourcequota/NAME, ingress/NAME
		{Name: "delete-service", Path: "service", Do: remove("Service", func(ns, name string) error { return core.Services(ns).Delete(ctx, name, opts) })},
		{Name: "delete-secret", Path: "secret", Do: remove("Secret", func(ns, name string) error { return core.Secrets(ns).Delete(ctx, name, opts) })},
		{Name: "delete-networkpolicy", Path: "networkpolicy", Do: remove("NetworkPolicy", func(ns, name string) error { return net.NetworkPolicies(ns).Delete(ctx, name, opts) })},
		{Name: "delete-resourcequota", Path: "resourcequota", Do: remove("ResourceQuota", func(ns, name string) error { return core.ResourceQuotas(ns).Delete(ctx, name, opts) })},
		{Name: "delete-ingress", Path: "ingress", Do: remove("Ingress", func(ns, name string) error { return net.Ingresses(ns).Delete(ctx, name, opts) })},
		// kubectl delete pod NAME-xxxxx: the ReplicaSet makes another, which
		// the node starts; only the workload's recovery is checked. The
		// provider watches what it writes, not Pods: it hears of this when
		// the Deployment's status follows the ReplicaSet's, which took over
		// 5s once on a CI run with the other packages' tests beside it.
		{Name: "delete-pod", NotifyWithin: time.Minute, Do: func(t *testing.T, id string) {
			ns, _ := conformanceNames(id)
			pods, err := core.Pods(ns).List(ctx, tenantSelector(id))
			if err != nil || len(pods.Items) == 0 {
				t.Fatalf("the tenant's Pods: %d, %v", len(pods.Items), err)
			}
			if err := core.Pods(ns).Delete(ctx, pods.Items[0].Name, opts); err != nil {
				t.Fatal(err)
			}
		}},
	}
}

// squatNamespace takes, as the admin, the namespace a tenant would get.
func squatNamespace(c *kubetest.Cluster) func(t *testing.T, tenantName string) func(t *testing.T) {
	return func(t *testing.T, tenantName string) func(t *testing.T) {
		ctx := context.Background()
		name := "landlord-" + tenantName
		ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "payments"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T) {
			got, err := c.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				t.Errorf("the squatting namespace %s: %v", name, err)
			case got.DeletionTimestamp != nil || got.ResourceVersion != ns.ResourceVersion:
				t.Errorf("the squatting namespace %s was changed: %+v", name, got.ObjectMeta)
			}
			if err := c.Client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
	}
}
