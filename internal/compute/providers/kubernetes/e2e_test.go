package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEndThroughServe drives `landlord serve` with a kubernetes block,
// as landlord's service account, against the real API server, through the
// public client: create (ready when the Deployment becomes available,
// heard through the watch: the controller's poll is an hour), a new image
// (a new ReplicaSet), an image that cannot be pulled (its reason in the
// tenant's message), the Deployment deleted behind landlord's back
// (repaired), kubectl scale, kubectl set image and kubectl delete
// svc,netpol on the ready tenant (each put back within seconds of the
// watch event, as the resync is an hour, with drift_detected in the
// tenant's history and its endpoints those of the Service), and delete
// (nothing labelled with the tenant is left).
func TestEndToEndThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	c, kubeconfig := start(t)
	l := startServe(t, kubeconfig, "workers: 4", "poll_interval: 1h", "resync: 1h", "lease_ttl: 2s")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tenants := l.Client().Tenants()

	// Create, with the node held back so that the tenant waits on its Pods.
	resume := c.Node.Hold("landlord-e2e-app")
	app := servetest.CreateTenant(ctx, t, tenants, "e2e-app", appConfig("registry.example/app:1.0"))
	if t.Failed() {
		t.FailNow()
	}
	waitDeployment(ctx, t, c, "landlord-e2e-app", "e2e-app", func(*appsv1.Deployment) bool { return true })
	if _, err := tenants.Wait(ctx, app.ID, func(tn llclient.Tenant) (bool, error) {
		return tn.Status == llclient.StatusProvisioning && strings.Contains(tn.StatusMessage, "waiting for the workload"), nil
	}, nil); err != nil {
		t.Fatalf("wait for the tenant to wait on its Pods: %v", err)
	}
	resume()
	available := waitDeployment(ctx, t, c, "landlord-e2e-app", "e2e-app", isAvailable)
	availableAt := time.Now()
	tn, err := tenants.Wait(ctx, app.ID, llclient.UntilReady, nil)
	if err != nil {
		t.Fatalf("wait ready: %v", err)
	}
	t.Logf("tenant ready %v after its Deployment became available (as this test's watch saw it)", readyAt(ctx, t, tenants, app.ID, tn.Generation).Sub(availableAt).Round(time.Millisecond))
	if want := "e2e-app.landlord-e2e-app.svc.cluster.local:8080"; len(tn.Endpoints) != 1 || tn.Endpoints[0].Address != want {
		t.Errorf("endpoints %+v, want %s", tn.Endpoints, want)
	}
	if tn.ResourceIDs["namespace"] != "landlord-e2e-app" || tn.ResourceIDs["deployment"] != "e2e-app" {
		t.Errorf("resource ids %v", tn.ResourceIDs)
	}

	// A new image: a new ReplicaSet runs it.
	set, err := tenants.Replace(ctx, app.ID, llclient.ReplaceTenantRequest{ComputeConfig: appConfig("registry.example/app:2.0")}, llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	waitReady(ctx, t, tenants, app.ID, set.Generation)
	rss, err := c.Client.AppsV1().ReplicaSets("landlord-e2e-app").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]int32{}
	for _, rs := range rss.Items {
		images[rs.Spec.Template.Spec.Containers[0].Image] = *rs.Spec.Replicas
	}
	if len(rss.Items) != 2 || images["registry.example/app:2.0"] != 1 || images["registry.example/app:1.0"] != 0 {
		t.Errorf("after set the ReplicaSets run %v (image → replicas), want a new one for 2.0 and the old scaled to 0", images)
	}

	// An image that cannot be pulled: the kubelet's reason reaches the
	// tenant's message.
	broken := servetest.CreateTenant(ctx, t, tenants, "e2e-broken", appConfig("registry.example/unpullable:1.0"))
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	got, err := tenants.Wait(waitCtx, broken.ID, func(tn llclient.Tenant) (bool, error) {
		return strings.Contains(tn.StatusMessage, "ImagePullBackOff"), nil
	}, nil)
	waitCancel()
	if err != nil {
		t.Errorf("the message of a tenant whose image cannot be pulled never named ImagePullBackOff: %v", err)
	} else if !strings.Contains(got.StatusMessage, "registry.example/unpullable:1.0") || got.Status != llclient.StatusProvisioning {
		t.Errorf("tenant whose image cannot be pulled: %s %q", got.Status, got.StatusMessage)
	}

	// The Deployment deleted behind landlord's back comes back.
	if err := c.Client.AppsV1().Deployments("landlord-e2e-app").Delete(ctx, "e2e-app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	repaired := waitDeployment(ctx, t, c, "landlord-e2e-app", "e2e-app", func(d *appsv1.Deployment) bool { return d.UID != available.UID && isAvailable(d) })
	if img := repaired.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:2.0" {
		t.Errorf("the repaired Deployment runs %s", img)
	}
	if _, err := tenants.Wait(ctx, app.ID, llclient.UntilReady, nil); err != nil {
		t.Errorf("after the repair: %v", err)
	}

	// Changes made with kubectl to the ready tenant are put back.
	for _, tm := range kubectlTampers(c, "landlord-e2e-app", "e2e-app", "registry.example/app:2.0") {
		putBack(ctx, t, c, tenants, app.ID, tm)
	}

	// Delete: nothing labelled with either tenant is left.
	ids := []string{app.ID, broken.ID}
	parallel(len(ids), func(i int) {
		if _, err := tenants.Delete(ctx, ids[i], llclient.DeleteOptions{}); err != nil {
			t.Errorf("delete %s: %v", ids[i], err)
		}
	})
	waitAll(ctx, t, tenants, ids, llclient.UntilDeleted)
	for _, id := range ids {
		if n := countObjects(t, c, id); n != 0 {
			t.Errorf("tenant %s: %d objects left", id, n)
		}
		pods, err := c.Client.CoreV1().Pods("").List(ctx, tenantSelector(id))
		if err != nil || len(pods.Items) != 0 {
			t.Errorf("tenant %s: pods left: %v %v", id, len(pods.Items), err)
		}
	}
	reportRequests(t, c)
}

// kubectlTamper is a change made to a tenant as kubectl makes it, and how
// to tell it was put back.
type kubectlTamper struct {
	name string
	// paths are the drift paths the tenant's history must name.
	paths []string
	do    func(ctx context.Context) error
	back  func(ctx context.Context) (bool, string)
}

// kubectlTampers are kubectl scale, kubectl set image and kubectl delete
// svc,netpol on the tenant whose objects are name in ns, which runs image.
func kubectlTampers(c *kubetest.Cluster, ns, name, image string) []kubectlTamper {
	deployments, services, policies := c.Client.AppsV1().Deployments(ns), c.Client.CoreV1().Services(ns), c.Client.NetworkingV1().NetworkPolicies(ns)
	deployment := func(ctx context.Context) (*appsv1.Deployment, string) {
		d, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		return d, fmt.Sprintf("replicas %d, image %s", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
	}
	var svcUID, policyUID types.UID
	return []kubectlTamper{
		{name: "kubectl scale --replicas=5", paths: []string{"deployment/replicas"},
			do: func(ctx context.Context) error {
				_, err := deployments.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "kubectl-scale"}, "scale")
				return err
			},
			back: func(ctx context.Context) (bool, string) {
				d, got := deployment(ctx)
				return d != nil && *d.Spec.Replicas == 1, got
			}},
		{name: "kubectl set image app=registry.example/app:hacked", paths: []string{"containers/app/image"},
			do: func(ctx context.Context) error {
				_, err := deployments.Patch(ctx, name, types.StrategicMergePatchType,
					[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:hacked"}]}}}}`), metav1.PatchOptions{FieldManager: "kubectl-set"})
				return err
			},
			back: func(ctx context.Context) (bool, string) {
				d, got := deployment(ctx)
				return d != nil && d.Spec.Template.Spec.Containers[0].Image == image, got
			}},
		{name: "kubectl delete svc,netpol", paths: []string{"service", "networkpolicy"},
			do: func(ctx context.Context) error {
				svc, err := services.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				pol, err := policies.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				svcUID, policyUID = svc.UID, pol.UID
				if err := services.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				return policies.Delete(ctx, name, metav1.DeleteOptions{})
			},
			back: func(ctx context.Context) (bool, string) {
				svc, err := services.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, "Service: " + err.Error()
				}
				pol, err := policies.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, "NetworkPolicy: " + err.Error()
				}
				return svc.UID != svcUID && pol.UID != policyUID, "the same objects"
			}},
	}
}

// putBack makes the change and waits until it is put back, the tenant's
// history has drift_detected naming its paths (in one event or more),
// then a return to ready, and the tenant's endpoints are the Service's.
func putBack(ctx context.Context, t *testing.T, c *kubetest.Cluster, tenants *llclient.Tenants, id string, tm kubectlTamper) {
	t.Helper()
	start := time.Now()
	if err := tm.do(ctx); err != nil {
		t.Fatalf("%s: %v", tm.name, err)
	}
	eventually(t, tm.name+" put back", func() (bool, string) { return tm.back(ctx) })
	took := time.Since(start)
	eventually(t, tm.name+": drift_detected, then ready, in the history", func() (bool, string) {
		var drifts, seen []string
		readyAfter := false
		for ev, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
			if err != nil {
				return false, err.Error()
			}
			if ev.Time.Before(start) {
				continue
			}
			seen = append(seen, ev.Type+" "+ev.To+" "+ev.Message)
			switch {
			case ev.Type == "drift_detected":
				drifts, readyAfter = append(drifts, ev.Message), false
			case len(drifts) > 0 && ev.To == llclient.StatusReady:
				readyAfter = true
			}
		}
		// One change of several objects (delete svc,netpol) may be
		// found, and repaired whole, before its last object is gone:
		// the first path is named, and tm.back saw every object back.
		// The conformance suite's tamper hooks name each path alone.
		all := strings.Join(drifts, "; ")
		if !slices.ContainsFunc(tm.paths, func(p string) bool { return strings.Contains(all, p) }) {
			return false, fmt.Sprintf("no drift_detected names any of %s: %s", tm.paths, strings.Join(seen, " | "))
		}
		return readyAfter, strings.Join(seen, " | ")
	})
	tn, err := tenants.Get(ctx, id, llclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns, name := tn.ResourceIDs["namespace"], tn.ResourceIDs["deployment"]
	svc, err := c.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s.%s.svc.cluster.local:%d", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
	if tn.Status != llclient.StatusReady || len(tn.Endpoints) != 1 || tn.Endpoints[0].Address != want {
		t.Errorf("after %s the tenant is %s at %+v, want ready at the Service's %s", tm.name, tn.Status, tn.Endpoints, want)
	}
	t.Logf("%s: put back %s after the change", tm.name, took.Round(time.Millisecond))
}

// reportRequests logs the API requests landlord made, by verb and resource.
func reportRequests(t *testing.T, c *kubetest.Cluster) {
	reqs, err := c.Requests()
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]int{}
	for _, r := range reqs {
		byKind[r.Verb+" "+r.Resource]++
	}
	t.Logf("landlord's API requests: %d in all: %v", len(reqs), byKind)
}

// isAvailable reports whether the Deployment's rollout has finished with
// every replica available.
func isAvailable(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Spec.Replicas != nil &&
		d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas
}

// waitDeployment watches the Deployment until ok holds.
func waitDeployment(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns, name string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	for ctx.Err() == nil {
		w, err := c.Client.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		if err != nil {
			t.Fatalf("watch Deployment %s/%s: %v", ns, name, err)
		}
		for ev := range w.ResultChan() {
			if d, isDep := ev.Object.(*appsv1.Deployment); isDep && ev.Type != watch.Deleted && ok(d) {
				w.Stop()
				return d
			}
		}
	}
	t.Fatalf("Deployment %s/%s: %v", ns, name, ctx.Err())
	return nil
}

// readyAt is when the tenant became ready at generation, from its history.
func readyAt(ctx context.Context, t testing.TB, tenants *llclient.Tenants, id string, generation int64) time.Time {
	t.Helper()
	var at time.Time
	for ev, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.To == llclient.StatusReady && ev.Generation == generation {
			at = ev.Time
		}
	}
	return at
}

// appConfig is a tenant's compute_config running image on port 8080.
func appConfig(image string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": %q, "ports": [{"container_port": 8080}]}`, image))
}
