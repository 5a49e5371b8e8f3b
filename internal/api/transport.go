package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// TransportPolicy says which plain-HTTP requests may carry a bearer token.
type TransportPolicy struct {
	// InsecureHTTP takes tokens over plain HTTP from any peer.
	InsecureHTTP bool
	// TrustedProxies are TLS-terminating proxies: a plain-HTTP request
	// from one of them with X-Forwarded-Proto: https counts as HTTPS.
	TrustedProxies []netip.Prefix
	// CredentialPaths are path prefixes whose requests carry credentials
	// without an Authorization header (the web console's sign-in form and
	// session cookie): refused as a token is.
	CredentialPaths []string
}

// RequireSecureTokens refuses, with a 403 problem that says why, a bearer
// token sent over plain HTTP by a peer other than loopback, unless p
// allows it: the token has already crossed the network in clear text, and
// whoever saw it could use it.
func (s *Server) RequireSecureTokens(h http.Handler, p TransportPolicy) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil && p.credentialed(r) && !p.allows(r) {
			s.writeProblem(w, r, problem(http.StatusForbidden, wire.CodeForbidden,
				"landlord refuses bearer tokens sent over plain HTTP from another host: use https:// (tls.cert_file), "+
					"declare the TLS-terminating proxy in trusted_proxies, or set insecure_http: true; rotate the token, which crossed the network in clear text"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// credentialed reports whether r carries, or may carry, a credential.
func (p TransportPolicy) credentialed(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	for _, prefix := range p.CredentialPaths {
		if strings.HasPrefix(r.URL.Path, prefix) {
			return true
		}
	}
	return false
}

// allows reports whether the plain-HTTP request r may carry a token.
func (p TransportPolicy) allows(r *http.Request) bool {
	if p.InsecureHTTP {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	if addr.IsLoopback() {
		return true
	}
	if !strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")), "https") {
		return false
	}
	for _, c := range p.TrustedProxies {
		if c.Contains(addr) {
			return true
		}
	}
	return false
}
