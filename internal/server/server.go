package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/ui"
	"github.com/jaxxstorm/landlord/sdk/plugin"
)

// Options are what the server takes besides its configuration.
type Options struct {
	// Providers are the compute providers of the build; the configuration
	// enables some of them.
	Providers Providers
	// Keys seal the secrets of tenants' compute configs in the database;
	// nil or empty stores them in plain text.
	Keys *seal.Keyring
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Version is landlord's version as `landlord version` prints it,
	// handed to provider plugins.
	Version string
	// ConfigFile names the file the configuration was read from, for the
	// start-up line; "" means none.
	ConfigFile string
}

// withDefaults fills in what opts leaves out: a logger that discards, and
// a keyring without keys.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Keys == nil {
		o.Keys, _ = seal.NewKeyring("") // no key, nothing to refuse
	}
	return o
}

// Server is landlord's server: the API and the web console on one
// address, the controller and the rollout driver behind them, on one
// database. New builds it; Run serves it.
type Server struct {
	cfg  config.Config
	opts Options
	log  *slog.Logger

	access   access
	ln       net.Listener
	db       store
	dbDesc   string
	registry *compute.Registry
	plugins  []*plugin.Plugin
	manager  *compute.Manager
	ctrl     *controller.Controller
	rollouts *rollout.Driver
	// dispatcher delivers webhooks (nil when the controller does not run
	// here).
	dispatcher *events.Dispatcher
	events     eventParts
	console    *ui.Console
	http       *http.Server

	closeOnce sync.Once
	closeErr  error
}

// New checks cfg, binds its listen address, opens the database (creating
// and migrating it if need be), enables the compute providers and builds
// the controller, the API and the console; nothing runs until Run. The
// address is bound before the database is opened, so that a taken address
// fails before a database is created. Errors of the configuration match
// ErrConfig. A Server that New returns holds the address and the database
// until Run returns or Close is called.
func New(ctx context.Context, cfg config.Config, opts Options) (*Server, error) {
	opts = opts.withDefaults()
	s := &Server{cfg: cfg, opts: opts, log: opts.Logger}
	var err error
	if s.access, err = checkAccess(ctx, cfg, s.log); err != nil {
		return nil, err
	}
	if err := opts.Providers.checkNames(cfg); err != nil {
		return nil, refused(err)
	}
	if len(s.access.tokens) == 0 && cfg.Insecure {
		s.log.Warn("serving without tokens on a non-loopback address (--insecure): anyone who reaches it may change every tenant", slog.String("listen", cfg.Listen))
	}
	// Listen before anything is opened or runs, so that a taken address
	// fails start-up before the database is created or migrated.
	if s.ln, err = bindAPI(cfg.Listen); err != nil {
		return nil, err
	}
	m := metrics.New()
	if s.events, err = s.buildEvents(); err != nil {
		return nil, err
	}
	err = s.openCompute(ctx, m)
	if err == nil {
		err = s.buildController(m)
	}
	if err == nil {
		err = s.buildHTTP(ctx, m)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// bindAPI listens on the API's address; the error of one it cannot have
// (taken, or not this host's) names the three places the address is set.
func bindAPI(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w; choose another address with --listen, LANDLORD_LISTEN or listen: in the configuration file", addr, err)
	}
	return ln, nil
}

// openCompute opens the database and enables the providers, keyed with
// the install's key from the database.
func (s *Server) openCompute(ctx context.Context, m *metrics.Metrics) error {
	schemas := &registrySchemas{}
	var err error
	s.db, s.dbDesc, err = openStore(ctx, s.cfg.Database, seal.NewConfigs(s.opts.Keys, schemas), s.log)
	if err != nil {
		return err
	}
	hashKey, err := s.db.Key(ctx, configHashKey)
	if err != nil {
		return fmt.Errorf("database: read the install key: %w", err)
	}
	registry, defaultProvider, err := s.opts.Providers.enable(ctx, s.cfg, hashKey, s.log)
	if err != nil {
		return refused(err)
	}
	if s.plugins, err = startPlugins(ctx, s.cfg.Plugins, registry, hashKey, s.opts.Version, s.log); err != nil {
		return refused(err)
	}
	s.registry = registry
	schemas.set(registry)
	s.manager, err = compute.NewManager(registry, compute.ManagerOptions{DefaultProvider: defaultProvider, Logger: s.log, Observer: m, HashKey: hashKey})
	if err != nil {
		return refused(fmt.Errorf("config: compute.default: %w", err))
	}
	warnStranded(ctx, s.db, registry, s.log)
	return nil
}

// buildHTTP makes the API and the console, and the HTTP server of both.
func (s *Server) buildHTTP(ctx context.Context, m *metrics.Metrics) error {
	ready := map[string]func(context.Context) error{}
	if s.runsController() {
		ready["controller"] = func(context.Context) error { return s.ctrl.Ready() }
	}
	apiServer, err := api.New(s.apiOptions(ready, m))
	if err != nil {
		return err
	}
	if s.console, err = newConsole(ctx, s.db, apiServer, s.log); err != nil {
		return err
	}
	handler := http.Handler(withConsole(apiServer, s.console))
	if s.access.tls == nil {
		handler = apiServer.RequireSecureTokens(handler, api.TransportPolicy{InsecureHTTP: s.cfg.InsecureHTTP || s.cfg.Insecure, TrustedProxies: s.access.proxies, CredentialPaths: []string{ui.Prefix}})
	}
	s.http = api.HTTPServer(s.cfg.Listen, handler)
	s.http.TLSConfig = s.access.tls
	// Failed handshakes (a client of another CA, one without a required
	// certificate) go to landlord's log, not to the standard logger.
	s.http.ErrorLog = slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)
	// Live pages hold their streams open: end them when the server stops,
	// so that Shutdown does not wait for them.
	s.http.RegisterOnShutdown(s.console.Close)
	return nil
}

// apiOptions are the API's options, from the configuration and what New
// has built.
func (s *Server) apiOptions(ready map[string]func(context.Context) error, m *metrics.Metrics) api.Options {
	return api.Options{
		Store:            s.db,
		Fleet:            s.db,
		Compute:          s.manager,
		Tokens:           s.access.tokens,
		Verifier:         s.access.verifier,
		MaxBodyBytes:     s.cfg.API.MaxBodyBytes,
		IdempotencyLease: time.Duration(s.cfg.API.IdempotencyLease),
		Hosts:            s.cfg.API.Hosts,
		Ready:            ready,
		Logger:           s.log,
		Observer:         m,
		Metrics:          m.Handler(),
		Events:           s.db,
		EventEncoder:     s.events.encoder,
		EventKeys:        s.opts.Keys,
		EventGuard:       s.events.guard,
		Changes:          changeFeed(s.db),
	}
}

// changeFeed is db's change feed, nil when it has none.
func changeFeed(db store) tenant.ChangeFeed {
	feed, _ := db.(tenant.ChangeFeed)
	return feed
}

// runsController reports whether this replica runs the controller and the
// rollout driver (controller.enabled, default true).
func (s *Server) runsController() bool {
	return s.cfg.Controller.Enabled == nil || *s.cfg.Controller.Enabled
}

// Addr is the address the API is bound to: the configured one, with the
// port the system chose for port 0.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the API's base URL, http:// or https://.
func (s *Server) URL() string {
	scheme := "http"
	if s.access.tls != nil {
		scheme = "https"
	}
	return scheme + "://" + s.Addr().String()
}

// Close releases what New holds, the console's streams, the database and
// the address, for a Server that is not run; Run calls it as it returns.
// Calls after the first return the first's error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.console != nil {
			s.console.Close()
		}
		if s.db != nil {
			errs = append(errs, s.db.Close())
		}
		errs = append(errs, closePlugins(s.plugins))
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
