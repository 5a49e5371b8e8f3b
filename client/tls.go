package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// hasTLS reports whether c sets any TLS setting.
func (c Config) hasTLS() bool {
	return c.CACertFile != "" || c.ClientCertFile != "" || c.ClientKeyFile != "" || c.TLSServerName != ""
}

// tlsConfig is the TLS configuration of c: nil when c sets none, so that
// the default transport's is used. It reads the files named.
func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.hasTLS() {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	if c.CACertFile != "" {
		pem, err := os.ReadFile(c.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("client: CACertFile: %w", err)
		}
		// Only the CAs of the file: a private CA's server is trusted
		// because of it, not because of a public CA (as Vault's and
		// Nomad's CA settings).
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: CACertFile: %s holds no PEM certificate", c.CACertFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case c.ClientCertFile != "" && c.ClientKeyFile != "":
		cert, err := tls.LoadX509KeyPair(c.ClientCertFile, c.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("client: ClientCertFile and ClientKeyFile: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case c.ClientCertFile != "":
		return nil, errors.New("client: ClientCertFile needs its key, ClientKeyFile")
	case c.ClientKeyFile != "":
		return nil, errors.New("client: ClientKeyFile needs its certificate, ClientCertFile")
	}
	return cfg, nil
}

// httpClient is the HTTP client of c: c.HTTPClient, or a client whose
// transport is a clone of http.DefaultTransport's with c's TLS settings.
func (c Config) httpClient() (*http.Client, error) {
	if c.HTTPClient != nil {
		if c.hasTLS() {
			// Changing the caller's transport would change it for its
			// other users; set TLS on that transport instead.
			return nil, errors.New("client: TLS settings cannot be applied to a given HTTPClient; set its transport's TLSClientConfig instead")
		}
		return c.HTTPClient, nil
	}
	tc, err := c.tlsConfig()
	if err != nil {
		return nil, err
	}
	if tc == nil {
		return &http.Client{}, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr}, nil
}
