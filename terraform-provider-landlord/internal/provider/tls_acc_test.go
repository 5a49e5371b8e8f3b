package provider_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestAccProviderSettings configures the provider against landlord serve
// over HTTPS with client certificates and tokens: first from the
// environment variables the CLI reads alone (LANDLORD_ADDR,
// LANDLORD_CA_CERT, LANDLORD_CLIENT_CERT, LANDLORD_CLIENT_KEY), then from
// the provider block's attributes, which win over an environment that
// points elsewhere, then from LANDLORD_TOKEN, with a
// LANDLORD_TLS_SERVER_NAME the server's certificate does not hold refused.
// landlord's history names who made each change: the client
// certificate's identity, then the token's.
func TestAccProviderSettings(t *testing.T) {
	requireTerraform(t)
	pki := newPKI(t)
	const token = "tf-settings-token"
	ll := startLandlord(t, servetest.Options{Config: fmt.Sprintf(`compute:
  default: mock
  mock: {}
tls:
  cert_file: %s
  key_file: %s
  client_ca_file: %s
  client_auth: verify_if_given
  client_roles:
    - {subject: terraform-ci, role: admin, name: terraform-ci}
tokens:
  - {name: terraform-token, secret: %s, role: admin}
`, pki.serverCert, pki.serverKey, pki.caCert, token)})
	addr := "https://" + ll.Addr()
	api, err := llclient.New(llclient.Config{Address: addr, CACertFile: pki.caCert, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	actor := func(want string) func(*terraform.State) error {
		return func(*terraform.State) error {
			list, err := api.Tenants().Events(context.Background(), "acme", llclient.EventOptions{Newest: true})
			if err != nil {
				return err
			}
			for _, e := range list.Events {
				if e.Type == "created" || e.Type == "updated" {
					if e.Actor != want {
						return fmt.Errorf("the tenant's last change (%s) was made by %s, want %s", e.Type, e.Actor, want)
					}
					return nil
				}
			}
			return fmt.Errorf("the tenant's history has no change: %+v", list.Events)
		}
	}
	config := func(provider, image string) string {
		return provider + "\n" + tenantConfig(fmt.Sprintf(`jsonencode({ image = %q })`, image), "")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					t.Setenv("LANDLORD_ADDR", addr)
					t.Setenv("LANDLORD_CA_CERT", pki.caCert)
					t.Setenv("LANDLORD_CLIENT_CERT", pki.clientCert)
					t.Setenv("LANDLORD_CLIENT_KEY", pki.clientKey)
				},
				Config: config(`provider "landlord" {}`, "example.com/app:1"),
				Check:  actor("terraform-ci"),
			},
			{
				PreConfig: func() {
					// The environment now points at nothing that answers.
					t.Setenv("LANDLORD_ADDR", "https://127.0.0.1:1")
					t.Setenv("LANDLORD_CA_CERT", filepath.Join(t.TempDir(), "missing.pem"))
					t.Setenv("LANDLORD_CLIENT_CERT", "")
					t.Setenv("LANDLORD_CLIENT_KEY", "")
				},
				Config: config(fmt.Sprintf(`provider "landlord" {
  address      = %q
  ca_cert_file = %q
  token        = %q
}`, addr, pki.caCert, token), "example.com/app:2"),
				Check: actor("terraform-token"),
			},
			{
				// From the environment again: the token, and a server name
				// the certificate does not hold, which is refused.
				PreConfig: func() {
					t.Setenv("LANDLORD_ADDR", addr)
					t.Setenv("LANDLORD_CA_CERT", pki.caCert)
					t.Setenv("LANDLORD_TOKEN", token)
					t.Setenv("LANDLORD_TLS_SERVER_NAME", "elsewhere.test")
				},
				Config:      config(`provider "landlord" {}`, "example.com/app:3"),
				ExpectError: regexp.MustCompile(`(?s)Cannot\s+read\s+tenant\s+acme.*x509:.*wanted\s+to\s+match\s+elsewhere\.test`),
			},
			{
				PreConfig: func() { t.Setenv("LANDLORD_TLS_SERVER_NAME", "") },
				Config:    config(`provider "landlord" {}`, "example.com/app:3"),
				Check:     actor("terraform-token"),
			},
		},
	})
}

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate whose subject is terraform-ci, as PEM files.
type testPKI struct {
	caCert, serverCert, serverKey, clientCert, clientKey string
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := newKey()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "terraform test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, tmpl *x509.Certificate) ([]byte, []byte) {
		key := newKey()
		tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = big.NewInt(serial), now.Add(-time.Hour), now.Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return der, keyDER
	}
	serverDER, serverKey := issue(2, &x509.Certificate{Subject: pkix.Name{CommonName: "landlord"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	clientDER, clientKey := issue(3, &x509.Certificate{Subject: pkix.Name{CommonName: "terraform-ci"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return testPKI{
		caCert:     write("ca.crt", "CERTIFICATE", caDER),
		serverCert: write("server.crt", "CERTIFICATE", serverDER),
		serverKey:  write("server.key", "PRIVATE KEY", serverKey),
		clientCert: write("client.crt", "CERTIFICATE", clientDER),
		clientKey:  write("client.key", "PRIVATE KEY", clientKey),
	}
}
