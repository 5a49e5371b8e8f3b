// Package kubetest runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver and kube-controller-manager, built from their Go modules
// by testservers/build into a cache outside the repository, started on
// loopback ports once per test binary.
//
// There is no kubelet. Node plays it: it watches Pods and sets their status
// through the status subresource, as a kubelet would report containers
// that started (Running and Ready), or that fail to. An image whose
// reference contains "unpullable" stays Pending in ImagePullBackOff; one
// containing "crashloop" is in CrashLoopBackOff. Deployments, ReplicaSets,
// the garbage collector and namespace deletion are the real controllers'.
//
// A package that calls Start runs its tests through Main, which stops the
// servers afterwards:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
// Start skips the test, with the reason and how to fix it, when the
// binaries are absent, and fails it instead when LANDLORD_REQUIRE_KUBERNETES
// is set to 1 (as CI does, after building them).
package kubetest
