package kubetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jaxxstorm/landlord/internal/testbin"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	startTimeout = 90 * time.Second
	stopTimeout  = 5 * time.Second
)

// start runs etcd, kube-apiserver and kube-controller-manager from binDir
// in a new temporary directory and waits until they serve; then the
// simulated node, or with withNode the scheduler and a real node.
func start(binDir string, withNode bool) (_ *Cluster, err error) {
	var node *Kubelet
	if withNode {
		// Before the clock of startTimeout starts: the lock may wait.
		if node, err = newKubelet(binDir); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "landlord-kubetest-")
	if err != nil {
		return nil, errors.Join(err, node.stop())
	}
	c := &Cluster{dir: dir, bin: binDir, Kubelet: node}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	etcd, err := c.launch(binDir, "etcd",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		"--unsafe-no-fsync", "--log-level", "warn")
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, etcd, http.DefaultClient, etcdURL+"/health", nil); err != nil {
		return nil, err
	}

	if err := writeKeys(dir); err != nil {
		return nil, err
	}
	token := randomHex(16)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	audit, err := writeAuditPolicy(dir)
	if err != nil {
		return nil, err
	}
	c.host = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	api, err := c.launch(binDir, "kube-apiserver", append(audit,
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[2]), "--cert-dir", filepath.Join(dir, "certs"),
		"--endpoint-reconciler-type", "none",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range", serviceRange(withNode),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "RBAC")...)
	if err != nil {
		return nil, err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if err := waitHTTP(ctx, api, insecure, c.host+"/readyz", http.Header{"Authorization": {"Bearer " + token}}); err != nil {
		return nil, err
	}
	if c.ca, err = servingCA(filepath.Join(dir, "certs", "apiserver.crt")); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), c.ca, 0o600); err != nil {
		return nil, err
	}
	c.Admin = &rest.Config{Host: c.host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: c.ca}, QPS: 200, Burst: 400}
	if c.Client, err = kubernetes.NewForConfig(c.Admin); err != nil {
		return nil, err
	}
	admin, err := c.WriteKubeconfig("admin", c.Admin)
	if err != nil {
		return nil, err
	}

	kcm, err := c.launch(binDir, "kube-controller-manager",
		"--kubeconfig", admin, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[3]),
		"--service-account-private-key-file", filepath.Join(dir, "sa.key"),
		"--root-ca-file", filepath.Join(dir, "ca.crt"),
		"--concurrent-namespace-syncs", "20", "--concurrent-gc-syncs", "40")
	if err != nil {
		return nil, err
	}
	// The service account controller gives every namespace a default
	// service account, without which Pods are refused: the sign that the
	// controllers run.
	if err := until(ctx, kcm, "create the default service account", func() bool {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	}); err != nil {
		return nil, err
	}
	if !withNode {
		c.Node = startNode(c.Client)
		return c, nil
	}
	if _, err := c.launch(binDir, "kube-scheduler",
		"--kubeconfig", admin, "--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(ports[4])); err != nil {
		return nil, err
	}
	return c, c.Kubelet.start(ctx, c, admin)
}

// serviceRange is the Services' cluster IP range: with a real node, a
// range routed into the node's bridge, where kube-proxy turns it into Pod
// addresses (and where nothing else on the machine is), so that a cluster
// IP never leaves the machine.
func serviceRange(withNode bool) string {
	if withNode {
		return serviceSubnet
	}
	return "10.0.0.0/24"
}

// WriteKubeconfig writes a kubeconfig file for cfg, with one context named
// name, and returns its path.
func (c *Cluster) WriteKubeconfig(name string, cfg *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: name}
	kc.CurrentContext = name
	path := filepath.Join(c.dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// stop stops the servers in order (the controllers, the API server, etcd)
// and removes the directory.
func (c *Cluster) stop() error {
	var errs []error
	if c.Node != nil {
		c.Node.stop()
	}
	if c.Kubelet != nil {
		errs = append(errs, c.Kubelet.stop())
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].stop())
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}

// process is one server, a child of the test binary.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func (c *Cluster) launch(binDir, name string, args ...string) (*process, error) {
	p, err := launch(c.dir, nil, filepath.Join(binDir, name), args...)
	if err == nil {
		c.procs = append(c.procs, p)
	}
	return p, err
}

// launch starts the program at path with args and env (added to the test
// binary's), its output in a log in dir named for it.
func launch(dir string, env []string, path string, args ...string) (*process, error) {
	name := filepath.Base(path)
	logPath := filepath.Join(dir, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, so a terminal's ^C reaches only the test
	// binary; killed with the test binary should it die first.
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// alive returns an error with the end of the log once the process has
// exited.
func (p *process) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %v\n%s", p.name, p.cmd.ProcessState, p.tail())
	default:
		return nil
	}
}

// tail is the end of the process's log.
func (p *process) tail() string {
	lines, _ := testbin.LogTail(p.log, 20)
	return p.name + " log (" + p.log + "):\n" + strings.Join(lines, "\n")
}

// stop sends SIGTERM, then SIGKILL after stopTimeout.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return nil
}

// waitHTTP waits until url answers 200.
func waitHTTP(ctx context.Context, p *process, client *http.Client, url string, header http.Header) error {
	return until(ctx, p, "answer "+url, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// until waits until ok, or p exits, or ctx ends.
func until(ctx context.Context, p *process, what string, ok func() bool) error {
	for !ok() {
		if err := p.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not %s within %s\n%s", p.name, what, startTimeout, p.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// writeKeys writes the service account signing key pair.
func writeKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

// servingCA is the CA of the API server's self-signed serving certificate:
// the second certificate of the bundle it writes.
func servingCA(bundle string) ([]byte, error) {
	b, err := os.ReadFile(bundle)
	if err != nil {
		return nil, err
	}
	var certs [][]byte
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			break
		}
		certs = append(certs, pem.EncodeToMemory(block))
	}
	if len(certs) < 2 {
		return nil, fmt.Errorf("%s holds %d certificates, want the serving certificate and its CA", bundle, len(certs))
	}
	return bytes.Join(certs[1:], nil), nil
}

// freePorts returns n loopback ports free at the time of the call.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
