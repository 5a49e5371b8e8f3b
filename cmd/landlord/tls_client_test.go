package main

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

// clearTLSEnv unsets the TLS variables for the test.
func clearTLSEnv(t *testing.T) {
	t.Helper()
	for _, env := range []string{"LANDLORD_CA_CERT", "LANDLORD_CACERT", "LANDLORD_CLIENT_CERT", "LANDLORD_CLIENT_KEY", "LANDLORD_TLS_SERVER_NAME", "LANDLORD_TOKEN"} {
		t.Setenv(env, "")
	}
}

func TestCLITLS(t *testing.T) {
	clearTLSEnv(t)
	pki := clienttest.NewPKI(t, "127.0.0.1")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.NoClientCert)})
	t.Run("ca cert", func(t *testing.T) {
		mustRunCLI(t, srv, exitOK, "", "list", "--ca-cert", pki.CAFile)
	})
	t.Run("LANDLORD_CA_CERT", func(t *testing.T) {
		t.Setenv("LANDLORD_CA_CERT", pki.CAFile)
		mustRunCLI(t, srv, exitOK, "", "list")
	})
	// The former name still works, and the new one wins over it.
	t.Run("LANDLORD_CACERT", func(t *testing.T) {
		t.Setenv("LANDLORD_CACERT", pki.CAFile)
		mustRunCLI(t, srv, exitOK, "", "list")
		t.Setenv("LANDLORD_CA_CERT", clienttest.NewPKI(t, "127.0.0.1").CAFile)
		res := mustRunCLI(t, srv, exitFailure, "", "list")
		mustContain(t, "stderr", res.stderr, "not signed by a CA in --ca-cert (or LANDLORD_CA_CERT)")
	})
	t.Run("unknown authority", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "list")
		mustContain(t, "stderr", res.stderr, "not signed by a CA this system knows", "--ca-cert (or LANDLORD_CA_CERT)")
	})
	t.Run("another CA", func(t *testing.T) {
		other := clienttest.NewPKI(t, "127.0.0.1")
		res := mustRunCLI(t, srv, exitFailure, "", "list", "--ca-cert", other.CAFile)
		mustContain(t, "stderr", res.stderr, "not signed by a CA in --ca-cert")
	})
	t.Run("plain http to the TLS port", func(t *testing.T) {
		res := runCLI(t, nil, "", "list", "--addr", "http://"+strings.TrimPrefix(srv.URL, "https://"))
		if res.code != exitFailure {
			t.Fatalf("exit %d, want %d\n%s", res.code, exitFailure, res.stderr)
		}
		mustContain(t, "stderr", res.stderr, "use an https:// address in --addr")
	})
	t.Run("missing CA file", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitUsage, "", "list", "--ca-cert", pki.CAFile+".missing")
		mustContain(t, "stderr", res.stderr, "--ca-cert (LANDLORD_CA_CERT): open")
	})
	t.Run("client cert without key", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitUsage, "", "list", "--ca-cert", pki.CAFile, "--client-cert", pki.ClientCertFile)
		mustContain(t, "stderr", res.stderr, "--client-key")
	})
}

func TestCLITLSHttpsToPlain(t *testing.T) {
	clearTLSEnv(t)
	srv := clienttest.NewServer(t, clienttest.Options{})
	res := runCLI(t, nil, "", "list", "--addr", "https://"+strings.TrimPrefix(srv.URL, "http://"))
	if res.code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s", res.code, exitFailure, res.stderr)
	}
	mustContain(t, "stderr", res.stderr, "use an http:// address")
}

func TestCLITLSServerName(t *testing.T) {
	clearTLSEnv(t)
	pki := clienttest.NewPKI(t, "landlord.internal", "landlord")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.NoClientCert)})
	res := mustRunCLI(t, srv, exitFailure, "", "list", "--ca-cert", pki.CAFile)
	mustContain(t, "stderr", res.stderr, "certificate is for landlord.internal, landlord, not 127.0.0.1", "--tls-server-name")
	mustRunCLI(t, srv, exitOK, "", "list", "--ca-cert", pki.CAFile, "--tls-server-name", "landlord.internal")
	t.Setenv("LANDLORD_TLS_SERVER_NAME", "landlord")
	mustRunCLI(t, srv, exitOK, "", "list", "--ca-cert", pki.CAFile)
}

func TestCLIMutualTLS(t *testing.T) {
	clearTLSEnv(t)
	pki := clienttest.NewPKI(t, "127.0.0.1")
	srv := clienttest.NewServer(t, clienttest.Options{TLS: pki.ServerTLS(tls.RequireAndVerifyClientCert)})
	mustRunCLI(t, srv, exitOK, "", "list", "--ca-cert", pki.CAFile, "--client-cert", pki.ClientCertFile, "--client-key", pki.ClientKeyFile)
	res := mustRunCLI(t, srv, exitFailure, "", "list", "--ca-cert", pki.CAFile)
	// The server's alert, or, when TLS 1.3 lets the request go before
	// it, the broken connection.
	mustContain(t, "stderr", res.stderr, "client certificate", "--client-cert", "--client-key")
	// A client certificate of another CA is refused.
	other := clienttest.NewPKI(t, "127.0.0.1")
	res = mustRunCLI(t, srv, exitFailure, "", "list", "--ca-cert", pki.CAFile, "--client-cert", other.ClientCertFile, "--client-key", other.ClientKeyFile)
	mustContain(t, "stderr", res.stderr, "client certificate", "--client-cert")
	t.Setenv("LANDLORD_CLIENT_CERT", pki.ClientCertFile)
	t.Setenv("LANDLORD_CLIENT_KEY", pki.ClientKeyFile)
	mustRunCLI(t, srv, exitOK, "", "list", "--ca-cert", pki.CAFile)
}
