package kubernetes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestCrashWhileProvisioning kills `landlord serve` with SIGKILL while it
// applies tenants' objects (some tenants have them, some not yet), starts
// it again on the same database, and checks that every tenant ends ready
// with exactly its objects, none twice and none left over, and that delete
// removes them all.
func TestCrashWhileProvisioning(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	c, kubeconfig := start(t)
	l := startServe(t, kubeconfig, "workers: 4", "lease_ttl: 2s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()

	// The node holds the tenants' Pods, so that none is ready before the
	// kill: what is killed is landlord applying objects.
	const n = 10
	var release []func()
	for i := range n {
		release = append(release, c.Node.Hold(fmt.Sprintf("landlord-crash-%02d", i)))
	}
	ids := make([]string, n)
	for i := range n {
		ids[i] = servetest.CreateTenant(ctx, t, tenants, fmt.Sprintf("crash-%02d", i), appConfig(fmt.Sprintf("registry.example/app:1.%d", i))).ID
	}
	if t.Failed() {
		t.FailNow()
	}
	poll.Until(t, "some tenants' Deployments applied", time.Minute, func() (bool, string) {
		deps, err := c.Client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=landlord"})
		if err != nil {
			t.Fatal(err)
		}
		if len(deps.Items) == n {
			t.Fatal("every tenant was applied before landlord serve could be killed")
		}
		if len(deps.Items) > 0 {
			t.Logf("killing landlord serve with %d of %d tenants' Deployments applied", len(deps.Items), n)
			return true, ""
		}
		return false, "no Deployment applied"
	})
	l.Kill()
	l.Start()
	for _, r := range release {
		r()
	}
	waitAll(ctx, t, tenants, ids, llclient.UntilReady)
	for i, id := range ids {
		// Namespace, NetworkPolicy, Deployment and Service.
		if got := countObjects(t, c, id); got != 4 {
			t.Errorf("tenant %d has %d objects after the crash, want 4", i, got)
		}
	}
	parallel(n, func(i int) {
		if _, err := tenants.Delete(ctx, ids[i], llclient.DeleteOptions{}); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
	waitAll(ctx, t, tenants, ids, llclient.UntilDeleted)
	for i, id := range ids {
		if got := countObjects(t, c, id); got != 0 {
			t.Errorf("tenant %d has %d objects after delete", i, got)
		}
	}
}
