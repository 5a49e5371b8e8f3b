package kubetest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/distribution/reference"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/jaxxstorm/landlord/internal/testbin"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The real node's fixed places. They are fixed, not per run, so that a
// run finds and removes what a killed one left behind; the lock keeps two
// test binaries from running a node at once (their kube-proxies would
// rewrite each other's rules).
const (
	nodeName     = "landlord-kubetest"
	nodeDir      = "/tmp/landlord-kubetest-node"
	nodeLock     = "/tmp/landlord-kubetest-node.lock"
	nodeBridge   = "llkube0"
	nodeIP       = "10.246.0.1"
	podSubnet    = "10.246.0.0/24"
	podPrefixLen = "24"
	// serviceSubnet is routed into the bridge, so that a cluster IP
	// kube-proxy does not serve goes nowhere but the node.
	serviceSubnet = "10.247.0.0/24"
	// PauseImage is the node's sandbox image, built from testservers'
	// pause binary and imported when the node starts: no registry.
	PauseImage = "landlord.test/pause:1"
	// ClusterDomain is the cluster's DNS domain, the suffix of the Service
	// names Dial resolves.
	ClusterDomain = "cluster.local"
)

// Kubelet is a real node: a kubelet that runs Pods under containerd (CRI),
// with runc and the CNI bridge plugin, and kube-proxy. Pods get addresses
// in 10.246.0.0/24 on a bridge of the machine, reachable from the test
// process, as are Service cluster IPs (10.247.0.0/24) and node ports on
// IP. Images are not pulled from registries (there are none): LoadImage
// copies them from the Docker Engine into the node's containerd.
type Kubelet struct {
	// Name is the Node's name; IP the node's address, where node ports
	// answer, and the gateway of the Pods' network.
	Name, IP string

	bin    string
	sock   string // containerd's CRI socket
	lock   *os.File
	waited time.Duration // for the lock
	procs  []*process    // containerd, kubelet, kube-proxy
}

// newKubelet takes the machine's node lock (waiting for another test
// binary's node to stop) and removes what a killed run left.
func newKubelet(binDir string) (*Kubelet, error) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: a real node runs only on Linux, as root (it makes cgroups, a bridge and iptables rules)", testbin.ErrAbsent)
	}
	k := &Kubelet{Name: nodeName, IP: nodeIP, bin: binDir, sock: filepath.Join(nodeDir, "containerd.sock")}
	var err error
	began := time.Now()
	if k.lock, err = lockNode(); err != nil {
		return nil, err
	}
	k.waited = time.Since(began)
	if err := k.clean(); err != nil {
		_ = k.stop()
		return nil, fmt.Errorf("remove what an earlier node left: %w", err)
	}
	return k, nil
}

// start starts the node of c, whose admin kubeconfig is at kubeconfig,
// and waits until the Node is Ready and kube-proxy serves.
func (k *Kubelet) start(ctx context.Context, c *Cluster, kubeconfig string) error {
	for _, d := range []string{"cni/net.d", "kubelet", "containerd"} {
		if err := os.MkdirAll(filepath.Join(nodeDir, d), 0o700); err != nil {
			return err
		}
	}
	if err := makeBridge(); err != nil {
		return err
	}
	if err := k.startContainerd(ctx); err != nil {
		return err
	}
	if err := k.importPause(ctx); err != nil {
		return err
	}
	if err := k.runKubelet(ctx, c, kubeconfig); err != nil {
		return err
	}
	return k.startProxy(ctx, kubeconfig)
}

// lockWait bounds how long a test binary waits for another's node to
// stop: the other's whole run.
const lockWait = 15 * time.Minute

// lockNode takes the machine's node lock, waiting for another test
// binary's node to stop.
func lockNode() (*os.File, error) {
	f, err := os.OpenFile(nodeLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", nodeLock, err)
		case time.Now().After(deadline):
			f.Close()
			return nil, fmt.Errorf("another test binary's node held %s for %s", nodeLock, lockWait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// makeBridge makes the Pods' bridge with the node's address (the kubelet
// wants its node IP on an interface before it starts; the CNI bridge
// plugin takes the bridge as it finds it) and routes the cluster IPs into
// it.
func makeBridge() error {
	for _, args := range [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", nodeIP + "/" + podPrefixLen, "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
		{"route", "add", serviceSubnet, "dev", nodeBridge, "src", nodeIP},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func (k *Kubelet) path(name string) string { return filepath.Join(k.bin, name) }

// startContainerd starts containerd with the CRI plugin: runc is
// Debian's; restrict_oom_score_adj because the test machine may not let
// containerd lower scores; network namespaces under its state directory,
// so that the node's directory holds everything to clean.
func (k *Kubelet) startContainerd(ctx context.Context) error {
	config := fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q

[grpc]
  address = %[3]q

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = %[4]q
        Root = %[5]q
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%[6]q]
    conf_dir = %[7]q

[plugins."io.containerd.cri.v1.images"]
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %[8]q
`, filepath.Join(nodeDir, "containerd", "root"), filepath.Join(nodeDir, "containerd", "state"), k.sock,
		runcPath(), filepath.Join(nodeDir, "runc"), k.path("cni"), filepath.Join(nodeDir, "cni", "net.d"), PauseImage)
	cni := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "landlord-kubetest",
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q, "gateway": %q}]], "dataDir": %q}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, nodeBridge, podSubnet, nodeIP, filepath.Join(nodeDir, "cni", "ipam"))
	files := map[string]string{
		filepath.Join(nodeDir, "containerd.toml"):                  config,
		filepath.Join(nodeDir, "cni", "net.d", "10-pods.conflist"): cni,
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
	}
	// containerd finds its shim on PATH.
	p, err := launch(nodeDir, []string{"PATH=" + k.bin + ":" + os.Getenv("PATH")}, k.path("containerd"),
		"--config", filepath.Join(nodeDir, "containerd.toml"))
	if err != nil {
		return err
	}
	k.procs = append(k.procs, p)
	return until(ctx, p, "serve CRI on "+k.sock, func() bool {
		return k.crictl(ctx, "info") == nil
	})
}

// runcPath is the machine's runc: a runc built from its module without
// libseccomp cannot run containers, and Debian's has it.
func runcPath() string {
	if p, err := exec.LookPath("runc"); err == nil {
		return p
	}
	return "/usr/sbin/runc"
}

// importPause builds the sandbox image from the pause binary and imports
// it into containerd.
func (k *Kubelet) importPause(ctx context.Context) error {
	bin, err := os.ReadFile(k.path("pause"))
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return layerOf("pause", bin) })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	img, err = mutate.Config(img, v1.Config{Entrypoint: []string{"/pause"}})
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	ref, err := name.NewTag(PauseImage)
	if err != nil {
		return err
	}
	var archive bytes.Buffer
	if err := tarball.Write(ref, img, &archive); err != nil {
		return err
	}
	return k.ctrImport(ctx, &archive)
}

// LoadImage copies the image ref from the Docker Engine into the node, as
// a registry pull would bring it: the kubelet then finds it present
// (imagePullPolicy IfNotPresent) and pulls nothing. Each of also is
// another reference the image gets on the node.
func (k *Kubelet) LoadImage(ctx context.Context, ref string, also ...string) error {
	save := exec.CommandContext(ctx, "docker", "save", ref)
	var stderr bytes.Buffer
	save.Stderr = &stderr
	out, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save %s: %w", ref, err)
	}
	ierr := k.ctrImport(ctx, out)
	if err := save.Wait(); err != nil {
		return fmt.Errorf("docker save %s: %w: %s", ref, err, stderr.Bytes())
	}
	if ierr != nil {
		return ierr
	}
	for _, a := range also {
		if err := k.ctr(ctx, nil, "images", "tag", "--force", normalize(ref), normalize(a)); err != nil {
			return err
		}
	}
	return nil
}

// normalize is ref as containerd names it: docker.io/library/ added to
// short names, :latest to untagged ones.
func normalize(ref string) string {
	n, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return ref
	}
	return reference.TagNameOnly(n).String()
}

// ctrImport imports a `docker save` archive into the CRI's namespace.
func (k *Kubelet) ctrImport(ctx context.Context, archive io.Reader) error {
	return k.ctr(ctx, archive, "images", "import", "-")
}

func (k *Kubelet) ctr(ctx context.Context, stdin io.Reader, args ...string) error {
	cmd := exec.CommandContext(ctx, k.path("ctr"), append([]string{"--address", k.sock, "--namespace", "k8s.io"}, args...)...)
	cmd.Stdin = stdin
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// crictl runs crictl against the node's containerd.
func (k *Kubelet) crictl(ctx context.Context, args ...string) error {
	_, err := k.crictlOutput(ctx, args...)
	return err
}

func (k *Kubelet) crictlOutput(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, k.path("crictl"), append([]string{"--runtime-endpoint", "unix://" + k.sock, "--timeout", "10s"}, args...)...)
	cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("crictl %s: %w: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		return nil, fmt.Errorf("crictl %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// Containers returns the ids of the containers on the node of Pods in
// namespace (all namespaces if ""), running or not, Pod sandboxes left
// out.
func (k *Kubelet) Containers(ctx context.Context, namespace string) ([]string, error) {
	args := []string{"ps", "--all", "--quiet"}
	if namespace != "" {
		args = append(args, "--label", "io.kubernetes.pod.namespace="+namespace)
	}
	out, err := k.crictlOutput(ctx, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// runKubelet starts the kubelet as the node nodeName at nodeIP, and waits
// until its Node is Ready. It runs as cgroup v1 machines need (cgroupfs,
// failCgroupV1 off), enforces no allocatable limits and evicts nothing
// (a test machine's disk is not the node's to guard), never garbage
// collects images (LoadImage's are all there is), and lets anyone in
// (the API server's log and exec requests).
func (k *Kubelet) runKubelet(ctx context.Context, c *Cluster, kubeconfig string) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
enforceNodeAllocatable: []
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
resolvConf: ""
clusterDomain: %s
podLogsDir: %s
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
`, nodeIP, ports[0], ports[1], k.sock, ClusterDomain, filepath.Join(nodeDir, "logs"))
	path := filepath.Join(nodeDir, "kubelet.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return err
	}
	p, err := launch(nodeDir, nil, k.path("kubelet"),
		"--config", path, "--kubeconfig", kubeconfig,
		"--root-dir", filepath.Join(nodeDir, "kubelet"),
		"--hostname-override", nodeName, "--node-ip", nodeIP)
	if err != nil {
		return err
	}
	k.procs = append(k.procs, p)
	return until(ctx, p, "register a Ready node", func() bool {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				return cond.Status == corev1.ConditionTrue
			}
		}
		return false
	})
}

// startProxy starts kube-proxy in iptables mode and waits until it has
// synced its rules once.
func (k *Kubelet) startProxy(ctx context.Context, kubeconfig string) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	healthz := "127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := launch(nodeDir, nil, k.path("kube-proxy"),
		"--kubeconfig", kubeconfig, "--hostname-override", nodeName,
		"--proxy-mode", "iptables", "--cluster-cidr", podSubnet,
		"--nodeport-addresses", nodeIP+"/32",
		"--healthz-bind-address", healthz, "--metrics-bind-address", "127.0.0.1:"+strconv.Itoa(ports[1]),
		// Leave the machine's conntrack table as it is.
		"--conntrack-max-per-core", "0")
	if err != nil {
		return err
	}
	k.procs = append(k.procs, p)
	return waitHTTP(ctx, p, http.DefaultClient, "http://"+healthz+"/healthz", nil)
}

// stop stops the kubelet (so that it restarts nothing), removes every Pod
// sandbox through CRI (which stops their containers and gives their
// addresses back through CNI), stops kube-proxy and containerd, removes
// whatever is left (clean) and releases the node lock.
func (k *Kubelet) stop() error {
	if k == nil || k.lock == nil {
		return nil
	}
	var errs []error
	if p := k.proc("kubelet"); p != nil {
		errs = append(errs, p.stop())
	}
	if p := k.proc("containerd"); p != nil && p.alive() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, k.crictl(ctx, "rmp", "--all", "--force"))
		cancel()
	}
	for _, name := range []string{"kube-proxy", "containerd"} {
		if p := k.proc(name); p != nil {
			errs = append(errs, p.stop())
		}
	}
	errs = append(errs, k.clean())
	_ = k.lock.Close()
	k.lock = nil
	return errors.Join(errs...)
}

// proc is the node's process called name, or nil.
func (k *Kubelet) proc(name string) *process {
	for _, p := range k.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

// clean removes what a node leaves when it is not stopped in order, and
// what it leaves when it is: its containers (by runc, whose state it keeps
// in the node's directory), the processes that mention the directory
// (containerd's shims), kube-proxy's rules, the bridge, the mounts under
// the directory (network namespaces, the kubelet's volumes, containerd's
// snapshots), the directory.
func (k *Kubelet) clean() error {
	var errs []error
	runc := filepath.Join(nodeDir, "runc", "k8s.io")
	if out, err := exec.Command(runcPath(), "--root", runc, "list", "--quiet").Output(); err == nil {
		for _, id := range strings.Fields(string(out)) {
			if out, err := exec.Command(runcPath(), "--root", runc, "delete", "--force", id).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("runc delete %s: %w: %s", id, err, out))
			}
		}
	}
	killMentioning(nodeDir)
	if _, err := os.Stat(nodeDir); err == nil {
		if out, err := exec.Command(k.path("kube-proxy"), "--cleanup").CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w: %s", err, out))
		}
	}
	errs = append(errs, removeKubeChains())
	if err := exec.Command("ip", "link", "show", nodeBridge).Run(); err == nil {
		if out, err := exec.Command("ip", "link", "delete", nodeBridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link delete %s: %w: %s", nodeBridge, err, out))
		}
	}
	errs = append(errs, unmountUnder(nodeDir))
	if err := os.RemoveAll(nodeDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeKubeChains removes the iptables chains named KUBE-… and the rules
// that jump to them: the kubelet's (KUBE-FIREWALL, which drops packets to
// 127.0.0.0/8 from other sources, and its canaries), which it leaves
// when it stops, and whatever kube-proxy --cleanup left. Only the test
// node makes such chains on a test machine.
func removeKubeChains() error {
	var errs []error
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command(cmd, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue // no such table or command here
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				f := splitRule(line)
				switch {
				case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
					chains = append(chains, f[1])
				case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && jumpsToKube(f):
					if out, err := exec.Command(cmd, append([]string{"-w", "-t", table, "-D"}, f[1:]...)...).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s -t %s -D %s: %w: %s", cmd, table, strings.Join(f[1:], " "), err, out))
					}
				}
			}
			for _, op := range []string{"-F", "-X"} {
				for _, chain := range chains {
					if out, err := exec.Command(cmd, "-w", "-t", table, op, chain).CombinedOutput(); err != nil {
						errs = append(errs, fmt.Errorf("%s -t %s %s %s: %w: %s", cmd, table, op, chain, err, out))
					}
				}
			}
		}
	}
	return errors.Join(errs...)
}

// jumpsToKube reports whether the rule's target is a KUBE-… chain.
func jumpsToKube(rule []string) bool {
	for i, f := range rule[:len(rule)-1] {
		if (f == "-j" || f == "-g") && strings.HasPrefix(rule[i+1], "KUBE-") {
			return true
		}
	}
	return false
}

// splitRule splits a line of iptables -S into its words, a quoted one
// ("block incoming localnet connections") as one.
func splitRule(line string) []string {
	var words []string
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			break
		}
		if line[0] == '"' {
			end := strings.IndexByte(line[1:], '"')
			if end < 0 {
				return append(words, line[1:])
			}
			words = append(words, line[1:end+1])
			line = line[end+2:]
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		words = append(words, word)
		line = rest
	}
	return words
}

// killMentioning kills the processes whose command line mentions dir.
func killMentioning(dir string) {
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unmountUnder unmounts every mount under dir, deepest first.
func unmountUnder(dir string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var mounts []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mounts = append(mounts, f[4])
		}
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		if err := unmount(mounts[i]); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mounts[i], err))
		}
	}
	return errors.Join(errs...)
}

// ErrOutsideCluster is Dial's answer to a host name the cluster does not
// resolve (an Ingress host, which only an outside DNS and an ingress
// controller would serve): the test sends nothing off the machine.
var ErrOutsideCluster = errors.New("a name only an outside DNS would resolve; not dialled")

// Dial connects to address as a Pod of the cluster would: a Service's
// cluster DNS name (name.namespace.svc.cluster.local) is resolved to its
// cluster IP through the API, as the cluster's DNS would (there is no DNS
// server in the test cluster), and the connection goes through
// kube-proxy's rules; an IP address is dialled as it is; any other name
// is ErrOutsideCluster.
func (c *Cluster) Dial(ctx context.Context, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if rest, ok := strings.CutSuffix(host, ".svc."+ClusterDomain); ok {
		svc, ns, ok := strings.Cut(rest, ".")
		if !ok {
			return nil, fmt.Errorf("kubetest: %s is not name.namespace.svc.%s", host, ClusterDomain)
		}
		s, err := c.Client.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("kubetest: resolve %s: %w", host, err)
		}
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
			return nil, fmt.Errorf("kubetest: resolve %s: the Service has no cluster IP", host)
		}
		host = s.Spec.ClusterIP
	} else if net.ParseIP(host) == nil {
		return nil, fmt.Errorf("kubetest: %s: %w", host, ErrOutsideCluster)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
}

// layerOf is a layer tar holding one executable file, /name.
func layerOf(name string, content []byte) (io.ReadCloser, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(content); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return io.NopCloser(&b), nil
}
