package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEndOnANode drives `landlord serve` against the cluster with a
// real node, through the public client, as landlord's service account:
// the demo image's Pod answers on every endpoint landlord reports with
// the tenant's environment; `set` rolls a new ReplicaSet whose Pod
// answers the new value; a secret reaches the process's environment and
// rotating it rolls the Pods; the kubelet's own reasons reach the
// tenant's message (an image the node does not have and cannot pull, a
// readiness probe that fails, a container that crashes); delete leaves no
// container on the node. It also times create → ready against kubectl
// apply of the same objects by hand, in the same run.
func TestEndToEndOnANode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pods on a real node")
	}
	c, kubeconfig := startNode(t)
	l := startServe(t, kubeconfig, "workers: 4", "poll_interval: 2s")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()
	// The demo page of tenant name (its first argument, after flags), on
	// a node port.
	web := func(name, extra string, flags ...string) json.RawMessage {
		argv, _ := json.Marshal(append(flags, name))
		return json.RawMessage(fmt.Sprintf(`{"image": %q, "args": %s, "ports": [{"container_port": 8080}], "service_type": "NodePort"%s}`, demoImage, argv, extra))
	}

	// Create: the Pod answers on every endpoint, with the tenant's env.
	began := time.Now()
	app := servetest.CreateTenant(ctx, t, tenants, "node-app", web("node-app", `, "env": {"DEMO_MESSAGE": "first"}`))
	if t.Failed() {
		t.FailNow()
	}
	tn := waitReady(ctx, t, tenants, app.ID, app.Generation)
	landlordTook := readyAt(ctx, t, tenants, app.ID, tn.Generation).Sub(began)
	const ns = "landlord-node-app"
	if len(tn.Endpoints) != 2 || !strings.HasSuffix(tn.Endpoints[0].Address, ".svc."+kubetest.ClusterDomain+":8080") || !strings.HasPrefix(tn.Endpoints[1].Address, c.Kubelet.IP+":") {
		t.Errorf("endpoints %+v, want the Service's cluster DNS name and its node port", tn.Endpoints)
	}
	pageSays(ctx, t, c, tn, "landlord demo: tenant node-app", "message:  first")

	// The same objects applied by hand with kubectl, in a namespace of
	// their own: how long to an available Deployment.
	kubectlTook := kubectlApply(ctx, t, c, ns, "by-hand")
	t.Logf("create → ready: landlord %v (the tenant's history), kubectl apply of the same objects %v (kubectl wait --for=condition=Available)",
		landlordTook.Round(time.Millisecond), kubectlTook.Round(time.Millisecond))

	// set: a new ReplicaSet, whose Pod answers the new value.
	tn = replace(ctx, t, tenants, tn, web("node-app", `, "env": {"DEMO_MESSAGE": "second"}`))
	pageSays(ctx, t, c, tn, "message:  second")
	rss, err := c.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var replicas []int32
	for _, rs := range rss.Items {
		replicas = append(replicas, *rs.Spec.Replicas)
	}
	if slices.Sort(replicas); !slices.Equal(replicas, []int32{0, 1}) {
		t.Errorf("after set the ReplicaSets have %v replicas, want a new one with 1 and the old one scaled to 0", replicas)
	}

	// A secret reaches the process's environment (the page shows
	// DEMO_MESSAGE's value); rotating it rolls the Pods.
	tn = replace(ctx, t, tenants, tn, web("node-app", `, "secrets": {"DEMO_MESSAGE": "the first secret"}`))
	pageSays(ctx, t, c, tn, "message:  the first secret")
	before := podNames(ctx, t, c, ns, app.ID)
	tn = replace(ctx, t, tenants, tn, web("node-app", `, "secrets": {"DEMO_MESSAGE": "the rotated secret"}`))
	pageSays(ctx, t, c, tn, "message:  the rotated secret")
	if after := podNames(ctx, t, c, ns, app.ID); len(after) != 1 || slices.Contains(before, after[0]) {
		t.Errorf("the secret's rotation did not roll the Pods: before %v, after %v", before, after)
	}
	if strings.Contains(l.Log(), "the rotated secret") || strings.Contains(l.Log(), "the first secret") {
		t.Error("landlord's log holds the tenant's secret")
	}

	// The kubelet's reasons reach the tenant's message.
	// A port that cannot be: the demo server exits at once.
	crash := []string{"--listen", ":99999"}
	exit := demoExitCode(t, crash...)
	failing := map[string]struct {
		config json.RawMessage
		says   []string
	}{
		// No registry answers on 127.0.0.1:1: the pull fails on the machine.
		"node-absent": {json.RawMessage(`{"image": "127.0.0.1:1/landlord-test/absent:1", "ports": [{"container_port": 8080}]}`),
			[]string{"127.0.0.1:1/landlord-test/absent:1", "ImagePull"}},
		"node-probe": {web("node-probe", `, "health_check": {"http": {"path": "/missing", "port": 8080}, "interval": "1s"}`),
			[]string{"Readiness probe failed", "404"}},
		"node-crash": {web("node-crash", "", crash...),
			[]string{"CrashLoopBackOff", fmt.Sprintf("exited with code %d", exit)}},
	}
	ids := []string{app.ID}
	created := map[string]string{} // name → id
	for name, f := range failing {
		tn := servetest.CreateTenant(ctx, t, tenants, name, f.config)
		ids, created[name] = append(ids, tn.ID), tn.ID
	}
	for name, f := range failing {
		got, err := tenants.Wait(ctx, created[name], func(tn llclient.Tenant) (bool, error) {
			return !slices.ContainsFunc(f.says, func(s string) bool { return !strings.Contains(tn.StatusMessage, s) }), nil
		}, nil)
		if err != nil {
			t.Errorf("tenant %s: the message never said %q: %v\n%s", name, f.says, err, podStatuses(ctx, c, "landlord-"+name))
			continue
		}
		if got.Status == llclient.StatusReady {
			t.Errorf("tenant %s is ready: %q", name, got.StatusMessage)
		}
		t.Logf("tenant %s: %s: %s", name, got.Status, got.StatusMessage)
	}

	// Delete: no container of theirs is left on the node.
	for _, id := range ids {
		if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
			t.Errorf("delete %s: %v", id, err)
		}
	}
	waitAll(ctx, t, tenants, ids, llclient.UntilDeleted)
	for _, name := range append([]string{"node-app"}, "node-absent", "node-probe", "node-crash") {
		ns := "landlord-" + name
		poll.Until(t, "no container of namespace "+ns+" on the node", 2*time.Minute, func() (bool, string) {
			left, err := c.Kubelet.Containers(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			return len(left) == 0, fmt.Sprintf("containers %v", left)
		})
	}
}

// The test node itself (kubetest.StartNode): it runs a Pod of the sandbox
// image (which is on the node: it pulls nothing), answers a Pod whose
// image is not there with the kubelet's own pull error, a Pod's address
// is reachable from here, and a namespace's deletion takes its containers
// off the node. One test binary has the machine's node at a time, so the
// node's own test runs here, with the provider's.
func TestNodeRunsPods(t *testing.T) {
	c := kubetest.StartNode(t)
	ctx := context.Background()
	ns := "kubetest-real-node"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No registry answers on 127.0.0.1:1: the pull fails on the machine.
	for name, image := range map[string]string{"runs": kubetest.PauseImage, "absent": "127.0.0.1:1/kubetest/absent:1"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]func(*corev1.Pod) bool{
		"runs": func(p *corev1.Pod) bool {
			return p.Spec.NodeName == c.Kubelet.Name && p.Status.PodIP != "" && p.Status.ContainerStatuses[0].Ready
		},
		"absent": func(p *corev1.Pod) bool {
			w := p.Status.ContainerStatuses[0].State.Waiting
			return w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") && strings.Contains(w.Message, "127.0.0.1:1")
		},
	}
	poll.Until(t, "every pod in the state wanted", time.Minute, func() (bool, string) {
		for name, ok := range want {
			pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pod.Status.ContainerStatuses) != 1 || !ok(pod) {
				return false, fmt.Sprintf("pod %s: node %q, status %+v", name, pod.Spec.NodeName, pod.Status)
			}
		}
		return true, ""
	})
	pod, err := c.Client.CoreV1().Pods(ns).Get(ctx, "runs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The pause container listens on nothing: a refused connection is the
	// Pod's own answer, a timeout would be the network's.
	conn, err := c.Dial(ctx, net.JoinHostPort(pod.Status.PodIP, "9"))
	if err == nil {
		conn.Close()
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the Pod's address %s: %v, want a refused connection", pod.Status.PodIP, err)
	}
	if ids, err := c.Kubelet.Containers(ctx, ns); err != nil || len(ids) != 1 {
		t.Errorf("containers on the node in %s: %v, %v; want the one of Pod runs", ns, ids, err)
	}
	if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the namespace's containers gone from the node", 2*time.Minute, func() (bool, string) {
		ids, err := c.Kubelet.Containers(ctx, ns)
		return err == nil && len(ids) == 0, fmt.Sprintf("%v %v", ids, err)
	})
}

// waitReady waits until the tenant is ready at generation or later.
func waitReady(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string, generation int64) *llclient.Tenant {
	t.Helper()
	tn, err := tenants.Wait(ctx, id, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil)
	if err != nil {
		t.Fatalf("wait ready at generation %d: %v", generation, err)
	}
	return tn
}

// replace sets the tenant's config and waits until it is ready with it.
func replace(ctx context.Context, t *testing.T, tenants *llclient.Tenants, tn *llclient.Tenant, config json.RawMessage) *llclient.Tenant {
	t.Helper()
	set, err := tenants.Replace(ctx, tn.ID, llclient.ReplaceTenantRequest{ComputeConfig: config}, llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	return waitReady(ctx, t, tenants, tn.ID, set.Generation)
}

// pageSays fetches the demo page from every endpoint of the tenant until
// each has every one of want (a rollout's old Pod may answer for a
// moment after the tenant is ready: kube-proxy follows the endpoints).
func pageSays(ctx context.Context, t *testing.T, c *kubetest.Cluster, tn *llclient.Tenant, want ...string) {
	t.Helper()
	web := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, address string) (net.Conn, error) { return c.Dial(ctx, address) },
	}}
	for _, e := range tn.Endpoints {
		poll.Until(t, "the page at "+e.Address+" says "+strings.Join(want, ", "), 30*time.Second, func() (bool, string) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.Address+"/", nil)
			resp, err := web.Do(req)
			if err != nil {
				return false, err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			for _, w := range want {
				if !strings.Contains(string(body), w) {
					return false, fmt.Sprintf("%s:\n%s", resp.Status, body)
				}
			}
			return true, ""
		})
	}
}

// podStatuses are the statuses of the Pods in ns, for a failure to show.
func podStatuses(ctx context.Context, c *kubetest.Cluster, ns string) string {
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		st, _ := json.MarshalIndent(p.Status.ContainerStatuses, "  ", "  ")
		fmt.Fprintf(&b, "Pod %s (%s):\n  %s\n", p.Name, p.Status.Phase, st)
	}
	return b.String()
}

// podNames are the names of the tenant's live Pods.
func podNames(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns, id string) []string {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, tenantSelector(id))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// demoExitCode is the exit code of `landlord demo serve` given flags, as
// this machine's landlord gives it.
func demoExitCode(t *testing.T, flags ...string) int {
	t.Helper()
	// Bounded: with flags it takes, the demo would serve until stopped.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := exec.CommandContext(ctx, servetest.Binary(t), append(append([]string{"demo", "serve"}, flags...), "x")...).Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || ctx.Err() != nil {
		t.Fatalf("landlord demo serve %v: %v, want it to exit with an error", flags, err)
	}
	return exit.ExitCode()
}

// kubectlApply copies the objects landlord made in namespace ns into a new
// namespace to (as kubectl get -o yaml would give them, less what the
// server sets), applies them with kubectl as the admin, and returns how
// long from the apply until kubectl wait sees the Deployment available.
func kubectlApply(ctx context.Context, t *testing.T, c *kubetest.Cluster, ns, to string) time.Duration {
	t.Helper()
	var objects []runtime.Object
	add := func(list runtime.Object, err error) {
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, list)
	}
	opts := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=landlord"}
	add(c.Client.CoreV1().Secrets(ns).List(ctx, opts))
	add(c.Client.CoreV1().Services(ns).List(ctx, opts))
	add(c.Client.NetworkingV1().NetworkPolicies(ns).List(ctx, opts))
	add(c.Client.AppsV1().Deployments(ns).List(ctx, opts))
	var docs []string
	docs = append(docs, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+to+"\n")
	var deployment string
	for _, list := range objects {
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(list)
		if err != nil {
			t.Fatal(err)
		}
		items, _ := raw["items"].([]any)
		kind := strings.TrimSuffix(fmt.Sprintf("%T", list), "List")
		for _, item := range items {
			u := unstructured.Unstructured{Object: item.(map[string]any)}
			u.SetAPIVersion(apiVersionOf(kind))
			u.SetKind(kindOf(kind))
			u.SetNamespace(to)
			for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences"} {
				unstructured.RemoveNestedField(u.Object, "metadata", f)
			}
			unstructured.RemoveNestedField(u.Object, "status")
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
			if ports, ok, _ := unstructured.NestedSlice(u.Object, "spec", "ports"); ok && u.GetKind() == "Service" {
				for _, p := range ports {
					delete(p.(map[string]any), "nodePort")
				}
				_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
			}
			if u.GetKind() == "Deployment" {
				deployment = u.GetName()
			}
			y, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(y))
		}
	}
	if deployment == "" {
		t.Fatalf("no Deployment in %s to copy", ns)
	}
	file := filepath.Join(t.TempDir(), "by-hand.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	admin, err := c.WriteKubeconfig("kubectl", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, c.Kubectl(), append([]string{"--kubeconfig", admin}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	began := time.Now()
	kubectl("apply", "-f", file)
	kubectl("wait", "--namespace", to, "--for=condition=Available", "--timeout=2m", "deployment/"+deployment)
	took := time.Since(began)
	kubectl("delete", "namespace", to, "--wait=false")
	return took
}

// kindOf and apiVersionOf name the kind of a typed list ("*v1.ServiceList"
// trimmed to "*v1.Service").
func kindOf(typeName string) string { return typeName[strings.LastIndex(typeName, ".")+1:] }

func apiVersionOf(typeName string) string {
	switch kindOf(typeName) {
	case "Deployment":
		return appsv1.SchemeGroupVersion.String()
	case "NetworkPolicy":
		return "networking.k8s.io/v1"
	default:
		return "v1"
	}
}
