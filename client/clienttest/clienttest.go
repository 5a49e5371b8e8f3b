package clienttest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/events"
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
	// Events serves the event feed and the webhook subscriptions with
	// subscriptions to loopback receivers allowed (which serve refuses
	// unless events.allow_networks allows them), and runs a dispatcher
	// that delivers to them. A failed delivery is tried again within
	// milliseconds, and given up (its subscription disabled) after about
	// 100ms of failures, so that tests reach every state of a delivery at
	// once.
	Events bool
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
	apiOpts := api.Options{Store: store, Fleet: store, Compute: m, Tokens: tokens}
	var encoder *events.Encoder
	if opts.Events {
		encoder = &events.Encoder{Source: "landlord"}
		apiOpts.Events, apiOpts.EventEncoder, apiOpts.EventGuard, apiOpts.Changes = store, encoder, loopbackGuard(), store
	}
	s, err := api.New(apiOpts)
	if err != nil {
		t.Fatalf("clienttest: %v", err)
	}
	if opts.Events {
		// After api.New, which gives the encoder the API's view of a
		// tenant.
		srv.runDispatcher(t, encoder)
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

// loopbackGuard is the SSRF guard of a test: loopback receivers are
// allowed.
func loopbackGuard() *events.Guard {
	return events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")})
}

// runDispatcher delivers webhooks until the test ends, with short
// retries (see Options.Events).
func (s *Server) runDispatcher(t testing.TB, encoder *events.Encoder) {
	d := events.New(events.Options{
		Store: s.Store, Leases: s.Store, Changes: s.Store, Encoder: encoder, Guard: loopbackGuard(),
		Identity: "clienttest", LeaseTTL: 5 * time.Second, Timeout: 2 * time.Second,
		Initial: 5 * time.Millisecond, MaxWait: 20 * time.Millisecond, Horizon: 100 * time.Millisecond, Poll: 10 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
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
