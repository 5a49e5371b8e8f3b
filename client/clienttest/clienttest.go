package clienttest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Options configure a Server.
type Options struct {
	// Controller runs the controller and the rollout driver with short
	// intervals, so that tenants move on to ready, failed or deleted, and
	// rollouts through their waves, within a moment.
	Controller bool
	// Tokens are the API's bearer tokens, each name to its secret; all are
	// admins. None means no authentication.
	Tokens map[string]string
	// MockBlock is the mock provider's configuration block; nil means
	// {"env": {"FROM_DEFAULTS": "yes"}}.
	MockBlock json.RawMessage
	// Provider, if set, is the compute provider instead of the mock.
	Provider provider.Provider
	// Observer, if set, is told of every reconcile.
	Observer controller.ReconcileObserver
	// TLS, if set, makes the server serve TLS only, with this
	// configuration (see PKI.ServerTLS); URL is then https.
	TLS *tls.Config
}

// Server is a running API.
type Server struct {
	// URL is the API's base URL.
	URL string
	// Mock is the compute provider, to inspect or disturb workloads; nil
	// when Options.Provider is set.
	Mock *mock.Provider
	// Store is the database under the API.
	Store *sqlite.Store
	// Registry holds the provider, with its compiled schema.
	Registry *compute.Registry

	manager *compute.Manager
	opts    Options
}

// NewServer starts an API that stops when the test ends.
func NewServer(t testing.TB, opts Options) *Server {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("clienttest: open the store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	srv := &Server{Store: store, Registry: compute.NewRegistry(), opts: opts}
	p := opts.Provider
	if p == nil {
		block := opts.MockBlock
		if block == nil {
			block = json.RawMessage(`{"env":{"FROM_DEFAULTS":"yes"}}`)
		}
		if srv.Mock, err = mock.New(mock.Options{Block: block}); err != nil {
			t.Fatalf("clienttest: mock provider: %v", err)
		}
		p = srv.Mock
	}
	reg := srv.Registry
	if err := reg.Register(p); err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	m, err := compute.NewManager(reg, compute.ManagerOptions{})
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	srv.manager = m
	var tokens []api.Token
	for name, secret := range opts.Tokens {
		tokens = append(tokens, api.Token{Name: name, Secret: secret, Role: api.RoleAdmin})
	}
	s, err := api.New(api.Options{Store: store, Fleet: store, Compute: m, Tokens: tokens})
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	ts := httptest.NewUnstartedServer(s.Handler())
	if opts.TLS != nil {
		ts.TLS = opts.TLS
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	srv.URL = ts.URL
	if opts.Controller {
		srv.StartController(t)
	}
	return srv
}

// StartController runs the controller and the rollout driver, with short
// intervals, until the test ends; Options.Controller starts them with the
// server.
func (s *Server) StartController(t testing.TB) {
	t.Helper()
	{
		c := controller.New(s.Store, s.manager, controller.Options{
			Workers:         4,
			BaseBackoff:     time.Millisecond,
			MaxBackoff:      20 * time.Millisecond,
			PollInterval:    10 * time.Millisecond,
			Resync:          time.Hour,
			Sweep:           time.Hour,
			ShutdownTimeout: 10 * time.Second,
			Observer:        s.opts.Observer,
			Plans:           s.Store,
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := c.Run(ctx); err != nil {
				t.Errorf("clienttest: controller: %v", err)
			}
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	{
		// The rollouts are driven beside the controller, as in serve.
		d := rollout.New(s.Store, s.Store, rollout.Options{Interval: 10 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); d.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
}

// Client returns a client of the server with the given token.
func (s *Server) Client(t testing.TB, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Address: s.URL, Token: token})
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	return c
}
