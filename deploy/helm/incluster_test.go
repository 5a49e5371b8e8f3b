package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/demo"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/release"
	"github.com/jaxxstorm/landlord/internal/release/releasetest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestInClusterFromTheImage installs the chart on the real test node and
// proves the install: landlord runs from its release image as the chart's
// service account, the kubelet's probes find it ready over HTTPS (from
// the TLS Secret), and it provisions a tenant in the same cluster whose
// endpoint answers, every request it made to the API server made as that
// service account, under the chart's ClusterRole; the tenant's deletion
// leaves nothing of it.
//
// The test cluster's API server listens on loopback only, so the Pod
// shares the node's network (hostNetwork, set by the test on the rendered
// Deployment) and is pointed at that address by KUBERNETES_SERVICE_HOST
// and _PORT (extraEnv); in a cluster the kubernetes Service is the way.
func TestInClusterFromTheImage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs landlord's image on a real node")
	}
	c := kubetest.StartNode(t)
	cli := dockertest.Engine(t)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	const ns = "landlord-system"
	runID := dockertest.RunID()

	// The image, as the release makes it, and the demo image, on the node.
	ref := "landlord-test/helm:" + runID
	bin := releasetest.LoadImage(ctx, t, ref, release.Meta{Version: "v0.0.0-helm", Commit: "helm", Date: time.Now().UTC().Truncate(time.Second)})
	if err := c.Kubelet.LoadImage(ctx, ref); err != nil {
		t.Fatal(err)
	}
	demoRef := "landlord-test/helm-demo:" + runID
	if _, err := demo.Load(ctx, cli, demo.Options{Binary: bin, Ref: demoRef}); err != nil {
		t.Fatal(err)
	}
	defer exec.Command("docker", "image", "rm", "--force", demoRef).Run()
	const tenantImage = "landlord.test/demo:helm"
	if err := c.Kubelet.LoadImage(ctx, demoRef, tenantImage); err != nil {
		t.Fatal(err)
	}

	// The namespace and the two Secrets the chart's defaults name.
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	pki := clienttest.NewPKI(t, "127.0.0.1", "landlord."+ns+".svc")
	crt, _ := os.ReadFile(pki.ServerCertFile)
	key, _ := os.ReadFile(pki.ServerKeyFile)
	const token = "in-cluster-admin-token"
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "landlord-tokens"}, StringData: map[string]string{"admin-token": token}},
		{ObjectMeta: metav1.ObjectMeta{Name: "landlord-tls"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": crt, "tls.key": key}},
	} {
		if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	api, err := url.Parse(c.Admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(servetest.FreeAddr(t), ":")
	repo, tag, _ := strings.Cut(ref, ":")
	objs := mustRender(t, ns, map[string]any{
		"image":    map[string]any{"repository": repo, "tag": tag, "pullPolicy": "Never"},
		"service":  map[string]any{"port": atoi(t, port)},
		"database": map[string]any{"sqlite": map[string]any{"persistence": false}},
		"extraEnv": []any{
			map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": api.Hostname()},
			map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": api.Port()},
		},
		"config": map[string]any{"controller": map[string]any{"poll_interval": "1s"}},
	})
	var d appsv1.Deployment
	if err := yaml.Unmarshal([]byte(objs["deployment.yaml"]), &d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.HostNetwork = true
	hostNet, err := yaml.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	objs["deployment.yaml"] = string(hostNet)
	var manifest strings.Builder
	for _, name := range installOrder {
		if doc, ok := objs[name]; ok {
			manifest.WriteString("---\n" + doc + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "landlord.yaml")
	if err := os.WriteFile(path, []byte(manifest.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := c.WriteKubeconfig("helm-admin", c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, c.Kubectl(), "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	defer func() {
		bg := context.Background()
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(bg, "landlord", metav1.DeleteOptions{})
		_ = c.Client.RbacV1().ClusterRoles().Delete(bg, "landlord", metav1.DeleteOptions{})
	}()
	defer func() {
		if t.Failed() {
			out, _ := exec.Command(c.Kubectl(), "--kubeconfig", kubeconfig, "-n", ns, "logs", "deploy/landlord", "--tail", "80").CombinedOutput()
			t.Logf("landlord's log:\n%s", out)
			out, _ = exec.Command(c.Kubectl(), "--kubeconfig", kubeconfig, "-n", ns, "describe", "pods").CombinedOutput()
			t.Logf("%s", out)
		}
	}()
	poll.Until(t, "the Deployment available: the kubelet's probes pass", 3*time.Minute, func() (bool, string) {
		d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, "landlord", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return d.Status.AvailableReplicas == 1, fmt.Sprintf("%+v", d.Status)
	})

	lc, err := llclient.New(llclient.Config{Address: "https://127.0.0.1:" + port, Token: token, CACertFile: pki.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	tenants := lc.Tenants()
	cfg := fmt.Sprintf(`{"image": %q, "args": ["in-cluster"], "ports": [{"container_port": 8080}]}`, tenantImage)
	tn := servetest.CreateReady(ctx, t, tenants, "in-cluster", json.RawMessage(cfg))
	// kube-proxy programs the Service's rules a moment after the Pod is
	// ready, as on any cluster.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return c.Dial(ctx, addr) }}}
	poll.Until(t, "the tenant's page at "+tn.Endpoints[0].Address, 30*time.Second, func() (bool, string) {
		res, err := hc.Get("http://" + tn.Endpoints[0].Address + "/")
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK && strings.Contains(string(body), "in-cluster"), fmt.Sprintf("%s %.200s", res.Status, body)
	})
	reqs, err := c.Requests()
	if err != nil {
		t.Fatal(err)
	}
	var writes, denied int
	for _, r := range reqs {
		if r.Code == http.StatusForbidden {
			denied++
			t.Errorf("the service account was refused: %+v", r)
		}
		if r.Resource == "deployments" && (r.Verb == "create" || r.Verb == "patch") {
			writes++
		}
	}
	t.Logf("%d requests of landlord's service account, %d writes of the tenant's Deployment, %d refused", len(reqs), writes, denied)
	if writes == 0 {
		t.Error("no write of the tenant's Deployment came from the chart's service account")
	}
	if _, err := tenants.Delete(ctx, tn.ID, llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.Wait(ctx, tn.ID, llclient.UntilDeleted, nil); err != nil {
		t.Fatal(err)
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
