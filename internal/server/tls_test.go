package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// serveCA is a certificate authority made in the test.
type serveCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func mustServeCA(t *testing.T) *serveCA {
	t.Helper()
	key := mustECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "landlord test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &serveCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func mustECKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// pool is a pool holding the CA alone.
func (ca *serveCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue signs a leaf certificate with serial: for a server, of the
// loopback address; else a client's, with subject cn and the SANs given
// (a URI when it has "://", an email address when it has "@", else a DNS
// name). It returns the certificate's and the key's PEM.
func (ca *serveCA) issue(t *testing.T, serial int64, cn string, server bool, sans ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key := mustECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, san := range sans {
		switch {
		case strings.Contains(san, "://"):
			u, err := url.Parse(san)
			if err != nil {
				t.Fatal(err)
			}
			tmpl.URIs = append(tmpl.URIs, u)
		case strings.Contains(san, "@"):
			tmpl.EmailAddresses = append(tmpl.EmailAddresses, san)
		default:
			tmpl.DNSNames = append(tmpl.DNSNames, san)
		}
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// clientCert is a client certificate for cn, with sans, signed by ca.
func (ca *serveCA) clientCert(t *testing.T, cn string, sans ...string) tls.Certificate {
	t.Helper()
	c, k := ca.issue(t, 100, cn, false, sans...)
	cert, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// mustWriteAt writes b to path with its modification time set to mod, so
// that a change is seen whatever the file system's clock granularity.
func mustWriteAt(t *testing.T, path string, b []byte, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// tlsServeConfig writes a server certificate with serial 1, and the CA
// beside it (ca.crt), and returns the configuration that serves it with
// an admin token.
func tlsServeConfig(t *testing.T, ca *serveCA) config.Config {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	c, k := ca.issue(t, 1, "landlord", true)
	mod := time.Now().Add(-time.Minute)
	mustWriteAt(t, certFile, c, mod)
	mustWriteAt(t, keyFile, k, mod)
	mustWriteAt(t, filepath.Join(dir, "ca.crt"), ca.pem, mod)
	cfg := config.Defaults()
	cfg.Tokens = []config.Token{{Name: "ops", Secret: "admin-secret", Role: "admin"}}
	cfg.TLS = config.TLS{CertFile: certFile, KeyFile: keyFile}
	cfg.SetComputeDefault("mock")
	return cfg
}

// httpsClient trusts ca, presents certs, and opens a new connection for
// every request (each one a handshake).
func httpsClient(ca *serveCA, certs ...tls.Certificate) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool(), Certificates: certs},
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true,
	}}
}

// send sends method to url with token (none when ""), and returns the
// response, its body closed.
func send(t *testing.T, c *http.Client, method, url, token string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// whoamiOver returns "name role" of GET /v1/whoami.
func whoamiOver(t *testing.T, c *http.Client, url, token string) string {
	t.Helper()
	req, err := http.NewRequest("GET", url+"/v1/whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/whoami: %v", err)
	}
	defer resp.Body.Close()
	var id struct{ Name, Role string }
	if err := json.NewDecoder(resp.Body).Decode(&id); err != nil {
		t.Fatalf("GET /v1/whoami = %d: %v", resp.StatusCode, err)
	}
	return id.Name + " " + id.Role
}

func httpsURL(base string) string { return "https://" + strings.TrimPrefix(base, "http://") }

func TestServeTLS(t *testing.T) {
	ca := mustServeCA(t)
	base, logs := startServe(t, tlsServeConfig(t, ca))
	url := httpsURL(base)

	resp, err := send(t, httpsClient(ca), "GET", url+"/v1/tenants", "admin-secret")
	if err != nil {
		t.Fatalf("GET over TLS: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/tenants = %d, want 200", resp.StatusCode)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2", resp.Proto)
	}
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("TLS state %+v, want TLS 1.2 or later", resp.TLS)
	}
	if !strings.Contains(logs.String(), `"address":"https://`) {
		t.Errorf("the start-up line does not say https:\n%s", logs)
	}
	// TLS 1.1 is refused.
	old := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool(), MaxVersion: tls.VersionTLS11}}}
	if _, err := send(t, old, "GET", url+"/healthz", ""); err == nil {
		t.Error("a TLS 1.1 client was served")
	}
	// Plain HTTP to the TLS port is not served.
	if resp, err := send(t, &http.Client{Timeout: 5 * time.Second}, "GET", base+"/v1/tenants", "admin-secret"); err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("plain HTTP to the TLS port answered 200")
	}
}

func TestServeTLSReloadsCertificate(t *testing.T) {
	ca := mustServeCA(t)
	cfg := tlsServeConfig(t, ca)
	base, logs := startServe(t, cfg)
	url := httpsURL(base) + "/healthz"
	serial := func() int64 {
		t.Helper()
		resp, err := send(t, httpsClient(ca), "GET", url, "")
		if err != nil {
			t.Fatalf("GET /healthz: %v", err)
		}
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if got := serial(); got != 1 {
		t.Fatalf("serial %d before rotation, want 1", got)
	}

	c, k := ca.issue(t, 2, "landlord", true)
	now := time.Now()
	mustWriteAt(t, cfg.TLS.CertFile, c, now)
	mustWriteAt(t, cfg.TLS.KeyFile, k, now)
	if got := serial(); got != 2 {
		t.Errorf("serial %d after rotation, want 2", got)
	}

	// A pair that does not load keeps the previous certificate served.
	mustWriteAt(t, cfg.TLS.CertFile, []byte("not a certificate"), now.Add(time.Second))
	if got := serial(); got != 2 {
		t.Errorf("serial %d after a bad rotation, want 2 still", got)
	}
	if !strings.Contains(logs.String(), "do not load") {
		t.Errorf("no warning for the bad pair:\n%s", logs)
	}
}

func TestServeClientCertificates(t *testing.T) {
	ca := mustServeCA(t)
	admin, reader := ca.clientCert(t, "deployer"), ca.clientCert(t, "someone", "auditor.example.com")
	stranger := ca.clientCert(t, "nobody", "nobody.example.com")
	bySPIFFE, byEmail := ca.clientCert(t, "x", "spiffe://example.org/deployer"), ca.clientCert(t, "y", "ops@example.com")
	other := mustServeCA(t).clientCert(t, "deployer")
	roles := []config.ClientRole{
		{Subject: "deployer", Role: "admin", Name: "ci"},
		{SAN: "auditor.example.com", Role: "reader", Name: "audit"},
		{SAN: "spiffe://example.org/deployer", Role: "admin", Name: "spiffe-ci"},
		{SAN: "ops@example.com", Role: "reader", Name: "ops-desk"},
	}
	withClientCA := func(t *testing.T, auth string) string {
		cfg := tlsServeConfig(t, ca)
		cfg.TLS.ClientCAFile = filepath.Join(filepath.Dir(cfg.TLS.CertFile), "ca.crt")
		cfg.TLS.ClientAuth = auth
		cfg.TLS.ClientRoles = roles
		base, _ := startServe(t, cfg)
		return httpsURL(base)
	}

	t.Run("require", func(t *testing.T) {
		url := withClientCA(t, config.ClientAuthRequire)
		if _, err := send(t, httpsClient(ca), "GET", url+"/v1/whoami", "admin-secret"); err == nil {
			t.Error("a client without a certificate was served")
		}
		if _, err := send(t, httpsClient(ca, other), "GET", url+"/v1/whoami", ""); err == nil {
			t.Error("a client with a certificate of another CA was served")
		}
		if got := whoamiOver(t, httpsClient(ca, admin), url, ""); got != "ci admin" {
			t.Errorf("whoami with the admin certificate (by subject) = %q, want ci admin", got)
		}
		if got := whoamiOver(t, httpsClient(ca, reader), url, ""); got != "audit reader" {
			t.Errorf("whoami with the reader certificate (by SAN) = %q, want audit reader", got)
		}
		if got := whoamiOver(t, httpsClient(ca, bySPIFFE), url, ""); got != "spiffe-ci admin" {
			t.Errorf("whoami with a URI SAN = %q, want spiffe-ci admin", got)
		}
		if got := whoamiOver(t, httpsClient(ca, byEmail), url, ""); got != "ops-desk reader" {
			t.Errorf("whoami with an email SAN = %q, want ops-desk reader", got)
		}
		resp, err := httpsClient(ca, reader).Post(url+"/v1/tenants", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "certificate audit may only read") {
			t.Errorf("POST /v1/tenants with the reader certificate = %d %s, want 403 naming the certificate", resp.StatusCode, body)
		}
		// The certificate's name is the actor in the history.
		admins := httpsClient(ca, admin)
		req, err := http.NewRequest("POST", url+"/v1/tenants", strings.NewReader(`{"name":"acme","compute_config":{"image":"example.com/app:1"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		created, err := admins.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		created.Body.Close()
		if created.StatusCode/100 != 2 {
			t.Fatalf("POST /v1/tenants with the admin certificate = %d", created.StatusCode)
		}
		events, err := admins.Get(url + "/v1/tenants/acme/events")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(events.Body)
		events.Body.Close()
		if !strings.Contains(string(body), `"actor":"ci"`) {
			t.Errorf("the history does not name the certificate's actor ci: %s", body)
		}
		// A verified certificate that no role maps needs a token.
		if resp, err := send(t, httpsClient(ca, stranger), "GET", url+"/v1/whoami", ""); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("an unmapped certificate without a token = %v, %v; want 401", resp, err)
		}
		if got := whoamiOver(t, httpsClient(ca, stranger), url, "admin-secret"); got != "ops admin" {
			t.Errorf("whoami with an unmapped certificate and a token = %q, want ops admin", got)
		}
	})

	t.Run("verify_if_given", func(t *testing.T) {
		url := withClientCA(t, config.ClientAuthVerifyIfGiven)
		if got := whoamiOver(t, httpsClient(ca), url, "admin-secret"); got != "ops admin" {
			t.Errorf("whoami with a token and no certificate = %q, want ops admin", got)
		}
		if resp, err := send(t, httpsClient(ca), "GET", url+"/v1/whoami", ""); err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("neither certificate nor token = %v, %v; want 401", resp, err)
		}
		if got := whoamiOver(t, httpsClient(ca, admin), url, ""); got != "ci admin" {
			t.Errorf("whoami with the admin certificate = %q, want ci admin", got)
		}
		if _, err := send(t, httpsClient(ca, other), "GET", url+"/v1/whoami", ""); err == nil {
			t.Error("a certificate of another CA was accepted")
		}
	})
}

// A TLS file that cannot be read fails start-up naming its configuration
// key, flag and variable; a pair that does not load names both keys.
func TestServeNamesTheMissingTLSFile(t *testing.T) {
	ca := mustServeCA(t)
	for _, tt := range []struct {
		name   string
		mutate func(c *config.TLS)
		want   []string
	}{
		{"certificate missing", func(c *config.TLS) { c.CertFile = filepath.Join(t.TempDir(), "tls.crt") },
			[]string{"tls.cert_file", "--tls-cert-file", "LANDLORD_TLS_CERT_FILE", "tls.crt", "no such file"}},
		{"key missing", func(c *config.TLS) { c.KeyFile = filepath.Join(t.TempDir(), "tls.key") },
			[]string{"tls.key_file", "--tls-key-file", "LANDLORD_TLS_KEY_FILE", "tls.key", "no such file"}},
		{"key of another certificate", func(c *config.TLS) {
			_, k := ca.issue(t, 2, "other", true)
			c.KeyFile = filepath.Join(t.TempDir(), "other.key")
			mustWriteAt(t, c.KeyFile, k, time.Now())
		}, []string{"tls.cert_file", "tls.key_file", "do not load"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tlsServeConfig(t, ca)
			tt.mutate(&cfg.TLS)
			cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
			err := serve(context.Background(), cfg, &providertest.LogBuffer{})
			if err == nil {
				t.Fatal("serve started without its TLS files")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %s: %v", want, err)
				}
			}
			if _, err := os.Stat(cfg.Database.Path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database file was created: %v", err)
			}
		})
	}
}
