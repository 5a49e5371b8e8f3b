//go:build unix

package examples_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// serveWithin bounds one `landlord serve` run of an example, to its start
// or its exit.
const serveWithin = time.Minute

// Each examples/<provider>/landlord.yaml either starts with `landlord serve
// --config` as shipped (on a free port of the address it names, and in a
// directory of its own), or says in its first lines what it needs: each
// need it lists stops landlord serve at start-up without it, with an error
// that names it, and with all of them it starts. What an example needs to
// do its work but not to start (a cluster, AWS credentials) it says too,
// and landlord serve's log says when it is missing.
func TestExamplesStartAsShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord and runs landlord serve on each example")
	}
	bin := servetest.Binary(t)
	for _, name := range providersInThisBuild(t) {
		t.Run(name, func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join(name, "landlord.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			needs := declaredNeeds(t, path)
			cfg, _, err := config.Load(path, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			host, _, err := net.SplitHostPort(cfg.Listen)
			if err != nil {
				t.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(servetest.FreeAddr(t))
			base := serveRun{bin: bin, config: path, listen: net.JoinHostPort(host, port), env: exampleServeEnv(t)}
			withNeeds := func(except string) serveRun {
				r := base
				r.env, r.args = slices.Clone(base.env), slices.Clone(base.args)
				for _, n := range needs {
					if n != except {
						supplies[n].give(t, &r)
					}
				}
				return r
			}

			for _, missing := range needs {
				out, started := withNeeds(missing).run(t)
				if started {
					t.Errorf("landlord serve started without %s, which the example says it needs:\n%s", missing, out)
				} else if says := supplies[missing].says; !strings.Contains(out, says) {
					t.Errorf("without %s, landlord serve stopped without saying %s:\n%s", missing, says, out)
				}
			}
			if len(needs) > 0 {
				out, started := base.run(t)
				if started {
					t.Errorf("landlord serve started as shipped, though the example says it needs %v:\n%s", needs, out)
				}
			}
			out, started := withNeeds("").run(t)
			if !started {
				t.Fatalf("landlord serve did not start with what the example says it needs (%v):\n%s", needs, out)
			}
			if want := startLogs[name]; want != "" && !strings.Contains(out, want) {
				t.Errorf("landlord serve's log does not say %q:\n%s", want, out)
			}
		})
	}
}

// startLogs is what an example's landlord serve logs at start-up in the
// test's environment, where its platform is missing.
var startLogs = map[string]string{
	"ecs": "configure AWS credentials",
}

// need is how the test supplies one need an example declares, and what
// landlord serve's error says without it.
type need struct {
	give func(t *testing.T, r *serveRun)
	says string
}

// supplies are the needs an example may declare, by the name its header
// gives each.
var supplies = map[string]need{
	"LANDLORD_ADMIN_TOKEN": {says: "LANDLORD_ADMIN_TOKEN", give: func(_ *testing.T, r *serveRun) {
		r.env = append(r.env, "LANDLORD_ADMIN_TOKEN=example-admin-token")
	}},
	"LANDLORD_SECRETS_KEY_K1": {says: "LANDLORD_SECRETS_KEY_K1", give: func(_ *testing.T, r *serveRun) {
		r.env = append(r.env, "LANDLORD_SECRETS_KEY_K1="+base64.StdEncoding.EncodeToString(make([]byte, 32)))
	}},
	"tls.cert_file": {says: "tls.cert_file", give: func(t *testing.T, r *serveRun) {
		cert, key := selfSigned(t)
		r.args = append(r.args, "--tls-cert-file", cert, "--tls-key-file", key)
	}},
	"database.url": {says: "database.url", give: func(t *testing.T, r *serveRun) {
		r.args = append(r.args, "--database", pgtest.NewDatabase(t))
	}},
}

// needsHeader starts the list of what an example needs; noNeeds says it
// needs nothing.
var (
	needsHeader = regexp.MustCompile(`^# Needs, or landlord serve stops at start-up`)
	needLine    = regexp.MustCompile(`^#   (\S+)\s+\S`)
	noNeeds     = regexp.MustCompile(`^# Needs nothing more to start`)
)

// headerLines is how far into an example its needs must be said.
const headerLines = 25

// declaredNeeds reads the needs an example's first lines list.
func declaredNeeds(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var needs []string
	listing, said := false, false
	for i := 0; i < headerLines && sc.Scan(); i++ {
		line := sc.Text()
		switch {
		case noNeeds.MatchString(line):
			said = true
		case needsHeader.MatchString(line):
			listing, said = true, true
		case listing && needLine.MatchString(line):
			n := needLine.FindStringSubmatch(line)[1]
			if _, ok := supplies[n]; !ok {
				t.Errorf("%s needs %s, which this test cannot supply: add it to supplies", path, n)
				continue
			}
			needs = append(needs, n)
		default:
			listing = false
		}
	}
	if !said {
		t.Fatalf("%s does not say in its first %d lines what it needs to start (%q, or %q and a line per need)", path, headerLines, noNeeds, needsHeader)
	}
	return needs
}

// exampleServeEnv is the environment of a newcomer's shell: nothing of
// landlord's, no AWS, Kubernetes or Nomad credentials (a home directory of
// its own), and the Docker Engine of the test's environment, if any.
func exampleServeEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir(),
		// The SDK would otherwise wait for the instance metadata service,
		// which is not routed off EC2, until the health check's time ends.
		"AWS_EC2_METADATA_DISABLED=true"}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		env = append(env, "DOCKER_HOST="+h)
	}
	return env
}

// serveRun is one `landlord serve --config` run of an example.
type serveRun struct {
	bin, config, listen string
	env, args           []string
}

// run starts landlord serve in a new directory and returns its output and
// whether it started: then it is stopped with SIGTERM, and must exit 0.
func (r serveRun) run(t *testing.T) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serveWithin)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{"serve", "--config", r.config, "--listen", r.listen}, r.args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = r.env
	out := &providertest.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	poll.Until(t, "landlord serve starts or stops", serveWithin, func() (bool, string) {
		select {
		case <-exited:
			stopped = true
			return true, ""
		default:
		}
		return strings.Contains(out.String(), `"msg":"landlord started"`), "\n" + out.String()
	})
	if stopped {
		return out.String(), false
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-exited; err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 0 {
			t.Errorf("landlord serve, stopped with SIGTERM: %v\n%s", err, out)
		}
	}
	return out.String(), true
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// and returns their paths.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "landlord"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	mustWrite(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	mustWrite(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return certFile, keyFile
}
