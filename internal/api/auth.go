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
)

// Role is what a token may do.
type Role string

// Roles.
const (
	// RoleAdmin may read and write.
	RoleAdmin Role = "admin"
	// RoleReader may only read.
	RoleReader Role = "reader"
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
type principal struct {
	name string
	role Role
}

// anonymous is the principal of a server without tokens, which serves on
// loopback only (see CheckListen).
var anonymous = principal{name: "anonymous", role: RoleAdmin}

// authenticator checks bearer tokens against their hashes in constant time.
type authenticator struct {
	tokens []hashedToken
	certs  []certIdentity
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

func newAuthenticator(tokens []Token) (*authenticator, error) {
	a := &authenticator{}
	for i, t := range tokens {
		if t.Name == "" {
			return nil, fmt.Errorf("api: token %d has no name", i)
		}
		if t.Role != RoleAdmin && t.Role != RoleReader {
			return nil, fmt.Errorf("api: token %q: role %q is not admin or reader", t.Name, t.Role)
		}
		if t.CertSubject != "" || t.CertSAN != "" {
			a.certs = append(a.certs, certIdentity{subject: t.CertSubject, san: t.CertSAN, who: principal{name: t.Name, role: t.Role}})
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

// authenticate returns the request's principal, or a 401 problem.
func (a *authenticator) authenticate(r *http.Request) (principal, error) {
	if len(a.tokens) == 0 && len(a.certs) == 0 {
		return anonymous, nil
	}
	if who, ok := a.certificate(r); ok {
		return who, nil
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return principal{}, problem(http.StatusUnauthorized, CodeUnauthorized, "send a bearer token: Authorization: Bearer <token>")
	}
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
		return principal{}, problem(http.StatusUnauthorized, CodeUnauthorized, "the bearer token is not valid")
	}
	return principal{name: a.tokens[found].name, role: a.tokens[found].role}, nil
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

// ErrInsecureListen is returned by CheckListen for a server without tokens
// on an address other than loopback.
var ErrInsecureListen = errors.New("api: without tokens landlord serves on loopback only")

// CheckListen refuses to serve without tokens on anything but loopback,
// unless insecure is set.
func CheckListen(addr string, tokens []Token, insecure bool) error {
	if len(tokens) > 0 || insecure {
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
	return fmt.Errorf("%w: %q is not a loopback address; configure API tokens or pass --insecure", ErrInsecureListen, addr)
}
