package main

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/config"
)

// The CLI drives a landlord serve that serves only TLS and requires client
// certificates, as a user would: the flags and variables of the CLI, the
// configuration of serve.
func TestCLIServeTLSEndToEnd(t *testing.T) {
	clearTLSEnv(t)
	pki := clienttest.NewPKI(t, "127.0.0.1", "localhost")
	cfg := config.Defaults()
	cfg.SetComputeDefault("mock")
	cfg.TLS = config.TLS{
		CertFile: pki.ServerCertFile, KeyFile: pki.ServerKeyFile,
		ClientCAFile: pki.CAFile, ClientAuth: config.ClientAuthRequire,
		ClientRoles: []config.ClientRole{{Subject: "landlord-test-client", Role: "admin", Name: "cli"}},
	}
	base, _ := startServe(t, cfg)
	addr := "https://" + strings.TrimPrefix(base, "http://")
	tlsArgs := []string{"--addr", addr, "--ca-cert", pki.CAFile, "--client-cert", pki.ClientCertFile, "--client-key", pki.ClientKeyFile}
	cli := func(code int, args ...string) cliResult {
		t.Helper()
		res := runCLI(t, nil, "", args...)
		if res.code != code {
			t.Fatalf("landlord %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, code, res.stdout, res.stderr)
		}
		return res
	}

	cli(exitOK, append([]string{"create", "over-tls", "--config", "image: a"}, tlsArgs...)...)
	res := cli(exitOK, append([]string{"get", "over-tls", "-o", "json"}, tlsArgs...)...)
	mustContain(t, "get", res.stdout, `"over-tls"`)

	// The same from the environment, with the name in the certificate.
	t.Run("env", func(t *testing.T) {
		t.Setenv("LANDLORD_ADDR", "https://localhost:"+addr[strings.LastIndex(addr, ":")+1:])
		t.Setenv("LANDLORD_CA_CERT", pki.CAFile)
		t.Setenv("LANDLORD_CLIENT_CERT", pki.ClientCertFile)
		t.Setenv("LANDLORD_CLIENT_KEY", pki.ClientKeyFile)
		res := cli(exitOK, "list")
		mustContain(t, "list", res.stdout, "over-tls")
	})
	t.Run("advice", func(t *testing.T) {
		res := cli(exitFailure, "list", "--addr", addr)
		mustContain(t, "without --ca-cert", res.stderr, "--ca-cert")
		res = cli(exitFailure, "list", "--addr", addr, "--ca-cert", pki.CAFile)
		mustContain(t, "without --client-cert", res.stderr, "--client-cert", "--client-key")
		res = cli(exitFailure, "list", "--addr", "http://"+strings.TrimPrefix(addr, "https://"))
		mustContain(t, "over http", res.stderr, "use an https:// address")
	})
}
