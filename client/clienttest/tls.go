package clienttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a test CA, a server certificate and a client certificate it
// signed, each written as PEM files in a temporary directory.
type PKI struct {
	// CAFile is the CA's certificate.
	CAFile string
	// ServerCertFile and ServerKeyFile are the server's certificate,
	// for the names given to NewPKI, and its key.
	ServerCertFile, ServerKeyFile string
	// ClientCertFile and ClientKeyFile are a client certificate, for
	// the common name "landlord-test-client", and its key.
	ClientCertFile, ClientKeyFile string
	// CAs holds the CA's certificate.
	CAs *x509.CertPool
	// Server is the server's certificate with its key.
	Server tls.Certificate
}

// NewPKI makes a CA and certificates it signs; the server's holds the
// names given (an IP address is an IP SAN, anything else a DNS one).
func NewPKI(t testing.TB, serverNames ...string) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey := mustKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "landlord test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("clienttest: CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("clienttest: CA certificate: %v", err)
	}
	p := &PKI{CAFile: filepath.Join(dir, "ca.pem"), CAs: x509.NewCertPool()}
	p.CAs.AddCert(ca)
	mustWritePEM(t, p.CAFile, "CERTIFICATE", caDER)

	leaf := func(serial int64, cn string, names []string, usage x509.ExtKeyUsage, name string) (tls.Certificate, string, string) {
		key := mustKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		for _, n := range names {
			if ip := net.ParseIP(n); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, n)
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatalf("clienttest: %s certificate: %v", name, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatalf("clienttest: %s key: %v", name, err)
		}
		certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		mustWritePEM(t, certFile, "CERTIFICATE", der)
		mustWritePEM(t, keyFile, "PRIVATE KEY", keyDER)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certFile, keyFile
	}
	p.Server, p.ServerCertFile, p.ServerKeyFile = leaf(2, "landlord test server", serverNames, x509.ExtKeyUsageServerAuth, "server")
	_, p.ClientCertFile, p.ClientKeyFile = leaf(3, "landlord-test-client", nil, x509.ExtKeyUsageClientAuth, "client")
	return p
}

// ServerTLS is a server's TLS configuration with the server certificate;
// with clientAuth other than tls.NoClientCert it asks for client
// certificates signed by the CA.
func (p *PKI) ServerTLS(clientAuth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.Server}, ClientAuth: clientAuth, ClientCAs: p.CAs, MinVersion: tls.VersionTLS12}
}

func mustKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("clienttest: key: %v", err)
	}
	return key
}

func mustWritePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("clienttest: %v", err)
	}
}
