package kubetest

import (
	"errors"
	"fmt"
	"os"
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

// binaries are what a cluster runs, all in one directory.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager"}

var (
	mainCalled atomic.Bool

	clusterOnce sync.Once
	theCluster  *Cluster
	clusterErr  error
)

// Main runs the tests of m, then stops the cluster the tests started, if
// any, and removes its files. It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	clusterOnce.Do(func() { clusterErr = errors.New("kubetest: stopped") })
	if theCluster != nil {
		if err := theCluster.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "kubetest: %v\n", err)
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
	// Node plays the kubelet for every Pod.
	Node *Node

	dir  string
	host string // https://127.0.0.1:port
	// the service account of ServiceAccount, made once
	saOnce sync.Once
	saPath string
	saErr  error
	ca     []byte // PEM of the serving certificate's CA
	procs  []*process
}

// Start returns the binary's cluster, starting it on first use. It skips
// or fails t when the servers cannot be had (see the package doc).
func Start(t testing.TB) *Cluster {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("kubetest: the package's TestMain must run the tests through kubetest.Main, which stops the servers afterwards:\n\tfunc TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }")
	}
	clusterOnce.Do(func() {
		dir, err := binDir()
		if err != nil {
			clusterErr = err
			return
		}
		begin := time.Now()
		theCluster, clusterErr = start(dir)
		if clusterErr == nil {
			t.Logf("kubetest: Kubernetes %s control plane at %s ready in %v", Version, theCluster.host, time.Since(begin).Round(time.Millisecond))
		}
	})
	if clusterErr != nil {
		report(t, clusterErr)
	}
	return theCluster
}

// binDir finds the directory of the binaries: EnvBin, else the cache
// testservers/build writes. Their absence wraps testbin.ErrAbsent.
func binDir() (string, error) {
	dir, err := testbin.Find(EnvBin, "kubernetes-"+Version, binaries...)
	if err != nil {
		return "", fmt.Errorf("the Kubernetes test servers are %w", err)
	}
	return dir, nil
}

// report skips or fails t for err.
func report(t testing.TB, err error) {
	t.Helper()
	testbin.Report(t, "kubetest", err, EnvRequire, "To fix: run testservers/build kubernetes (about 14 minutes cold, once per machine).")
}
