package oidc

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/jaxxstorm/landlord/internal/identity"
)

// Algorithms are the signature algorithms accepted: asymmetric only, so
// that no key landlord can read could forge a token, and never none.
var Algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// maxTokenBytes bounds the tokens parsed: an identity provider's tokens
// are a few kilobytes.
const maxTokenBytes = 16 << 10

// Verifier checks an issuer's tokens. It is safe for concurrent use.
type Verifier struct {
	cfg   Config
	keys  *keySet
	cache verdicts
}

// New returns a Verifier for cfg. It fetches nothing: the keys are fetched
// on first use. Its errors wrap ErrConfig.
func New(cfg Config) (*Verifier, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Verifier{cfg: cfg, keys: &keySet{cfg: cfg, jwksURL: cfg.JWKSURL}}, nil
}

// Warm fetches the issuer's keys (or waits for the fetch under way), so
// that the first request does not wait for them and a mistake in the
// configuration shows at start-up. Its error wraps
// identity.ErrUnavailable.
func (v *Verifier) Warm(ctx context.Context) error {
	return v.keys.refresh(ctx)
}

// VerifyToken returns who holds token. Its errors wrap identity.ErrInvalid
// (401), identity.ErrNoRole (403) or identity.ErrUnavailable (503); their
// text says what was wrong, and never holds the token.
func (v *Verifier) VerifyToken(ctx context.Context, token string) (identity.Principal, error) {
	if len(token) > maxTokenBytes {
		return identity.Principal{}, invalid("it is longer than %d bytes", maxTokenBytes)
	}
	sum := sha256.Sum256([]byte(token))
	if gen, ok := v.keys.generation(); ok {
		if who, ok := v.cache.get(sum, gen, v.cfg.Now().Add(-v.cfg.ClockSkew)); ok {
			return who, nil
		}
	}
	tok, err := jwt.ParseSigned(token, Algorithms)
	if err != nil {
		if alg := (*jose.ErrUnexpectedSignatureAlgorithm)(nil); errors.As(err, &alg) {
			return identity.Principal{}, invalid("it is signed with %s; landlord accepts %s", alg.Got, algorithmNames())
		}
		return identity.Principal{}, invalid("it is not a signed JWT")
	}
	h := tok.Headers[0] // the compact form has one signature
	if err := checkHeader(h); err != nil {
		return identity.Principal{}, err
	}
	if err := v.checkClaims(tok); err != nil {
		return identity.Principal{}, err
	}
	keys, gen, err := v.keys.candidates(ctx, h.KeyID)
	if err != nil {
		return identity.Principal{}, err
	}
	var claims jwt.Claims
	var all map[string]json.RawMessage
	verified := verify(tok, h.Algorithm, keys, &claims, &all)
	if !verified && h.KeyID == "" {
		// Without a key id, a token by a key the issuer published
		// since looks like a bad signature: fetch them (as for an
		// unknown key id, at most once per MinRefresh) and try again.
		if keys, gen, err = v.keys.newer(ctx, gen); err != nil {
			return identity.Principal{}, err
		}
		verified = verify(tok, h.Algorithm, keys, &claims, &all)
	}
	if !verified {
		if h.KeyID != "" && len(keys) == 0 {
			return identity.Principal{}, invalid("it is signed with key %q, which the issuer does not publish", h.KeyID)
		}
		return identity.Principal{}, invalid("its signature does not match the issuer's keys")
	}
	who, err := v.principal(claims, all)
	if err == nil {
		v.cache.put(sum, verdict{who: who, gen: gen, expiry: claims.Expiry.Time()})
	}
	return who, err
}

// verify reports whether one of keys, fit for alg, signed tok; it reads
// the claims into claims and all. Only the signature can fail here:
// checkClaims read the same claims before.
func verify(tok *jwt.JSONWebToken, alg string, keys []jose.JSONWebKey, claims *jwt.Claims, all *map[string]json.RawMessage) bool {
	for _, key := range keys {
		if key.Algorithm != "" && key.Algorithm != alg {
			continue
		}
		if tok.Claims(key) == nil {
			return tok.UnsafeClaimsWithoutVerification(claims, all) == nil
		}
	}
	return false
}

// principal checks the verified claims and maps them to a principal.
func (v *Verifier) principal(c jwt.Claims, all map[string]json.RawMessage) (identity.Principal, error) {
	now := v.cfg.Now()
	if c.Expiry == nil {
		return identity.Principal{}, invalid("it has no expiry (exp)")
	}
	err := c.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: now}, v.cfg.ClockSkew)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return identity.Principal{}, invalid("its issuer is %q, not %q", c.Issuer, v.cfg.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return identity.Principal{}, invalid("its audience %q does not name %q; ask the identity provider for a token for landlord", []string(c.Audience), v.cfg.Audience)
	case errors.Is(err, jwt.ErrExpired):
		return identity.Principal{}, invalid("it expired at %s, %s ago; get a new one", c.Expiry.Time().UTC().Format(time.RFC3339), now.Sub(c.Expiry.Time()).Round(time.Second))
	case errors.Is(err, jwt.ErrNotValidYet):
		return identity.Principal{}, invalid("it is not valid before %s", c.NotBefore.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return identity.Principal{}, invalid("it was issued in the future, at %s: check the clocks", c.IssuedAt.Time().UTC().Format(time.RFC3339))
	case err != nil:
		return identity.Principal{}, invalid("%v", err)
	}
	var actor string
	if raw, ok := all[v.cfg.ActorClaim]; !ok || json.Unmarshal(raw, &actor) != nil || actor == "" {
		return identity.Principal{}, invalid("it has no %s claim naming its holder", v.cfg.ActorClaim)
	}
	groups, err := stringsClaim(all[v.cfg.GroupsClaim])
	if err != nil {
		return identity.Principal{}, invalid("its %s claim is not a list of strings", v.cfg.GroupsClaim)
	}
	who := identity.Principal{Name: v.cfg.ActorPrefix + actor, Kind: identity.KindSSO}
	switch {
	case intersects(groups, v.cfg.AdminGroups):
		who.Role = identity.Admin
	case intersects(groups, v.cfg.ReaderGroups):
		who.Role = identity.Reader
	default:
		return identity.Principal{}, fmt.Errorf("%w: %s is in none of the groups mapped to a role (claim %s); ask for one of %s",
			identity.ErrNoRole, who.Name, v.cfg.GroupsClaim, strings.Join(slices.Concat(v.cfg.AdminGroups, v.cfg.ReaderGroups), ", "))
	}
	return who, nil
}

// stringsClaim reads a claim that is a list of strings or one string;
// absent is empty.
func stringsClaim(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, err
	}
	return []string{one}, nil
}

func intersects(a, b []string) bool {
	return slices.ContainsFunc(a, func(s string) bool { return slices.Contains(b, s) })
}

// acceptedType reports whether a token's typ header names a JWT or an
// access token (RFC 9068).
func acceptedType(typ string) bool {
	switch strings.ToLower(typ) {
	case "jwt", "at+jwt", "application/jwt", "application/at+jwt":
		return true
	}
	return false
}

func algorithmNames() string {
	names := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// invalid returns an error wrapping identity.ErrInvalid that says why.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", identity.ErrInvalid, fmt.Sprintf(format, args...))
}

var _ identity.TokenVerifier = (*Verifier)(nil)
