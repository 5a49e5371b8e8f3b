// Package oidctest runs an OpenID Connect issuer for tests: a discovery
// document and a key set served over HTTP on loopback, and tokens signed
// with its keys. It speaks the wire protocol landlord's verifier reads, so
// tests need no network and no identity provider.
package oidctest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Audience is the audience of the issuer's tokens unless a token says
// otherwise.
const Audience = "landlord"

// Issuer is a test identity provider.
type Issuer struct {
	// URL is the issuer, as its tokens name it.
	URL string

	mu      sync.Mutex
	keys    []key // every key made; the last one signs
	fetches atomic.Int64
	down    atomic.Bool
	hold    chan struct{} // while open, requests wait for it to close
}

type key struct {
	id      string
	retired bool // no longer published
	alg     jose.SignatureAlgorithm
	signer  crypto.Signer
}

// New starts an issuer with one RSA signing key; it stops when the test
// ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{}
	srv := httptest.NewServer(http.HandlerFunc(iss.serve))
	t.Cleanup(srv.Close)
	iss.URL = srv.URL
	iss.Rotate(t, jose.RS256)
	return iss
}

func (iss *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	iss.mu.Lock()
	hold := iss.hold
	iss.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if iss.down.Load() {
		http.Error(w, "the issuer is down", http.StatusServiceUnavailable)
		return
	}
	var doc any
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		doc = map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/keys", "id_token_signing_alg_values_supported": []string{"RS256", "ES256"}}
	case "/keys":
		iss.fetches.Add(1)
		doc = iss.KeySet()
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// KeySet returns the published public keys.
func (iss *Issuer) KeySet() jose.JSONWebKeySet {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, k := range iss.keys {
		if k.retired {
			continue
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.signer.Public(), KeyID: k.id, Algorithm: string(k.alg), Use: "sig"})
	}
	return set
}

// Rotate publishes a new key for alg (RS256 or ES256), which signs the
// tokens from now on, and returns its id. The keys before it stay
// published until Retire.
func (iss *Issuer) Rotate(t testing.TB, alg jose.SignatureAlgorithm) string {
	t.Helper()
	var signer crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("oidctest: no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	k := key{id: fmt.Sprintf("key-%d", len(iss.keys)+1), alg: alg, signer: signer}
	iss.keys = append(iss.keys, k)
	return k.id
}

// Retire stops publishing every key but the signing one.
func (iss *Issuer) Retire() {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for i := range iss.keys[:len(iss.keys)-1] {
		iss.keys[i].retired = true
	}
}

// Signer returns the signing key, for tokens a test shapes itself (an
// extra header, a payload the issuer would not write).
func (iss *Issuer) Signer() crypto.Signer {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.keys[len(iss.keys)-1].signer
}

// Fetches counts the requests for the key set.
func (iss *Issuer) Fetches() int { return int(iss.fetches.Load()) }

// Hang makes every request wait until release is called (or the test
// ends): an issuer whose traffic is dropped.
func (iss *Issuer) Hang(t testing.TB) (release func()) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	hold := make(chan struct{})
	iss.hold = hold
	var once sync.Once
	release = func() {
		once.Do(func() {
			iss.mu.Lock()
			iss.hold = nil
			iss.mu.Unlock()
			close(hold)
		})
	}
	t.Cleanup(release)
	return release
}

// SetDown makes the issuer answer 503 to everything, or not.
func (iss *Issuer) SetDown(down bool) { iss.down.Store(down) }

// Claims are a token's claims. Zero values take defaults: the issuer's
// URL, Audience, an expiry an hour after IssuedAt (itself now).
type Claims struct {
	Issuer    string
	Subject   string
	Audience  []string
	Groups    any // []string, a string, or anything to break the claim
	IssuedAt  time.Time
	NotBefore time.Time
	Expiry    time.Time
	// NoExpiry leaves exp out.
	NoExpiry bool
	// Extra claims are added as they are.
	Extra map[string]any
}

// Token returns a token with c, signed by the signing key.
func (iss *Issuer) Token(t testing.TB, c Claims) string {
	t.Helper()
	iss.mu.Lock()
	k := iss.keys[len(iss.keys)-1]
	iss.mu.Unlock()
	return Sign(t, k.signer, k.alg, k.id, iss.claims(c))
}

// TokenBy returns a token with c signed by the key with id kid, retired
// or not.
func (iss *Issuer) TokenBy(t testing.TB, kid string, c Claims) string {
	t.Helper()
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for _, k := range iss.keys {
		if k.id == kid {
			return Sign(t, k.signer, k.alg, k.id, iss.claims(c))
		}
	}
	t.Fatalf("oidctest: no key %q", kid)
	return ""
}

func (iss *Issuer) claims(c Claims) map[string]any {
	if c.Issuer == "" {
		c.Issuer = iss.URL
	}
	if c.Audience == nil {
		c.Audience = []string{Audience}
	}
	if c.IssuedAt.IsZero() {
		c.IssuedAt = time.Now()
	}
	if c.Expiry.IsZero() {
		c.Expiry = c.IssuedAt.Add(time.Hour)
	}
	m := map[string]any{"iss": c.Issuer, "sub": c.Subject, "aud": c.Audience, "iat": c.IssuedAt.Unix()}
	if !c.NoExpiry {
		m["exp"] = c.Expiry.Unix()
	}
	if !c.NotBefore.IsZero() {
		m["nbf"] = c.NotBefore.Unix()
	}
	if c.Groups != nil {
		m["groups"] = c.Groups
	}
	for k, v := range c.Extra {
		m[k] = v
	}
	return m
}

// Sign returns a compact JWT of claims signed by signer with alg and key
// id kid (none when empty): for tokens the issuer would not sign.
func Sign(t testing.TB, signer any, alg jose.SignatureAlgorithm, kid string, claims map[string]any) string {
	t.Helper()
	return SignTyped(t, signer, alg, kid, "JWT", claims)
}

// SignTyped is Sign with the typ header typ.
func SignTyped(t testing.TB, signer any, alg jose.SignatureAlgorithm, kid, typ string, claims map[string]any) string {
	t.Helper()
	key := jose.SigningKey{Algorithm: alg, Key: signer}
	if kid != "" {
		key.Key = jose.JSONWebKey{Key: signer, KeyID: kid, Algorithm: string(alg)}
	}
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
