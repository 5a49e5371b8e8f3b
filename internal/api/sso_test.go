package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/oidc"
	"github.com/jaxxstorm/landlord/internal/oidc/oidctest"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// ssoServer serves the API with one static admin token and the tokens of
// an issuer, on a clock the test moves.
type ssoServer struct {
	*testServer
	*oidctest.Clock
}

func newSSOServer(t *testing.T, iss *oidctest.Issuer) *ssoServer {
	t.Helper()
	clk := oidctest.NewClock()
	v, err := oidc.New(oidc.Config{Issuer: iss.URL, Audience: oidctest.Audience, AdminGroups: []string{"platform"}, ReaderGroups: []string{"support"}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	ts := newServerTuned(t, func(o *api.Options) { o.Verifier = v }, api.Token{Name: "ops", Secret: adminToken, Role: api.RoleAdmin})
	return &ssoServer{testServer: ts, Clock: clk}
}

// call sends a request with a bearer token and returns the status, the
// WWW-Authenticate header and the body.
func (s *ssoServer) call(t *testing.T, method, path, token, body string, headers ...string) (int, string, string) {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	r := s.do(t, method, path, contentType, body, append([]string{"Authorization", "Bearer " + token}, headers...)...)
	return r.status, r.header.Get("WWW-Authenticate"), string(r.body)
}

func TestIdentityProviderTokens(t *testing.T) {
	iss := oidctest.New(t)
	s := newSSOServer(t, iss)
	claims := func(sub string, groups ...string) oidctest.Claims {
		return oidctest.Claims{Subject: sub, Groups: groups, IssuedAt: s.Now()}
	}
	alice := iss.Token(t, claims("alice@example.com", "eng", "platform"))
	bob := iss.Token(t, claims("bob@example.com", "support"))

	// An admin's token writes, and its subject is the actor.
	status, _, body := s.call(t, "POST", "/v1/tenants", alice, `{"name":"acme","compute_config":{"image":"a"}}`)
	if status != http.StatusCreated {
		t.Fatalf("create with an admin's token: %d %s", status, body)
	}
	var created wire.Tenant
	if err := json.Unmarshal([]byte(body), &created); err != nil {
		t.Fatal(err)
	}
	_, _, body = s.call(t, "GET", "/v1/tenants/"+created.ID+"/events", bob, "")
	var events wire.EventList
	if err := json.Unmarshal([]byte(body), &events); err != nil || len(events.Events) == 0 || events.Events[0].Actor != "alice@example.com" {
		t.Errorf("the history's actor: %s, want alice@example.com", body)
	}
	if _, _, body := s.call(t, "GET", "/v1/whoami", bob, ""); !strings.Contains(body, `"name":"bob@example.com"`) || !strings.Contains(body, `"role":"reader"`) {
		t.Errorf("whoami with a reader's token: %s", body)
	}
	// landlord's own tokens work beside them.
	if status, _, body := s.call(t, "GET", "/v1/whoami", adminToken, ""); status != 200 || !strings.Contains(body, `"name":"ops"`) {
		t.Errorf("whoami with a static token: %d %s", status, body)
	}

	for _, tc := range []struct {
		name, method, token string
		want                int
		says                string
	}{
		{"a reader's token writes", "POST", bob, http.StatusForbidden, "identity provider token bob@example.com may only read"},
		{"no group mapped to a role", "GET", iss.Token(t, claims("carol", "eng")), http.StatusForbidden, "carol is in none of the groups"},
		{"expired", "GET", iss.Token(t, oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: s.Now().Add(-2 * time.Hour), Expiry: s.Now().Add(-10 * time.Minute)}), http.StatusUnauthorized, "expired at"},
		{"wrong audience", "GET", iss.Token(t, oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, Audience: []string{"grafana"}, IssuedAt: s.Now()}), http.StatusUnauthorized, `audience [\"grafana\"] does not name \"landlord\"`},
		{"not a JWT, not a token", "GET", "guess", http.StatusUnauthorized, "the bearer token is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == "POST" {
				body = `{"name":"other","compute_config":{"image":"a"}}`
			}
			status, challenge, got := s.call(t, tc.method, "/v1/tenants", tc.token, body)
			if status != tc.want || !strings.Contains(got, tc.says) {
				t.Errorf("got %d %s, want %d saying %q", status, got, tc.want, tc.says)
			}
			if want := `Bearer realm="landlord", error="invalid_token"`; (status == http.StatusUnauthorized) != (challenge == want) {
				t.Errorf("WWW-Authenticate %q with %d, want %q with 401 only", challenge, status, want)
			}
		})
	}

	t.Run("a subject named like a token has its own idempotency keys", func(t *testing.T) {
		ops := iss.Token(t, claims("ops", "platform"))
		if status, _, body := s.call(t, "POST", "/v1/tenants", adminToken, `{"name":"by-token","compute_config":{"image":"a"}}`, "Idempotency-Key", "same"); status != http.StatusCreated {
			t.Fatalf("create with the token ops: %d %s", status, body)
		}
		status, _, body := s.call(t, "POST", "/v1/tenants", ops, `{"name":"by-jwt","compute_config":{"image":"a"}}`, "Idempotency-Key", "same")
		if status != http.StatusCreated || !strings.Contains(body, `"name":"by-jwt"`) {
			t.Errorf("create with a JWT whose subject is ops, and the token's key: %d %s, want 201 by-jwt", status, body)
		}
	})

	t.Run("rotated signing key", func(t *testing.T) {
		iss.Rotate(t, jose.ES256)
		s.Add(oidc.DefaultMinRefresh)
		rotated := iss.Token(t, claims("dana", "platform"))
		if status, _, body := s.call(t, "DELETE", "/v1/tenants/"+created.ID, rotated, ""); status != http.StatusAccepted {
			t.Errorf("a token by the new key: %d %s", status, body)
		}
		if status, _, body := s.call(t, "GET", "/v1/tenants", alice, ""); status != 200 {
			t.Errorf("a token by the old key, still published: %d %s", status, body)
		}
	})
}

func TestIdentityProviderUnreachable(t *testing.T) {
	iss := oidctest.New(t)
	s := newSSOServer(t, iss)
	tok := iss.Token(t, oidctest.Claims{Subject: "alice", Groups: []string{"platform"}, IssuedAt: s.Now()})
	iss.SetDown(true)
	resp := s.do(t, "GET", "/v1/tenants", "", "", "Authorization", "Bearer "+tok)
	if resp.status != http.StatusServiceUnavailable || !strings.Contains(string(resp.body), `"code":"identity_provider_unavailable"`) ||
		resp.header.Get("Retry-After") != "10" || resp.header.Get("WWW-Authenticate") != "" {
		t.Errorf("with the issuer down: %d %v %s, want 503 identity_provider_unavailable with Retry-After", resp.status, resp.header, resp.body)
	}
	// landlord's own tokens do not need the issuer.
	if status, _, body := s.call(t, "GET", "/v1/tenants", adminToken, ""); status != 200 {
		t.Errorf("a static token with the issuer down: %d %s", status, body)
	}
	iss.SetDown(false)
	s.Add(oidc.DefaultMinRefresh)
	if status, _, body := s.call(t, "GET", "/v1/tenants", tok, ""); status != 200 {
		t.Errorf("with the issuer back: %d %s", status, body)
	}
}
