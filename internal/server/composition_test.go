package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// mockConfig is a configuration of a server on the mock provider, on a
// port the system chooses and a new SQLite database.
func mockConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.Database.Path = filepath.Join(t.TempDir(), "landlord.db")
	cfg.SetComputeDefault("mock")
	return cfg
}

// The server composes the whole product without the command: New builds
// it on the mock provider and SQLite, Run serves it, the Go client
// creates a tenant that the controller makes ready, and the end of the
// context stops everything in order and closes the database.
func TestServerComposes(t *testing.T) {
	cfg := mockConfig(t)
	logs := &providertest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(ctx, cfg, Options{Providers: testProviders, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if port := s.Addr().(*net.TCPAddr).Port; port == 0 {
		t.Fatalf("Addr = %v, want the port the system chose", s.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	poll.Until(t, "/readyz answers 200", 30*time.Second, func() (bool, string) {
		res, err := http.Get(s.URL() + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK, res.Status + " " + string(body)
	})
	c, err := client.New(client.Config{Address: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	created, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"example.com/app:1"}`)}, client.CreateOptions{})
	if err != nil {
		t.Fatalf("create through the client: %v", err)
	}
	waitCtx, stopWaiting := context.WithTimeout(ctx, 30*time.Second)
	defer stopWaiting()
	ready := func(tn client.Tenant) (bool, error) { return tn.Status == client.StatusReady, nil }
	if _, err := c.Tenants().Wait(waitCtx, created.ID, ready, nil); err != nil {
		t.Fatalf("the tenant did not become ready: %v\n%s", err, logs)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v\n%s", err, logs)
	}
	for _, want := range []string{`"msg":"landlord started"`, `"providers":"mock"`, `"address":"` + s.URL() + `"`, `"msg":"partitions released"`, `"msg":"landlord stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	if _, err := http.Get(s.URL() + "/healthz"); err == nil {
		t.Error("the address still answers after Run returned")
	}
	// The database is closed and consistent: another process opens it and
	// finds the tenant.
	db, err := sqlite.Open(context.Background(), cfg.Database.Path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.Get(context.Background(), "acme", tenant.GetOptions{}); err != nil || got.Status != tenant.StatusReady {
		t.Errorf("after the stop the database holds %+v, %v; want acme ready", got, err)
	}
}

// A Server that is not run gives its address back on Close.
func TestCloseReleasesTheAddress(t *testing.T) {
	s, err := New(context.Background(), mockConfig(t), Options{Providers: testProviders})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still held after Close: %v", err)
	}
	ln.Close()
}

// The errors of a configuration the server refuses match ErrConfig; those
// of an address or a database it cannot have do not.
func TestErrConfig(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tt := range []struct {
		name   string
		mutate func(*config.Config)
		config bool
	}{
		{"unknown provider", func(c *config.Config) { c.SetComputeDefault("docker2") }, true},
		{"no tokens off loopback", func(c *config.Config) { c.Listen = "0.0.0.0:0" }, true},
		{"address taken", func(c *config.Config) { c.Listen = taken.Addr().String() }, false},
		{"database not a directory", func(c *config.Config) { c.Database.Path = filepath.Join(os.DevNull, "landlord.db") }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mockConfig(t)
			tt.mutate(&cfg)
			s, err := New(context.Background(), cfg, Options{Providers: testProviders})
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
			if got := errors.Is(err, ErrConfig); got != tt.config {
				t.Errorf("errors.Is(%v, ErrConfig) = %t, want %t", err, got, tt.config)
			}
		})
	}
}
