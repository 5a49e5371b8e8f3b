package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/config"
)

// serverTLS is the API's TLS configuration: Go's defaults from TLS 1.2,
// the certificate read again when its files change, and client
// certificates verified against tls.client_ca_file when set.
func serverTLS(c config.TLS, log *slog.Logger) (*tls.Config, error) {
	certs, err := newCertReloader(c.CertFile, c.KeyFile, log)
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
	if c.ClientCAFile != "" {
		pool, err := certPool("tls.client_ca_file", c.ClientCAFile)
		if err != nil {
			return nil, err
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.VerifyClientCertIfGiven
		if c.ClientAuth == config.ClientAuthRequire {
			tc.ClientAuth = tls.RequireAndVerifyClientCert
		}
	}
	return tc, nil
}

// certPool reads the PEM CAs of file, which the configuration names key.
func certPool(key, file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", key, file)
	}
	return pool, nil
}

// clientRoleTokens are the client certificate identities of tls.client_roles.
func clientRoleTokens(roles []config.ClientRole) []api.Token {
	out := make([]api.Token, len(roles))
	for i, r := range roles {
		out[i] = api.Token{Name: r.Name, Role: api.Role(r.Role), CertSubject: r.Subject, CertSAN: r.SAN}
	}
	return out
}

// certReloader serves a certificate and key pair from files, read again
// when either file's modification time or size changes (cert-manager and
// the like replace them in place): a stat of each per handshake, cheap
// beside the handshake. A new pair that does not load leaves the old one
// served, with a warning.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp [2]fileStamp
}

// fileStamp is what tells that a file changed.
type fileStamp struct {
	mod  time.Time
	size int64
}

func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	stamp, err := r.stat()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s and tls.key_file %s do not load as a certificate and its key: %w", certFile, keyFile, err)
	}
	r.cert, r.stamp = &cert, stamp
	return r, nil
}

// tlsFileKeys name the configuration keys, flags and variables of the
// certificate and key files, in the order stat reads them.
var tlsFileKeys = [2]string{"tls.cert_file (--tls-cert-file, LANDLORD_TLS_CERT_FILE)", "tls.key_file (--tls-key-file, LANDLORD_TLS_KEY_FILE)"}

// stat reads the files' stamps; an error names the file's key.
func (r *certReloader) stat() ([2]fileStamp, error) {
	var s [2]fileStamp
	for i, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return s, fmt.Errorf("%s: %w", tlsFileKeys[i], err)
		}
		s[i] = fileStamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return s, nil
}

// GetCertificate serves the current pair, reading it again first if its
// files changed.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp, err := r.stat()
	if err != nil || stamp == r.stamp {
		// A file missing for a moment (being replaced) keeps the old pair.
		return r.cert, nil
	}
	// Remember the files as seen, so that a bad pair is tried once per
	// change, not once per handshake.
	r.stamp = stamp
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Warn("the TLS certificate files changed but do not load: still serving the previous certificate",
			slog.String("cert_file", r.certFile), slog.String("key_file", r.keyFile), slog.Any("error", err))
		return r.cert, nil
	}
	r.cert = &cert
	r.log.Info("TLS certificate reloaded", slog.String("cert_file", r.certFile))
	return r.cert, nil
}
