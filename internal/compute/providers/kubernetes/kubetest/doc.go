// Package kubetest runs a real Kubernetes cluster for tests: etcd,
// kube-apiserver and kube-controller-manager, and for StartNode a
// kube-scheduler and a real node, all built from their Go modules by
// testservers/build into a cache outside the repository, started on
// loopback ports once per test binary.
//
// A test chooses its node:
//
//   - Start: a cluster with a simulated node. Node plays the kubelet: it
//     watches Pods and sets their status through the status subresource,
//     as a kubelet would report containers that started (Running and
//     Ready), or that fail to. An image whose reference contains
//     "unpullable" stays Pending in ImagePullBackOff; one containing
//     "crashloop" is in CrashLoopBackOff. It is fast (hundreds of tenants
//     in seconds), and Node.Hold keeps Pods waiting, a state a test cannot
//     force on a real node.
//   - StartNode: a cluster of its own with a real node (Kubelet): the
//     scheduler binds Pods to it, its kubelet runs them under containerd
//     (CRI) with runc and the CNI bridge plugin, probes them and pulls
//     images, and kube-proxy serves their Services. Pod addresses
//     (10.246.0.0/24, on a bridge of the machine), cluster IPs
//     (10.247.0.0/24, routed into that bridge) and node ports on the
//     node's address answer from the test process; Cluster.Dial resolves
//     a Service's cluster DNS name as the cluster's DNS would. There are
//     no registries: Kubelet.LoadImage copies an image from the Docker
//     Engine into the node's containerd, where the kubelet finds it
//     (imagePullPolicy IfNotPresent); the sandbox image is built from
//     testservers' pause binary. One real node runs on a machine at a
//     time (their kube-proxies would rewrite each other's rules): a
//     second test binary waits for the first to stop its node. Stopping
//     removes every Pod sandbox and container the node ran, its network
//     and its rules; a run that was killed leaves them for the next run
//     to remove.
//
// Deployments, ReplicaSets, the garbage collector and namespace deletion
// are the real controllers' in both.
//
// A package that calls Start or StartNode runs its tests through Main,
// which stops the servers afterwards:
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
// Start and StartNode skip the test, with the reason and how to fix it,
// when the binaries are absent, and fail it instead when
// LANDLORD_REQUIRE_KUBERNETES is set to 1 (as CI does, after building
// them). The real node needs Linux and root (cgroups, a bridge, iptables).
package kubetest
