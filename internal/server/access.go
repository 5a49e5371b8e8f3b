package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/identity"
)

// access is who may use the API and how it is reached, settled before
// anything is bound or opened.
type access struct {
	// tokens are the configuration's tokens and client certificate
	// identities.
	tokens []api.Token
	// verifier checks an identity provider's tokens; nil without one.
	verifier identity.TokenVerifier
	// proxies are the trusted TLS-terminating proxies.
	proxies []netip.Prefix
	// tls serves HTTPS; nil serves plain HTTP.
	tls *tls.Config
}

// checkAccess reads the credentials and the TLS settings of cfg, and
// refuses a listen address they do not allow: an address off loopback
// without credentials, or plain HTTP off loopback without a switch.
// Every error is of the configuration.
func checkAccess(ctx context.Context, cfg config.Config, log *slog.Logger) (access, error) {
	a := access{tokens: make([]api.Token, len(cfg.Tokens))}
	for i, t := range cfg.Tokens {
		a.tokens[i] = api.Token{Name: t.Name, Secret: t.Secret, SHA256: t.SHA256, Role: api.Role(t.Role)}
	}
	a.tokens = append(a.tokens, clientRoleTokens(cfg.TLS.ClientRoles)...)
	var err error
	if a.verifier, err = newVerifier(ctx, cfg.OIDC, log); err != nil {
		return a, refused(err)
	}
	if err := api.CheckListen(cfg.Listen, len(a.tokens) > 0 || a.verifier != nil, cfg.Insecure); err != nil {
		return a, refused(fmt.Errorf("%w (tokens: in the configuration file, or LANDLORD_ADMIN_TOKEN and LANDLORD_READER_TOKEN)", err))
	}
	if err := cfg.CheckPlainHTTP(); err != nil {
		return a, refused(err)
	}
	if a.proxies, err = cfg.Proxies(); err != nil {
		return a, refused(err)
	}
	if cfg.TLS.Enabled() {
		if a.tls, err = serverTLS(cfg.TLS, log); err != nil {
			return a, refused(err)
		}
	} else if !config.LoopbackListen(cfg.Listen) {
		log.Warn("serving plain HTTP on a non-loopback address: tokens and secrets cross the network in clear text unless a TLS-terminating proxy (trusted_proxies) is in front; set tls.cert_file and tls.key_file to serve HTTPS", slog.String("listen", cfg.Listen))
	}
	return a, nil
}

// describe says in the start-up line how requests are authenticated.
func (a access) describe(insecure bool) string {
	switch {
	case len(a.tokens) > 0:
		return "tokens"
	case insecure:
		return "none (insecure)"
	default:
		return "none (loopback only)"
	}
}
