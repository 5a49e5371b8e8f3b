package api_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
)

func TestRequireSecureTokens(t *testing.T) {
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p, err := mock.New(mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	s, err := api.New(api.Options{Store: store, Compute: m, Tokens: []api.Token{{Name: "ops", Secret: adminToken, Role: api.RoleAdmin}}})
	if err != nil {
		t.Fatal(err)
	}
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}

	for _, tt := range []struct {
		name   string
		policy api.TransportPolicy
		path   string
		peer   string
		token  bool
		proto  string
		want   int
	}{
		{name: "loopback peer", peer: "127.0.0.1:5000", token: true, want: http.StatusOK},
		{name: "loopback IPv6 peer", peer: "[::1]:5000", token: true, want: http.StatusOK},
		{name: "remote peer", peer: "192.0.2.7:5000", token: true, want: http.StatusForbidden},
		{name: "remote peer without a token", peer: "192.0.2.7:5000", want: http.StatusUnauthorized},
		{name: "remote peer, insecure_http", policy: api.TransportPolicy{InsecureHTTP: true}, peer: "192.0.2.7:5000", token: true, want: http.StatusOK},
		{name: "trusted proxy, https", policy: api.TransportPolicy{TrustedProxies: proxies}, peer: "10.1.2.3:5000", token: true, proto: "https", want: http.StatusOK},
		{name: "trusted proxy, http", policy: api.TransportPolicy{TrustedProxies: proxies}, peer: "10.1.2.3:5000", token: true, proto: "http", want: http.StatusForbidden},
		{name: "trusted proxy, no header", policy: api.TransportPolicy{TrustedProxies: proxies}, peer: "10.1.2.3:5000", token: true, want: http.StatusForbidden},
		{name: "console, remote peer", policy: api.TransportPolicy{CredentialPaths: []string{"/ui/"}}, path: "/ui/signin", peer: "192.0.2.7:5000", want: http.StatusForbidden},
		{name: "console, loopback peer", policy: api.TransportPolicy{CredentialPaths: []string{"/ui/"}}, path: "/ui/signin", peer: "127.0.0.1:5000", want: http.StatusNotFound},
		{name: "untrusted peer claiming https", policy: api.TransportPolicy{TrustedProxies: proxies}, peer: "192.0.2.7:5000", token: true, proto: "https", want: http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/v1/whoami"
			}
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr = tt.peer
			if tt.token {
				req.Header.Set("Authorization", "Bearer "+adminToken)
			}
			if tt.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			rec := httptest.NewRecorder()
			s.RequireSecureTokens(s.Handler(), tt.policy).ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("GET /v1/whoami = %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			if tt.want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "insecure_http") {
				t.Errorf("the refusal does not say what to do: %s", rec.Body)
			}
		})
	}
}
