package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/oidc"
	"github.com/jaxxstorm/landlord/internal/oidc/oidctest"
)

// setup starts an issuer and a verifier of its tokens on a settable
// clock.
func setup(t *testing.T, change func(*oidc.Config)) (*oidctest.Issuer, *oidc.Verifier, *oidctest.Clock) {
	t.Helper()
	iss := oidctest.New(t)
	clk := oidctest.NewClock()
	cfg := oidc.Config{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}, ReaderGroups: []string{"support", "audit"}, Now: clk.Now}
	if change != nil {
		change(&cfg)
	}
	v, err := oidc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return iss, v, clk
}

func TestRoles(t *testing.T) {
	iss, v, clk := setup(t, nil)
	for _, tc := range []struct {
		name   string
		groups any
		want   identity.Role
	}{
		{"admin group", []string{"eng", "platform"}, identity.Admin},
		{"reader group", []string{"audit"}, identity.Reader},
		{"admin wins over reader", []string{"support", "platform"}, identity.Admin},
		{"one string", "support", identity.Reader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := iss.Token(t, oidctest.Claims{Subject: "alice", Groups: tc.groups, IssuedAt: clk.Now()})
			who, err := v.VerifyToken(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			want := identity.Principal{Name: "alice", Role: tc.want, Kind: identity.KindSSO}
			if who != want {
				t.Errorf("got %+v, want %+v", who, want)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		groups any
		want   error
		says   string
	}{
		{"no group mapped", []string{"eng"}, identity.ErrNoRole, "none of the groups"},
		{"no groups claim", nil, identity.ErrNoRole, "platform, support, audit"},
		{"groups not strings", []int{1, 2}, identity.ErrInvalid, "groups claim is a list of numbers, not a list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := iss.Token(t, oidctest.Claims{Subject: "alice", Groups: tc.groups, IssuedAt: clk.Now()})
			_, err := v.VerifyToken(context.Background(), tok)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
}

func TestActorClaim(t *testing.T) {
	iss, v, clk := setup(t, func(c *oidc.Config) { c.ActorClaim = "email"; c.GroupsClaim = "roles"; c.ActorPrefix = "sso:" })
	tok := iss.Token(t, oidctest.Claims{Subject: "00u1a2b3", IssuedAt: clk.Now(), Extra: map[string]any{"email": "alice@example.com", "roles": []string{"audit"}}})
	who, err := v.VerifyToken(context.Background(), tok)
	if err != nil || who.Name != "sso:alice@example.com" || who.Role != identity.Reader {
		t.Fatalf("got %+v, %v; want sso:alice@example.com, a reader", who, err)
	}
	tok = iss.Token(t, oidctest.Claims{Subject: "00u1a2b3", IssuedAt: clk.Now(), Extra: map[string]any{"roles": []string{"audit"}}})
	if _, err := v.VerifyToken(context.Background(), tok); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), "no email claim") {
		t.Errorf("without the actor claim: %v, want ErrInvalid naming email", err)
	}
}

func TestRefused(t *testing.T) {
	iss, v, clk := setup(t, nil)
	now := clk.Now()
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: now}
	with := func(change func(*oidctest.Claims)) string {
		c := good
		change(&c)
		return iss.Token(t, c)
	}
	for _, tc := range []struct {
		name, token, says string
	}{
		{"expired beyond the skew", with(func(c *oidctest.Claims) { c.IssuedAt = now.Add(-2 * time.Hour); c.Expiry = now.Add(-61 * time.Second) }), "expired at"},
		{"wrong audience", with(func(c *oidctest.Claims) { c.Audience = []string{"grafana"} }), `audience ["grafana"] does not name "landlord"`},
		{"wrong issuer", with(func(c *oidctest.Claims) { c.Issuer = "https://evil.example.com" }), `issuer is "https://evil.example.com"`},
		{"no expiry", with(func(c *oidctest.Claims) { c.NoExpiry = true }), "no expiry"},
		{"not valid yet", with(func(c *oidctest.Claims) { c.NotBefore = now.Add(5 * time.Minute) }), "not valid before"},
		{"issued in the future", with(func(c *oidctest.Claims) { c.IssuedAt = now.Add(5 * time.Minute) }), "issued in the future"},
		{"no subject", with(func(c *oidctest.Claims) { c.Subject = "" }), "no sub claim"},
		{"signed by a stranger with the issuer's key id", oidctest.Sign(t, stranger, jose.ES256, "key-1", map[string]any{"iss": iss.URL, "sub": "mallory", "aud": "landlord", "exp": now.Add(time.Hour).Unix(), "groups": "platform"}), "signature does not match"},
		{"signed by a stranger without a key id", oidctest.Sign(t, stranger, jose.ES256, "", map[string]any{"iss": iss.URL, "sub": "mallory", "aud": "landlord", "exp": now.Add(time.Hour).Unix(), "groups": "platform"}), "signature does not match"},
		{"signed with a shared secret", oidctest.Sign(t, []byte(strings.Repeat("k", 32)), jose.HS256, "key-1", map[string]any{"iss": iss.URL, "sub": "mallory", "aud": "landlord", "exp": now.Add(time.Hour).Unix()}), "signed with HS256"},
		{"alg none", unsigned(iss.URL, now), "signed with none"},
		{"not a JWT", "a.b.c", "not a signed JWT"},
		{"too long", strings.Repeat("a", 17<<10), "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.VerifyToken(context.Background(), tc.token)
			if !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want ErrInvalid saying %q", err, tc.says)
			}
			if err != nil && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the error holds the token: %v", err)
			}
		})
	}
	t.Run("expired within the skew", func(t *testing.T) {
		tok := with(func(c *oidctest.Claims) { c.IssuedAt = now.Add(-2 * time.Hour); c.Expiry = now.Add(-59 * time.Second) })
		if _, err := v.VerifyToken(context.Background(), tok); err != nil {
			t.Errorf("a token expired 59s ago, with a skew of 1m: %v", err)
		}
	})
}

// unsigned returns a token with alg none.
func unsigned(issuer string, now time.Time) string {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return enc(`{"alg":"none","typ":"JWT"}`) + "." + enc(fmt.Sprintf(`{"iss":%q,"sub":"mallory","aud":"landlord","exp":%d,"groups":"platform"}`, issuer, now.Add(time.Hour).Unix())) + "."
}

func TestRotatedSigningKey(t *testing.T) {
	iss, v, clk := setup(t, nil)
	ctx := context.Background()
	claims := func() oidctest.Claims {
		return oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: clk.Now()}
	}
	old := iss.Token(t, claims())
	mustVerify(t, v, old)
	if n := iss.Fetches(); n != 1 {
		t.Fatalf("%d fetches of the keys, want 1", n)
	}

	iss.Rotate(t, jose.ES256)
	rotated := iss.Token(t, claims())
	// Just after a fetch, an unknown key id does not fetch again.
	if _, err := v.VerifyToken(ctx, rotated); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), `key "key-2", which the issuer does not publish`) {
		t.Fatalf("a new key within MinRefresh of a fetch: %v, want ErrInvalid naming key-2", err)
	}
	clk.Add(oidc.DefaultMinRefresh)
	mustVerify(t, v, rotated)
	mustVerify(t, v, old)
	if n := iss.Fetches(); n != 2 {
		t.Fatalf("%d fetches of the keys, want 2", n)
	}

	// The issuer withdraws the old key: it works until the keys are
	// fetched again, then never.
	iss.Retire()
	mustVerify(t, v, iss.TokenBy(t, "key-1", claims()))
	// Past MaxKeyAge, a request starts the fetch (in the background:
	// see TestStaleKeysServeWithoutWaiting). Once that is done, the
	// withdrawn key is refused.
	clk.Add(oidc.DefaultMaxKeyAge)
	_, _ = v.VerifyToken(ctx, iss.TokenBy(t, "key-1", claims()))
	if err := v.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyToken(ctx, iss.TokenBy(t, "key-1", claims())); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), `key "key-1", which the issuer does not publish`) {
		t.Fatalf("a withdrawn key after the keys were fetched again: %v, want ErrInvalid naming key-1", err)
	}
	mustVerify(t, v, iss.Token(t, claims()))
}

func TestUnknownKeyIDsFetchAtMostOncePerMinRefresh(t *testing.T) {
	iss, v, clk := setup(t, nil)
	stranger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mustVerify(t, v, iss.Token(t, oidctest.Claims{Subject: "alice", Groups: "platform", IssuedAt: clk.Now()}))
	forged := func(i int) string {
		return oidctest.Sign(t, stranger, jose.ES256, fmt.Sprintf("made-up-%d", i), map[string]any{"iss": iss.URL, "sub": "mallory", "aud": "landlord", "exp": clk.Now().Add(time.Hour).Unix()})
	}
	for i := range 50 {
		if _, err := v.VerifyToken(context.Background(), forged(i)); !errors.Is(err, identity.ErrInvalid) {
			t.Fatalf("a made-up key id: %v, want ErrInvalid", err)
		}
	}
	if n := iss.Fetches(); n != 1 {
		t.Errorf("50 made-up key ids within MinRefresh: %d fetches, want 1", n)
	}
	clk.Add(oidc.DefaultMinRefresh)
	for i := range 50 {
		_, _ = v.VerifyToken(context.Background(), forged(i))
	}
	if n := iss.Fetches(); n != 2 {
		t.Errorf("50 more after MinRefresh: %d fetches in all, want 2", n)
	}
}

func TestConcurrentFirstUseFetchesOnce(t *testing.T) {
	iss, v, clk := setup(t, nil)
	tok := iss.Token(t, oidctest.Claims{Subject: "alice", Groups: "platform", IssuedAt: clk.Now()})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			_, err := v.VerifyToken(context.Background(), tok)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := iss.Fetches(); n != 1 {
		t.Errorf("32 requests at once: %d fetches, want 1", n)
	}
}

func TestIssuerUnreachable(t *testing.T) {
	iss, v, clk := setup(t, nil)
	ctx := context.Background()
	claims := func() oidctest.Claims {
		return oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: clk.Now()}
	}
	iss.SetDown(true)
	if err := v.Warm(ctx); !errors.Is(err, identity.ErrUnavailable) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("warm with the issuer down: %v, want ErrUnavailable saying 503", err)
	}
	// The failure is remembered for MinRefresh: a request does not ask
	// the issuer again at once.
	if _, err := v.VerifyToken(ctx, iss.Token(t, claims())); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("verify with the issuer down: %v, want ErrUnavailable", err)
	}
	iss.SetDown(false)
	if _, err := v.VerifyToken(ctx, iss.Token(t, claims())); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("verify within MinRefresh of a failed fetch: %v, want ErrUnavailable", err)
	}
	clk.Add(oidc.DefaultMinRefresh)
	mustVerify(t, v, iss.Token(t, claims()))

	// Down again once keys are cached: they go on working past
	// MaxKeyAge; a token by a key published since cannot be checked.
	iss.SetDown(true)
	clk.Add(oidc.DefaultMaxKeyAge)
	mustVerify(t, v, iss.Token(t, claims()))
	iss.Rotate(t, jose.ES256)
	clk.Add(oidc.DefaultMinRefresh)
	if _, err := v.VerifyToken(ctx, iss.Token(t, claims())); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("a new key with the issuer down: %v, want ErrUnavailable", err)
	}
	iss.SetDown(false)
	clk.Add(oidc.DefaultMinRefresh)
	mustVerify(t, v, iss.Token(t, claims()))
}

func TestDiscoveryMustNameTheIssuer(t *testing.T) {
	iss := oidctest.New(t)
	v, err := oidc.New(oidc.Config{Issuer: iss.URL + "/", Audience: "landlord", AdminGroups: []string{"platform"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Warm(context.Background()); !errors.Is(err, identity.ErrUnavailable) || !strings.Contains(err.Error(), "names the issuer") {
		t.Errorf("issuer with a trailing slash the provider does not use: %v, want a discovery error", err)
	}
	v, err = oidc.New(oidc.Config{Issuer: "https://idp.example.com", JWKSURL: iss.URL + "/keys", Audience: "landlord", AdminGroups: []string{"platform"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Warm(context.Background()); err != nil {
		t.Errorf("with jwks_url, discovery is not needed: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  oidc.Config
		says []string
	}{
		{"empty", oidc.Config{}, []string{"issuer is required", "audience is required", "admin_groups or reader_groups is required"}},
		{"plain http", oidc.Config{Issuer: "http://idp.example.com", Audience: "a", ReaderGroups: []string{"r"}}, []string{"plain http"}},
		{"not a URL", oidc.Config{Issuer: "idp.example.com", Audience: "a", ReaderGroups: []string{"r"}}, []string{"not an absolute URL"}},
		{"skew", oidc.Config{Issuer: "https://idp.example.com", Audience: "a", ReaderGroups: []string{"r"}, ClockSkew: 10 * time.Minute}, []string{"clock_skew 10m0s is not between 1s and 5m0s"}},
		{"jwks over http", oidc.Config{Issuer: "https://idp.example.com", JWKSURL: "http://idp.example.com/keys", Audience: "a", ReaderGroups: []string{"r"}}, []string{"jwks_url", "plain http"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := oidc.New(tc.cfg)
			if !errors.Is(err, oidc.ErrConfig) {
				t.Fatalf("got %v, want ErrConfig", err)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%v does not say %q", err, s)
				}
			}
		})
	}
	for _, issuer := range []string{"https://idp.example.com", "http://127.0.0.1:5556/dex", "http://localhost:8080/realms/ops", "http://[::1]:9000"} {
		if _, err := oidc.New(oidc.Config{Issuer: issuer, Audience: "a", AdminGroups: []string{"g"}}); err != nil {
			t.Errorf("%s: %v", issuer, err)
		}
	}
}

func mustVerify(t *testing.T, v *oidc.Verifier, tok string) identity.Principal {
	t.Helper()
	who, err := v.VerifyToken(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	return who
}

func TestStaleKeysServeWithoutWaiting(t *testing.T) {
	iss, v, clk := setup(t, nil)
	claims := func() oidctest.Claims {
		return oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: clk.Now()}
	}
	mustVerify(t, v, iss.Token(t, claims()))
	// The issuer's traffic is dropped, and the keys are past MaxKeyAge:
	// a request the cached keys answer does not wait for the fetch. Its
	// context is already done, so waiting would fail it.
	release := iss.Hang(t)
	clk.Add(oidc.DefaultMaxKeyAge)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		if _, err := v.VerifyToken(done, iss.Token(t, claims())); err != nil {
			t.Fatalf("with stale keys and a hanging issuer: %v", err)
		}
	}
	// A token the cached keys cannot answer waits, and its request may
	// give up.
	iss.Rotate(t, jose.ES256)
	if _, err := v.VerifyToken(done, iss.Token(t, claims())); !errors.Is(err, identity.ErrUnavailable) {
		t.Errorf("a new key with a hanging issuer: %v, want ErrUnavailable", err)
	}
	release()
}

func TestStaleKeysStopAfterMaxStaleKeyAge(t *testing.T) {
	iss, v, clk := setup(t, nil)
	claims := func() oidctest.Claims {
		return oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: clk.Now()}
	}
	mustVerify(t, v, iss.Token(t, claims()))
	iss.SetDown(true)
	clk.Add(oidc.DefaultMaxStaleKeyAge - time.Minute)
	if err := v.Warm(context.Background()); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("warm with the issuer down: %v", err)
	}
	mustVerify(t, v, iss.Token(t, claims()))
	clk.Add(time.Minute)
	if _, err := v.VerifyToken(context.Background(), iss.Token(t, claims())); !errors.Is(err, identity.ErrUnavailable) {
		t.Errorf("keys older than MaxStaleKeyAge with the issuer down: %v, want ErrUnavailable", err)
	}
}

func TestSignatureIsChecked(t *testing.T) {
	iss, v, clk := setup(t, nil)
	forger := oidctest.New(t) // another issuer's RS256 key: the same key type and algorithm as the issuer's
	claims := map[string]any{"iss": iss.URL, "sub": "mallory", "aud": "landlord", "exp": clk.Now().Add(time.Hour).Unix(), "groups": "platform"}
	for _, tc := range []struct{ name, token string }{
		{"RS256 with the issuer's key id", forger.TokenBy(t, "key-1", oidctest.Claims{Issuer: iss.URL, Subject: "mallory", Groups: "platform", IssuedAt: clk.Now()})},
		{"RS256 without a key id", oidctest.Sign(t, mustRSA(t), jose.RS256, "", claims)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := v.VerifyToken(context.Background(), tc.token); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), "signature does not match") {
				t.Errorf("got %v, want ErrInvalid: the signature does not match", err)
			}
		})
	}
	// The issuer's own key signs what the forger's could not.
	mustVerify(t, v, iss.Token(t, oidctest.Claims{Subject: "alice", Groups: "platform", IssuedAt: clk.Now()}))
}

func TestTypeHeader(t *testing.T) {
	clk := oidctest.NewClock()
	key := mustRSA(t)
	srv := keyServer(t, jose.JSONWebKey{Key: key.Public(), KeyID: "k", Use: "sig"})
	v2, err := oidc.New(oidc.Config{Issuer: "https://idp.example.com", JWKSURL: srv, Audience: "landlord", AdminGroups: []string{"platform"}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"iss": "https://idp.example.com", "sub": "alice", "aud": "landlord", "exp": clk.Now().Add(time.Hour).Unix(), "groups": "platform"}
	for _, typ := range []string{"JWT", "at+jwt", "application/at+JWT"} {
		if _, err := v2.VerifyToken(context.Background(), oidctest.SignTyped(t, key, jose.RS256, "k", typ, claims)); err != nil {
			t.Errorf("typ %s: %v", typ, err)
		}
	}
	for _, typ := range []string{"logout+jwt", "JOSE"} {
		if _, err := v2.VerifyToken(context.Background(), oidctest.SignTyped(t, key, jose.RS256, "k", typ, claims)); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), "its type is") {
			t.Errorf("typ %s: %v, want ErrInvalid naming its type", typ, err)
		}
	}
}

func TestKeysThatMayNotSign(t *testing.T) {
	clk := oidctest.NewClock()
	key := mustRSA(t)
	claims := map[string]any{"iss": "https://idp.example.com", "sub": "alice", "aud": "landlord", "exp": clk.Now().Add(time.Hour).Unix(), "groups": "platform"}
	for _, tc := range []struct {
		name string
		jwk  jose.JSONWebKey
		says string
	}{
		{"a key for encryption", jose.JSONWebKey{Key: key.Public(), KeyID: "k", Use: "enc"}, `key "k", which the issuer does not publish`},
		{"a key for another algorithm", jose.JSONWebKey{Key: key.Public(), KeyID: "k", Algorithm: "RS384", Use: "sig"}, "signature does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The key set has the key and one good other, so that it
			// is fetched.
			other := mustRSA(t)
			srv := keyServer(t, tc.jwk, jose.JSONWebKey{Key: other.Public(), KeyID: "other", Use: "sig"})
			v, err := oidc.New(oidc.Config{Issuer: "https://idp.example.com", JWKSURL: srv, Audience: "landlord", AdminGroups: []string{"platform"}, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.VerifyToken(context.Background(), oidctest.Sign(t, key, jose.RS256, "k", claims))
			if !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want ErrInvalid saying %q", err, tc.says)
			}
		})
	}
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyServer serves keys as a JWKS and returns its URL.
func keyServer(t *testing.T, keys ...jose.JSONWebKey) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/keys"
}

func TestKnownTokenStillExpires(t *testing.T) {
	iss, v, clk := setup(t, nil)
	tok := iss.Token(t, oidctest.Claims{Subject: "alice", Groups: "platform", IssuedAt: clk.Now(), Expiry: clk.Now().Add(5 * time.Minute)})
	mustVerify(t, v, tok)
	clk.Add(5*time.Minute + oidc.DefaultClockSkew)
	mustVerify(t, v, tok)
	clk.Add(time.Second)
	if _, err := v.VerifyToken(context.Background(), tok); !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("a token checked before, now expired: %v, want ErrInvalid: expired", err)
	}
}

func TestRotationWithoutKeyIDs(t *testing.T) {
	clk := oidctest.NewClock()
	first, second := mustRSA(t), mustRSA(t)
	var mu sync.Mutex
	published := []jose.JSONWebKey{{Key: first.Public(), Use: "sig"}}
	fetches := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fetches++
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: published})
	}))
	t.Cleanup(srv.Close)
	v, err := oidc.New(oidc.Config{Issuer: "https://idp.example.com", JWKSURL: srv.URL, Audience: "landlord", AdminGroups: []string{"platform"}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"iss": "https://idp.example.com", "sub": "alice", "aud": "landlord", "exp": clk.Now().Add(time.Hour).Unix(), "groups": "platform"}
	mustVerify(t, v, oidctest.Sign(t, first, jose.RS256, "", claims))
	mu.Lock()
	published = []jose.JSONWebKey{{Key: second.Public(), Use: "sig"}}
	mu.Unlock()
	clk.Add(oidc.DefaultMinRefresh)
	mustVerify(t, v, oidctest.Sign(t, second, jose.RS256, "", claims))
	// A forged token without a key id costs no more fetches within
	// MinRefresh.
	for range 10 {
		if _, err := v.VerifyToken(context.Background(), oidctest.Sign(t, mustRSA(t), jose.RS256, "", claims)); !errors.Is(err, identity.ErrInvalid) {
			t.Fatalf("a forged token: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != 2 {
		t.Errorf("%d fetches, want 2", fetches)
	}
}

// A token whose claims or header are malformed is refused for what is
// wrong with it, whoever signed it: not as a bad signature (which a
// well-signed one does not have), and with nothing that says whether the
// signature would have been good.
func TestMalformedTokens(t *testing.T) {
	iss, v, clk := setup(t, nil)
	now := clk.Now()
	stranger := mustRSA(t)
	good := func() map[string]any {
		return map[string]any{"iss": iss.URL, "sub": "alice", "aud": "landlord", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "groups": []string{"platform"}}
	}
	with := func(change func(map[string]any)) map[string]any {
		c := good()
		change(c)
		return c
	}
	signed := func(claims map[string]any) string { return iss.Token(t, oidctest.Claims{Subject: "x", Extra: claims}) }
	forged := func(claims map[string]any) string { return oidctest.Sign(t, stranger, jose.RS256, "key-1", claims) }
	critical := func(signer any, kid string, claims map[string]any) string {
		t.Helper()
		key := jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: signer, KeyID: kid, Algorithm: string(jose.RS256)}}
		s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT").WithHeader("x-policy", "strict").WithCritical("x-policy"))
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := json.Marshal(claims)
		jws, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jws.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	expString := with(func(c map[string]any) { c["exp"] = strconv.FormatInt(now.Add(time.Hour).Unix(), 10) })
	subNumber := with(func(c map[string]any) { c["sub"] = 42 })
	for _, tc := range []struct {
		name, token, says string
	}{
		{"exp as a string", signed(expString), "its exp claim is a string, not a number of seconds since 1970"},
		{"exp as a string, forged", forged(expString), "its exp claim is a string, not a number of seconds since 1970"},
		{"sub as a number", signed(subNumber), "its sub claim is a number, not a string"},
		{"sub as a number, forged", forged(subNumber), "its sub claim is a number, not a string"},
		{"iat as a string and aud as a number, both said", signed(with(func(c map[string]any) { c["iat"] = "yesterday"; c["aud"] = 7 })),
			"its aud claim is a number, not a string or a list of strings; its iat claim is a string, not a number"},
		{"groups as an object", signed(with(func(c map[string]any) { c["groups"] = map[string]any{"platform": true} })), "its groups claim is an object, not a list of strings"},
		{"a crit header", critical(iss.Signer(), "key-1", good()), "its crit header makes the extension x-policy critical, which landlord does not implement"},
		{"a crit header, forged", critical(stranger, "key-1", good()), "its crit header makes the extension x-policy critical"},
		{"typ as a number", signedTyp(t, iss, good()), "its typ header is a number, not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.VerifyToken(context.Background(), tc.token)
			if !errors.Is(err, identity.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want ErrInvalid saying %q", err, tc.says)
			}
			if err != nil && (strings.Contains(err.Error(), "signature") || strings.Contains(err.Error(), "is valid")) {
				t.Errorf("the message speaks of the signature or validity: %v", err)
			}
		})
	}
	// The well-formed token those were made from is taken.
	mustVerify(t, v, signed(good()))
}

// signedTyp is a token of iss's signing key with a typ header that is a
// number.
func signedTyp(t *testing.T, iss *oidctest.Issuer, claims map[string]any) string {
	t.Helper()
	key := jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: iss.Signer(), KeyID: "key-1", Algorithm: string(jose.RS256)}}
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithHeader(jose.HeaderType, 1))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
