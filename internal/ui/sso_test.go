package ui_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/oidc"
	"github.com/jaxxstorm/landlord/internal/oidc/oidctest"
)

// Signing in to the console with an identity provider's token: the API's
// reason is shown when it is refused.
func TestSignInWithIdentityProviderToken(t *testing.T) {
	iss := oidctest.New(t)
	v, err := oidc.New(oidc.Config{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}, ReaderGroups: []string{"support"}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, siteOptions{tokens: tokens, verifier: v})
	token := func(groups any) string {
		return iss.Token(t, oidctest.Claims{Subject: "alice@example.com", Groups: groups})
	}

	b := s.browser(t)
	if p := b.signIn(token([]string{"platform"})); p.status != http.StatusSeeOther {
		t.Fatalf("sign-in with an admin's token: %d %s", p.status, p.body)
	}
	if p := b.get("/ui/"); p.status != 200 || !strings.Contains(p.body, "alice@example.com") || !strings.Contains(p.body, "New tenant") {
		t.Errorf("the console of an admin signed in with the identity provider: %d", p.status)
	}

	many := make([]string, 400)
	for i := range many {
		many[i] = "group-with-a-long-name-" + strings.Repeat("x", 3)
	}
	many = append(many, "platform")
	for _, tc := range []struct {
		name, token string
		want        int
		says        string
	}{
		{"expired", iss.Token(t, oidctest.Claims{Subject: "alice", Groups: "platform", IssuedAt: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour)}), http.StatusUnauthorized, "landlord refused that token: the token is not valid: it expired at"},
		{"no role", token([]string{"eng"}), http.StatusForbidden, "landlord refused that token: the token maps to no role: alice@example.com is in none of the groups"},
		{"too long for a cookie", token(many), http.StatusUnprocessableEntity, "too long for the console"},
		// The same length, badly signed, gets the same answer: the
		// refusal says nothing of whether the token is valid.
		{"too long for a cookie, and forged", forge(token(many)), http.StatusUnprocessableEntity, "too long for the console"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := s.browser(t).signIn(tc.token)
			if p.status != tc.want || !strings.Contains(p.body, tc.says) {
				t.Errorf("got %d, want %d saying %q:\n%s", p.status, tc.want, tc.says, p.body)
			}
			if tc.want == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(errorText(p.body)), "valid") {
				t.Errorf("the refusal of a long token speaks of its validity: %s", errorText(p.body))
			}
			if s.browser(t).get("/ui/").status != http.StatusSeeOther {
				t.Error("a refused sign-in left a session")
			}
		})
	}
	t.Run("issuer down", func(t *testing.T) {
		fresh, err := oidc.New(oidc.Config{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}})
		if err != nil {
			t.Fatal(err)
		}
		iss.SetDown(true)
		defer iss.SetDown(false)
		p := newSite(t, siteOptions{tokens: tokens, verifier: fresh}).browser(t).signIn(token("platform"))
		if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "cannot check that token now") {
			t.Errorf("got %d:\n%s", p.status, p.body)
		}
	})
}

// Behind a TLS-terminating proxy the session cookie is Secure.
func TestSessionCookieSecureBehindProxy(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	for _, tc := range []struct {
		proto  string
		secure bool
	}{{"", false}, {"https", true}, {"http", false}} {
		req, _ := http.NewRequest("GET", s.URL+"/ui/signin", nil)
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		cookie := res.Header.Get("Set-Cookie")
		if cookie == "" || strings.Contains(cookie, "; Secure") != tc.secure {
			t.Errorf("X-Forwarded-Proto %q: Set-Cookie %q, want Secure %v", tc.proto, cookie, tc.secure)
		}
	}
}

// forge returns token with its signature's last characters changed.
func forge(token string) string {
	last := token[len(token)-4:]
	repl := "AAAA"
	if last == repl {
		repl = "BBBB"
	}
	return token[:len(token)-4] + repl
}

// errorText is the sign-in page's error, as the user reads it.
func errorText(body string) string {
	m := signinError.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

var signinError = regexp.MustCompile(`(?s)role="alert"[^>]*>(.*?)</`)
