package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// Role is what a token may do.
type Role = identity.Role

// Roles.
const (
	// RoleAdmin may read and write.
	RoleAdmin = identity.Admin
	// RoleReader may only read.
	RoleReader = identity.Reader
)

// Token is an API credential as configured: a bearer token, or, when
// CertSubject or CertSAN is set, a client certificate verified by the TLS
// handshake.
type Token struct {
	// Name identifies the token's holder; it is the actor of their changes.
	Name string
	// Secret is the token itself. Only its SHA-256 is kept once the server
	// is built.
	Secret string
	// SHA256 is the hex SHA-256 of the token, for configs that do not hold
	// the secret; used when Secret is empty.
	SHA256 string
	Role   Role
	// CertSubject matches a verified client certificate by its subject
	// common name; CertSAN by one of its SANs (DNS name, URI or email
	// address). A token with either has no secret.
	CertSubject string
	CertSAN     string
}

// principal is who sent a request.
type principal = identity.Principal

// anonymous is the principal of a server without credentials, which
// serves on loopback only (see CheckListen).
var anonymous = principal{Name: "anonymous", Role: RoleAdmin}

// credential names a principal's credential in a message: "token ops",
// "certificate ci".
func credential(who principal) string {
	if who.Kind == "" {
		return who.Name
	}
	return who.Kind + " " + who.Name
}

// authenticator checks bearer tokens against their hashes in constant
// time, client certificates against their mappings, and other bearer
// tokens with the verifier.
type authenticator struct {
	tokens   []hashedToken
	certs    []certIdentity
	verifier identity.TokenVerifier
}

// certIdentity maps a client certificate to a principal.
type certIdentity struct {
	subject, san string
	who          principal
}

type hashedToken struct {
	name string
	sum  [sha256.Size]byte
	role Role
}

func newAuthenticator(tokens []Token, verifier identity.TokenVerifier) (*authenticator, error) {
	a := &authenticator{verifier: verifier}
	for i, t := range tokens {
		if t.Name == "" {
			return nil, fmt.Errorf("api: token %d has no name", i)
		}
		if strings.ContainsFunc(t.Name, unicode.IsControl) {
			return nil, fmt.Errorf("api: token %q: its name holds a control character", t.Name)
		}
		if !t.Role.Valid() {
			return nil, fmt.Errorf("api: token %q: role %q is not admin or reader", t.Name, t.Role)
		}
		if t.CertSubject != "" || t.CertSAN != "" {
			a.certs = append(a.certs, certIdentity{subject: t.CertSubject, san: t.CertSAN, who: principal{Name: t.Name, Role: t.Role, Kind: identity.KindCertificate}})
			continue
		}
		h := hashedToken{name: t.Name, role: t.Role}
		switch {
		case t.Secret != "":
			h.sum = sha256.Sum256([]byte(t.Secret))
		case t.SHA256 != "":
			b, err := hex.DecodeString(t.SHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("api: token %q: sha256 must be 64 hex digits", t.Name)
			}
			copy(h.sum[:], b)
		default:
			return nil, fmt.Errorf("api: token %q has neither a secret nor a sha256", t.Name)
		}
		a.tokens = append(a.tokens, h)
	}
	return a, nil
}

// authenticate returns the request's principal, or a 401 problem (a 403
// or 503 one for an identity provider's token that maps to no role or
// cannot be checked now).
func (a *authenticator) authenticate(r *http.Request) (principal, error) {
	if !a.authenticates() {
		return anonymous, nil
	}
	if who, ok := a.certificate(r); ok {
		return who, nil
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return principal{}, problem(http.StatusUnauthorized, wire.CodeUnauthorized, "send a bearer token: Authorization: Bearer <token>")
	}
	if who, ok := a.token(token); ok {
		return who, nil
	}
	if a.verifier == nil || strings.Count(token, ".") != 2 {
		return principal{}, problem(http.StatusUnauthorized, wire.CodeUnauthorized, "the bearer token is not valid")
	}
	who, err := a.verifier.VerifyToken(r.Context(), token)
	switch {
	case err == nil:
		return who, nil
	case errors.Is(err, identity.ErrNoRole):
		return principal{}, problem(http.StatusForbidden, wire.CodeForbidden, err.Error())
	case errors.Is(err, identity.ErrUnavailable):
		// The cause (the identity provider's address, its answer) is
		// logged by the verifier.
		return principal{}, problem(http.StatusServiceUnavailable, wire.CodeIdentityUnavailable, "landlord cannot fetch the identity provider's keys to check this token now; retry after Retry-After seconds")
	default:
		return principal{}, problem(http.StatusUnauthorized, wire.CodeUnauthorized, err.Error())
	}
}

// authenticates reports whether the server has credentials: tokens,
// certificate identities or an identity provider. Without, every request
// is the anonymous admin.
func (a *authenticator) authenticates() bool {
	return len(a.tokens) > 0 || len(a.certs) > 0 || a.verifier != nil
}

// signIn authenticates r and records who sent it, or writes the problem
// and reports false.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) (principal, bool) {
	who, err := s.auth.authenticate(r)
	if err != nil {
		if p, ok := err.(*wire.Problem); ok {
			switch {
			case p.Status == http.StatusUnauthorized && r.Header.Get("Authorization") == "":
				w.Header().Set("WWW-Authenticate", `Bearer realm="landlord"`)
			case p.Status == http.StatusUnauthorized:
				// RFC 6750: a token was sent, and is not one.
				w.Header().Set("WWW-Authenticate", `Bearer realm="landlord", error="invalid_token"`)
			case p.Code == wire.CodeIdentityUnavailable:
				w.Header().Set("Retry-After", identityRetryAfter)
			}
		}
		s.writeProblem(w, r, err)
		return principal{}, false
	}
	info(r).actor = who.Name
	info(r).role = who.Role
	info(r).kind = who.Kind
	return who, true
}

// identityRetryAfter is the Retry-After of a token that cannot be
// checked now: the verifier asks the identity provider again at most every
// 10 seconds (oidc.DefaultMinRefresh).
const identityRetryAfter = "10"

// token returns the principal of one of landlord's own tokens.
func (a *authenticator) token(token string) (principal, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i, t := range a.tokens {
		// Compare with every token, so that timing says nothing of which
		// one matched.
		if subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return principal{}, false
	}
	return principal{Name: a.tokens[found].name, Role: a.tokens[found].role, Kind: identity.KindToken}, true
}

// certificate returns the principal of the request's client certificate,
// when the handshake verified one that a certificate identity maps.
func (a *authenticator) certificate(r *http.Request) (principal, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.PeerCertificates) == 0 {
		return principal{}, false
	}
	leaf := r.TLS.PeerCertificates[0]
	for _, c := range a.certs {
		if c.subject != "" && leaf.Subject.CommonName == c.subject {
			return c.who, true
		}
		if c.san != "" && hasSAN(leaf, c.san) {
			return c.who, true
		}
	}
	return principal{}, false
}

// hasSAN reports whether cert names san as a DNS name, URI or email
// address.
func hasSAN(cert *x509.Certificate, san string) bool {
	if slices.Contains(cert.DNSNames, san) || slices.Contains(cert.EmailAddresses, san) {
		return true
	}
	for _, u := range cert.URIs {
		if u.String() == san {
			return true
		}
	}
	return false
}

// ErrInsecureListen is returned by CheckListen for a server without
// credentials on an address other than loopback.
var ErrInsecureListen = errors.New("api: without tokens landlord serves on loopback only")

// CheckListen refuses to serve on anything but loopback a server that
// authenticates no one (no tokens, certificate identities or identity
// provider), unless insecure is set.
func CheckListen(addr string, authenticates bool, insecure bool) error {
	if authenticates || insecure {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("api: listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q is not a loopback address; configure API tokens (or oidc, or tls.client_roles) or pass --insecure", ErrInsecureListen, addr)
}
