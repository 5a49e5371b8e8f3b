package kubernetes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/demo"
	"github.com/moby/moby/client"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes/kubetest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

var hashKey = []byte("landlord-kubernetes-test-hash-key")

// rbacManifest is the ClusterRole the repository ships.
func rbacManifest(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "deploy", "kubernetes", "rbac.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// start returns the cluster and a kubeconfig of landlord's service
// account, bound to the shipped ClusterRole and nothing else.
func start(t testing.TB) (*kubetest.Cluster, string) {
	t.Helper()
	c := kubetest.Start(t)
	return c, c.ServiceAccount(t, rbacManifest(t))
}

// demoImage is the demo image's reference on the real node.
const demoImage = "landlord.test/demo:node"

// conformanceImages are the conformance suite's images (its config's
// variants), on the real node: the demo image under other names.
var conformanceImages = []string{"registry.example/app:1.0", "registry.example/app:1.1", "registry.example/app:1.2", "registry.example/app:1.3"}

// startNode returns the cluster with a real node, with the demo image on
// the node as demoImage and the conformance suite's images, and a
// kubeconfig of landlord's service account in it.
func startNode(t testing.TB) (*kubetest.Cluster, string) {
	t.Helper()
	c := kubetest.StartNode(t)
	demoOnce.Do(func() { demoErr = loadDemo(t, c) })
	if demoErr != nil {
		t.Fatalf("the demo image on the node: %v", demoErr)
	}
	return c, c.ServiceAccount(t, rbacManifest(t))
}

var (
	demoOnce sync.Once
	demoErr  error
)

// loadDemo builds the demo image on the Docker Engine from a static
// landlord, as `landlord demo image` does, and copies it to the node; the
// Engine keeps no copy.
func loadDemo(t testing.TB, c *kubetest.Cluster) error {
	bin := filepath.Join(t.TempDir(), "landlord")
	build := exec.Command("go", "build", "-o", bin, "github.com/jaxxstorm/landlord/cmd/landlord")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("CGO_ENABLED=0 go build: %w\n%s", err, out)
	}
	cli := dockertest.Engine(t)
	ctx := context.Background()
	ref := "landlord-test/kubernetes-demo:" + dockertest.RunID()
	if _, err := demo.Load(ctx, cli, demo.Options{Binary: bin, Ref: ref}); err != nil {
		return err
	}
	defer func() { _, _ = cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true}) }()
	return c.Kubelet.LoadImage(ctx, ref, append([]string{demoImage}, conformanceImages...)...)
}

func newProvider(t testing.TB, block string, logs *providertest.LogBuffer) *kubernetes.Provider {
	t.Helper()
	opts := kubernetes.Options{Block: json.RawMessage(block), HashKey: hashKey}
	if logs != nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	p, err := kubernetes.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("kubernetes.New: %v", err)
	}
	return p
}

// startServe starts `landlord serve` with a kubernetes block of kubeconfig
// and these controller settings (YAML lines under controller:).
func startServe(tb testing.TB, kubeconfig string, controller ...string) *servetest.Process {
	tb.Helper()
	config := fmt.Sprintf("compute:\n  default: kubernetes\n  kubernetes:\n    kubeconfig: %s\ncontroller:\n", kubeconfig)
	for _, line := range controller {
		config += "  " + line + "\n"
	}
	l := servetest.New(tb, servetest.Options{Config: config})
	l.Start()
	return l
}

// tenantSelector selects what landlord labelled as the tenant's.
func tenantSelector(tenantID string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: "landlord.dev/tenant-id=" + tenantID}
}

// countObjects counts, as the admin, every object of the kinds landlord
// creates that carries the tenant's label, in any namespace.
func countObjects(t testing.TB, c *kubetest.Cluster, tenantID string) int {
	t.Helper()
	ctx, sel := context.Background(), tenantSelector(tenantID)
	n := 0
	count := func(what string, items int, err error) {
		if err != nil {
			t.Fatalf("list %s: %v", what, err)
		}
		n += items
	}
	nss, err := c.Client.CoreV1().Namespaces().List(ctx, sel)
	count("namespaces", len(nss.Items), err)
	deps, err := c.Client.AppsV1().Deployments("").List(ctx, sel)
	count("deployments", len(deps.Items), err)
	svcs, err := c.Client.CoreV1().Services("").List(ctx, sel)
	count("services", len(svcs.Items), err)
	secrets, err := c.Client.CoreV1().Secrets("").List(ctx, sel)
	count("secrets", len(secrets.Items), err)
	pols, err := c.Client.NetworkingV1().NetworkPolicies("").List(ctx, sel)
	count("network policies", len(pols.Items), err)
	ings, err := c.Client.NetworkingV1().Ingresses("").List(ctx, sel)
	count("ingresses", len(ings.Items), err)
	quotas, err := c.Client.CoreV1().ResourceQuotas("").List(ctx, sel)
	count("resource quotas", len(quotas.Items), err)
	return n
}
