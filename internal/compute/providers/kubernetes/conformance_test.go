package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/compute/providertest"
)

// conformanceConfig is variant v of the suite's tenant config.
func conformanceConfig(v int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": "registry.example/app:1.%d", "ports": [{"container_port": 8080}], "env": {"GREETING": "v%d"},
		"resources": {"cpu_millicores": 250, "memory_mib": 128}}`, v, v))
}

var invalidConfigs = []providertest.InvalidConfig{
	{Name: "landlord's label", Config: json.RawMessage(`{"image": "app:1", "labels": {"landlord.dev/tenant-id": "x"}}`), Pointer: "/labels/landlord.dev~1tenant-id"},
	{Name: "quantity", Config: json.RawMessage(`{"image": "app:1", "resource_quota": {"requests.cpu": "lots"}}`), Pointer: "/resource_quota/requests.cpu"},
	{Name: "unknown context", Config: json.RawMessage(`{"image": "app:1", "context": "elsewhere"}`), Pointer: "/context"},
	{Name: "ingress without ports", Config: json.RawMessage(`{"image": "app:1", "ingress": {"host": "{name}.apps.example.com"}}`), Pointer: "/ingress"},
	{Name: "port name", Config: json.RawMessage(`{"image": "app:1", "ports": [{"container_port": 80, "name": "80"}]}`), Pointer: "/ports/0/name"},
	{Name: "quota in a shared namespace", Config: json.RawMessage(`{"image": "app:1", "namespace_mode": "shared", "resource_quota": {"pods": "3"}}`), Pointer: "/resource_quota"},
}

// conformanceNamespace is the namespace the suite's tenants get in
// namespace_mode per-tenant: the suite names them conf-<last 8 of the id>.
func conformanceNamespace(tenantID string) string {
	return "landlord-conf-" + tenantID[len(tenantID)-8:]
}

func TestConformance(t *testing.T) {
	c, kubeconfig := start(t)
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
		CountResources: func(t *testing.T, tenantID string) int { return countObjects(t, c, tenantID) },
		Restart:        func(t *testing.T) compute.Provider { return newProvider(t, block, logs) },
		Logs:           logs.Bytes,
		ReadyTimeout:   30 * time.Second,
		Parallel:       20,
	})
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
