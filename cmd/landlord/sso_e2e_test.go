package main

import (
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/oidc/oidctest"
)

// The CLI drives a TLS-only landlord serve with the tokens of an identity
// provider: a local issuer serves its discovery document and keys, and
// the CLI sends its JWTs as --token.
func TestCLIServeSingleSignOn(t *testing.T) {
	clearTLSEnv(t)
	iss := oidctest.New(t)
	pki := clienttest.NewPKI(t, "127.0.0.1")
	cfg := config.Defaults()
	cfg.SetComputeDefault("mock")
	cfg.TLS = config.TLS{CertFile: pki.ServerCertFile, KeyFile: pki.ServerKeyFile}
	cfg.OIDC = config.OIDC{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}, ReaderGroups: []string{"support"}}
	base, _ := startServe(t, cfg)
	addr := []string{"--addr", "https://" + strings.TrimPrefix(base, "http://"), "--ca-cert", pki.CAFile}
	cli := func(code int, token string, args ...string) cliResult {
		t.Helper()
		res := runCLI(t, nil, "", append(append(args, addr...), "--token", token)...)
		if res.code != code {
			t.Fatalf("landlord %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args[0], res.code, code, res.stdout, res.stderr)
		}
		return res
	}
	alice := iss.Token(t, oidctest.Claims{Subject: "alice@example.com", Groups: []string{"platform"}})
	bob := iss.Token(t, oidctest.Claims{Subject: "bob@example.com", Groups: "support"})

	cli(exitOK, alice, "create", "sso", "--config", "image: a")
	res := cli(exitOK, bob, "history", "sso")
	mustContain(t, "history", res.stdout, "alice@example.com")

	res = cli(exitFailure, bob, "set", "sso", "--config", "image: b")
	mustContain(t, "a reader's set", res.stderr, "identity provider token bob@example.com may only read", "needs an admin token")
	expired := iss.Token(t, oidctest.Claims{Subject: "alice@example.com", Groups: []string{"platform"}, IssuedAt: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour)})
	res = cli(exitFailure, expired, "list")
	mustContain(t, "an expired token", res.stderr, "expired at", "get a new token from your identity provider")
	other := iss.Token(t, oidctest.Claims{Subject: "alice@example.com", Groups: []string{"platform"}, Audience: []string{"grafana"}})
	res = cli(exitFailure, other, "list")
	mustContain(t, "another audience", res.stderr, `does not name "landlord"`)
}
