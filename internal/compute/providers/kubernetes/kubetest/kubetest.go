package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jaxxstorm/landlord/internal/testbin"
)

const (
	// Version is the Kubernetes release the servers are built from; it
	// matches k8s.io/client-go in go.mod and testservers/build (see
	// TestVersionsAgree).
	Version = "v1.37.2"

	// EnvBin names the variable that points at a directory holding etcd,
	// kube-apiserver and kube-controller-manager, in place of the cache.
	EnvBin = "LANDLORD_KUBERNETES_BIN"

	// EnvRequire names the variable that, set to 1, turns "no Kubernetes
	// servers here" skips into failures.
	EnvRequire = "LANDLORD_REQUIRE_KUBERNETES"
)

// binaries are what a cluster runs, all in one directory; nodeBinaries
// what a real node adds.
var (
	binaries     = []string{"etcd", "kube-apiserver", "kube-controller-manager"}
	nodeBinaries = []string{"kube-scheduler", "kubelet", "kube-proxy", "kubectl", "pause",
		"containerd", "containerd-shim-runc-v2", "ctr", "crictl", "cni/bridge", "cni/loopback", "cni/host-local", "cni/portmap"}
)

var (
	mainCalled atomic.Bool

	simulatedCluster, nodeCluster shared
)

// shared is a cluster shared by the tests of one binary, started on
// first use.
type shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Main runs the tests of m, then stops the cluster the tests started, if
// any, and removes its files. It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	for _, s := range []*shared{&nodeCluster, &simulatedCluster} {
		s.once.Do(func() { s.err = errors.New("kubetest: stopped") })
		if s.cluster != nil {
			if err := s.cluster.stop(); err != nil {
				fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
			}
		}
	}
	return code
}

// Cluster is a running control plane, shared by the tests of one binary.
type Cluster struct {
	// Admin is a configuration with every right (system:masters), for
	// tests that set up or inspect what landlord did.
	Admin *rest.Config
	// Client is a clientset of Admin.
	Client kubernetes.Interface
	// Node plays the kubelet for every Pod, in the cluster of Start; nil
	// in the cluster of StartNode.
	Node *Node
	// Kubelet is the real node of the cluster of StartNode; nil in the
	// cluster of Start.
	Kubelet *Kubelet

	dir  string
	bin  string // the directory of the binaries
	host string // https://127.0.0.1:port
	// the service account of ServiceAccount, made once
	saOnce sync.Once
	saPath string
	saErr  error
	ca     []byte // PEM of the serving certificate's CA
	procs  []*process
}

// Start returns the binary's cluster with a simulated node (Node),
// starting it on first use. It skips or fails t when the servers cannot be
// had (see the package doc).
func Start(t testing.TB) *Cluster {
	t.Helper()
	return simulatedCluster.get(t, false)
}

// StartNode returns the binary's cluster with a real node (Kubelet): the
// scheduler places Pods on it, its kubelet runs them under containerd,
// kube-proxy serves their Services. It is a cluster of its own, beside
// Start's. One real node runs on a machine at a time: a second test binary
// that wants one waits for the first to stop.
func StartNode(t testing.TB) *Cluster {
	t.Helper()
	return nodeCluster.get(t, true)
}

func (s *shared) get(t testing.TB, withNode bool) *Cluster {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("kubetest: the package's TestMain must run the tests through kubetest.Main, which stops the servers afterwards:\n\tfunc TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }")
	}
	s.once.Do(func() {
		want := binaries
		if withNode {
			want = append(slices.Clone(binaries), nodeBinaries...)
		}
		dir, err := binDir(want)
		if err != nil {
			s.err = err
			return
		}
		begin := time.Now()
		s.cluster, s.err = start(dir, withNode)
		if s.err == nil {
			what := "control plane"
			if withNode {
				what = "control plane and node"
			}
			took := time.Since(begin)
			if k := s.cluster.Kubelet; k != nil && k.waited > time.Second {
				what += fmt.Sprintf(" (after %v waiting for another test binary's node)", k.waited.Round(time.Second))
				took -= k.waited
			}
			t.Logf("kubetest: Kubernetes %s %s at %s ready in %v", Version, what, s.cluster.host, took.Round(time.Millisecond))
		}
	})
	if s.err != nil {
		report(t, s.err)
	}
	return s.cluster
}

// Kubectl is the path of kubectl, of the servers' release (in the
// cluster of StartNode, which requires it).
func (c *Cluster) Kubectl() string { return filepath.Join(c.bin, "kubectl") }

// binDir finds the directory of the binaries: EnvBin, else the cache
// testservers/build writes. Their absence wraps testbin.ErrAbsent.
func binDir(binaries []string) (string, error) {
	dir, err := testbin.Find(EnvBin, "kubernetes-"+Version, binaries...)
	if err != nil {
		return "", fmt.Errorf("the Kubernetes test servers are %w", err)
	}
	return dir, nil
}

// report skips or fails t for err.
func report(t testing.TB, err error) {
	t.Helper()
	testbin.Report(t, "kubetest", err, EnvRequire, "To fix: run testservers/build kubernetes (about 20 minutes cold, once per machine).")
}
