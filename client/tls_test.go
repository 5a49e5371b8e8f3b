package client_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestTLS(t *testing.T) {
	pki := clienttest.NewPKI(t, "127.0.0.1", "localhost")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.NoClientCert)})
	if !strings.HasPrefix(srv.URL, "https://") {
		t.Fatalf("URL %s: want https", srv.URL)
	}
	list := func(t *testing.T, cfg client.Config) error {
		t.Helper()
		cfg.Address = srv.URL
		c, err := client.New(cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		_, err = c.Tenants().List(ctx, client.ListOptions{})
		return err
	}
	t.Run("ca cert", func(t *testing.T) {
		if err := list(t, client.Config{CACertFile: pki.CAFile}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown authority", func(t *testing.T) {
		err := list(t, client.Config{})
		var ua x509.UnknownAuthorityError
		if !errors.As(err, &ua) {
			t.Fatalf("got %v (%T), want an x509.UnknownAuthorityError", err, err)
		}
	})
	t.Run("other CA", func(t *testing.T) {
		other := clienttest.NewPKI(t, "127.0.0.1")
		var ua x509.UnknownAuthorityError
		if err := list(t, client.Config{CACertFile: other.CAFile}); !errors.As(err, &ua) {
			t.Fatalf("got %v, want an x509.UnknownAuthorityError", err)
		}
	})
	t.Run("server name", func(t *testing.T) {
		if err := list(t, client.Config{CACertFile: pki.CAFile, TLSServerName: "localhost"}); err != nil {
			t.Fatal(err)
		}
		var he x509.HostnameError
		if err := list(t, client.Config{CACertFile: pki.CAFile, TLSServerName: "landlord.example"}); !errors.As(err, &he) {
			t.Fatalf("got %v, want an x509.HostnameError", err)
		}
	})
}

func TestTLSHostnameMismatch(t *testing.T) {
	pki := clienttest.NewPKI(t, "landlord.internal")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.NoClientCert)})
	c, err := client.New(client.Config{Address: srv.URL, CACertFile: pki.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tenants().List(ctx, client.ListOptions{})
	var he x509.HostnameError
	if !errors.As(err, &he) {
		t.Fatalf("got %v, want an x509.HostnameError", err)
	}
	c, err = client.New(client.Config{Address: srv.URL, CACertFile: pki.CAFile, TLSServerName: "landlord.internal"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tenants().List(ctx, client.ListOptions{}); err != nil {
		t.Fatalf("with TLSServerName: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	pki := clienttest.NewPKI(t, "127.0.0.1")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.RequireAndVerifyClientCert)})
	c, err := client.New(client.Config{Address: srv.URL, CACertFile: pki.CAFile, ClientCertFile: pki.ClientCertFile, ClientKeyFile: pki.ClientKeyFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tenants().List(ctx, client.ListOptions{}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	c, err = client.New(client.Config{Address: srv.URL, CACertFile: pki.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tenants().List(ctx, client.ListOptions{})
	// The server's alert arrives as a *net.OpError "remote error"; its
	// alert type is not exported. With TLS 1.3 the client may send its
	// request before the server refuses it, and see only the connection
	// broken.
	var oe *net.OpError
	alert := errors.As(err, &oe) && oe.Op == "remote error" && strings.Contains(err.Error(), "certificate required")
	if !alert && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("without a client certificate: got %v, want the remote error certificate required", err)
	}
}

func TestPlainHTTPToTLS(t *testing.T) {
	pki := clienttest.NewPKI(t, "127.0.0.1")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.NoClientCert)})
	c, err := client.New(client.Config{Address: "http://" + strings.TrimPrefix(srv.URL, "https://")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tenants().List(ctx, client.ListOptions{})
	// Go's server answers plain HTTP on a TLS port with a 400 in plain
	// text.
	e := mustAPIError(t, err, http.StatusBadRequest, "")
	if !strings.Contains(e.Problem.Detail, "HTTP request to an HTTPS server") {
		t.Errorf("detail %q", e.Problem.Detail)
	}
}

func TestTLSConfigErrors(t *testing.T) {
	pki := clienttest.NewPKI(t, "127.0.0.1")
	for _, tt := range []struct {
		name string
		cfg  client.Config
		want string
	}{
		{"missing CA file", client.Config{CACertFile: pki.CAFile + ".missing"}, "CACertFile: open"},
		{"CA file without PEM", client.Config{CACertFile: pki.ClientKeyFile}, "holds no PEM certificate"},
		{"cert without key", client.Config{ClientCertFile: pki.ClientCertFile}, "ClientCertFile needs its key"},
		{"key without cert", client.Config{ClientKeyFile: pki.ClientKeyFile}, "ClientKeyFile needs its certificate"},
		{"key of another cert", client.Config{ClientCertFile: pki.ClientCertFile, ClientKeyFile: pki.ServerKeyFile}, "ClientCertFile and ClientKeyFile"},
		{"HTTPClient with TLS", client.Config{HTTPClient: &http.Client{}, CACertFile: pki.CAFile}, "given HTTPClient"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
