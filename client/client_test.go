package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

var ctx = context.Background()

const appConfig = `{"image":"example.com/app:1"}`

func mustCreate(t *testing.T, c *client.Client, name, config string, labels map[string]string) *client.Tenant {
	t.Helper()
	out, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: name, ComputeConfig: []byte(config), Labels: labels}, client.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return out
}

func mustAPIError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	if e.Status != status || e.Problem.Code != code {
		t.Fatalf("error %d %s, want %d %s: %v", e.Status, e.Problem.Code, status, code, err)
	}
	return e
}

func TestNew(t *testing.T) {
	for _, tt := range []struct {
		addr, want string
	}{
		{"", "http://127.0.0.1:8080"},
		{"http://example.com:8080/", "http://example.com:8080"},
		{"example.com:9000", "http://example.com:9000"},
		{"https://example.com/landlord/", "https://example.com/landlord"},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			c, err := client.New(client.Config{Address: tt.addr})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Address(); got != tt.want {
				t.Errorf("Address() = %q, want %q", got, tt.want)
			}
		})
	}
	for _, addr := range []string{"ftp://example.com", "http://", "http://a/?x=1", "http://[::1"} {
		t.Run("bad "+addr, func(t *testing.T) {
			if _, err := client.New(client.Config{Address: addr}); err == nil || !strings.Contains(err.Error(), "is not a URL") {
				t.Errorf("New(%q) = %v, want an error", addr, err)
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	t.Setenv("LANDLORD_ADDR", "")
	t.Setenv("LANDLORD_TOKEN", "")
	if got := client.DefaultConfig(); got.Address != client.DefaultAddress || got.Token != "" {
		t.Errorf("without env: %v", got)
	}
	t.Setenv("LANDLORD_ADDR", "http://landlord.internal:8080")
	t.Setenv("LANDLORD_TOKEN", "s3cret-token")
	cfg := client.DefaultConfig()
	if cfg.Address != "http://landlord.internal:8080" || cfg.Token != "s3cret-token" {
		t.Errorf("with env: %+v", cfg.Address)
	}
	t.Setenv("LANDLORD_CA_CERT", "")
	t.Setenv("LANDLORD_CACERT", "/etc/landlord/old-name-ca.pem")
	if got := client.DefaultConfig(); got.CACertFile != "/etc/landlord/old-name-ca.pem" {
		t.Errorf("LANDLORD_CACERT, the former name, is not read: %v", got)
	}
	t.Setenv("LANDLORD_CA_CERT", "/etc/landlord/ca.pem")
	t.Setenv("LANDLORD_CLIENT_CERT", "/etc/landlord/me.pem")
	t.Setenv("LANDLORD_CLIENT_KEY", "/etc/landlord/me-key.pem")
	t.Setenv("LANDLORD_TLS_SERVER_NAME", "landlord.internal")
	if got := client.DefaultConfig(); got.CACertFile != "/etc/landlord/ca.pem" || got.ClientCertFile != "/etc/landlord/me.pem" ||
		got.ClientKeyFile != "/etc/landlord/me-key.pem" || got.TLSServerName != "landlord.internal" {
		t.Errorf("TLS from env: %v", got)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, cfg); strings.Contains(s, "s3cret") {
			t.Errorf("%s prints the token: %s", verb, s)
		}
	}
}

func TestToken(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Tokens: map[string]string{"ci": "the-admin-token"}})
	if _, err := srv.Client(t, "the-admin-token").Tenants().List(ctx, client.ListOptions{}); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	_, err := srv.Client(t, "").Tenants().List(ctx, client.ListOptions{})
	mustAPIError(t, err, http.StatusUnauthorized, "unauthorized")
	_, err = srv.Client(t, "wrong").Tenants().List(ctx, client.ListOptions{})
	if e := mustAPIError(t, err, http.StatusUnauthorized, "unauthorized"); strings.Contains(e.Error(), "wrong") {
		t.Errorf("the error shows the token: %v", e)
	}
}

func TestNetworkError(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	addr := ts.URL
	ts.Close()
	c, err := client.New(client.Config{Address: addr, Token: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Tenants().Get(ctx, "acme", client.GetOptions{})
	var e *client.Error
	if err == nil || errors.As(err, &e) {
		t.Fatalf("Get from a closed server = %v, want a network error", err)
	}
	if !strings.Contains(err.Error(), "GET "+addr+"/v1/tenants/acme") || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("error = %v", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("error %v does not wrap its cause", err)
	}
}

func TestNotAProblem(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream is down", http.StatusBadGateway)
	}))
	defer ts.Close()
	c, err := client.New(client.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Compute().Providers(ctx)
	e := mustAPIError(t, err, http.StatusBadGateway, "")
	if got, want := e.Error(), "upstream is down (502)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// Answers are read to their end, so that one connection serves every
// request: a chunked body closed unread (the JSON decoder stops at the end of
// the value) would close its connection.
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"tenants":[`)
		w.(http.Flusher).Flush() // chunked from here on
		for i := range 100 {
			if i > 0 {
				fmt.Fprint(w, ",")
			}
			fmt.Fprintf(w, `{"id":"t%d","name":"tenant-%d","status":"ready"}`, i, i)
		}
		fmt.Fprint(w, "]}\n")
		w.(http.Flusher).Flush()
		time.Sleep(5 * time.Millisecond) // the last chunk comes after the value
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c, err := client.New(client.Config{Address: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if page, err := c.Tenants().List(ctx, client.ListOptions{}); err != nil || len(page.Tenants) != 100 {
			t.Fatalf("List = %d tenants, %v", len(page.Tenants), err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests opened %d connections, want 1", n)
	}
}
