package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/ui"
)

func init() { commands = append(commands, newServeCommand) }

func newServeCommand() *cobra.Command {
	var (
		configPath, listen, database, logLevel, provider string
		tlsCert, tlsKey, tlsClientCA, tlsClientAuth      string
		insecure, insecureHTTP                           bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API and the controller",
		Example: `  landlord serve
  landlord serve --provider docker --database landlord.db
  landlord serve --config landlord.yaml --listen 0.0.0.0:8443 --tls-cert-file server.pem --tls-key-file server-key.pem`,
		Long: `Run landlord: the HTTP API on --listen and the controller, which shares the
tenants with the other replicas on the same database.

With no configuration it stores tenants in ./landlord.db, listens on
127.0.0.1:8080 and runs tenants on the local Docker Engine (DOCKER_HOST or
the default socket) when one answers, else on the mock provider, which runs
nothing. See docs/configuration.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, file, err := config.Load(configPath, os.Getenv)
			if err != nil {
				return withExitCode(exitUsage, err)
			}
			flags := cmd.Flags()
			if flags.Changed("listen") {
				cfg.Listen = listen
			}
			if flags.Changed("database") {
				cfg.Database = config.ParseDatabase(database)
			}
			if flags.Changed("log-level") {
				cfg.LogLevel = logLevel
			}
			if flags.Changed("insecure") {
				cfg.Insecure = insecure
			}
			if flags.Changed("provider") {
				cfg.SetComputeDefault(provider)
			}
			for name, v := range map[string]struct{ dst, val *string }{
				"tls-cert-file": {&cfg.TLS.CertFile, &tlsCert}, "tls-key-file": {&cfg.TLS.KeyFile, &tlsKey},
				"tls-client-ca-file": {&cfg.TLS.ClientCAFile, &tlsClientCA}, "tls-client-auth": {&cfg.TLS.ClientAuth, &tlsClientAuth},
			} {
				if flags.Changed(name) {
					*v.dst = *v.val
				}
			}
			if flags.Changed("insecure-http") {
				cfg.InsecureHTTP = insecureHTTP
			}
			if err := cfg.Validate(); err != nil {
				return withExitCode(exitUsage, err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, file, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file, YAML or JSON (env LANDLORD_CONFIG; default ./landlord.yaml when it exists)")
	f.StringVar(&listen, "listen", "", "API address (env LANDLORD_LISTEN; default 127.0.0.1:8080)")
	f.StringVar(&database, "database", "", "SQLite file path or postgres:// URL (env LANDLORD_DATABASE; default landlord.db)")
	f.StringVar(&logLevel, "log-level", "", "debug, info, warn or error (env LANDLORD_LOG_LEVEL; default info)")
	f.StringVar(&provider, "provider", "", "default compute provider, enabled with its defaults when the configuration has no compute block: "+oneOf(providerNames())+" (env LANDLORD_PROVIDER; default docker when a Docker Engine answers, else mock)")
	f.BoolVar(&insecure, "insecure", false, "serve without tokens, and over plain HTTP, on a non-loopback address (env LANDLORD_INSECURE)")
	f.BoolVar(&insecureHTTP, "insecure-http", false, "serve plain HTTP, and take tokens over it, on a non-loopback address (env LANDLORD_INSECURE_HTTP)")
	f.StringVar(&tlsCert, "tls-cert-file", "", "serve HTTPS with this PEM certificate, reloaded when it changes (env LANDLORD_TLS_CERT_FILE)")
	f.StringVar(&tlsKey, "tls-key-file", "", "the key of --tls-cert-file (env LANDLORD_TLS_KEY_FILE)")
	f.StringVar(&tlsClientCA, "tls-client-ca-file", "", "verify client certificates against these PEM CAs (env LANDLORD_TLS_CLIENT_CA_FILE)")
	f.StringVar(&tlsClientAuth, "tls-client-auth", "", "require or verify_if_given (env LANDLORD_TLS_CLIENT_AUTH; default verify_if_given)")
	return cmd
}

// serve runs landlord until ctx ends, then stops gracefully.
func serve(ctx context.Context, cfg config.Config, file string, stderr io.Writer) error {
	log := newLogger(cfg.LogLevel, stderr)
	tokens := make([]api.Token, len(cfg.Tokens))
	for i, t := range cfg.Tokens {
		tokens[i] = api.Token{Name: t.Name, Secret: t.Secret, SHA256: t.SHA256, Role: api.Role(t.Role)}
	}
	tokens = append(tokens, clientRoleTokens(cfg.TLS.ClientRoles)...)
	verifier, err := newVerifier(ctx, cfg.OIDC, log)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	if err := api.CheckListen(cfg.Listen, len(tokens) > 0 || verifier != nil, cfg.Insecure); err != nil {
		return withExitCode(exitUsage, fmt.Errorf("%w (tokens: in the configuration file, or LANDLORD_ADMIN_TOKEN and LANDLORD_READER_TOKEN)", err))
	}
	if err := cfg.CheckPlainHTTP(); err != nil {
		return withExitCode(exitUsage, err)
	}
	proxies, err := cfg.Proxies()
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	var tlsConfig *tls.Config
	if cfg.TLS.Enabled() {
		if tlsConfig, err = serverTLS(cfg.TLS, log); err != nil {
			return withExitCode(exitUsage, err)
		}
	} else if !config.LoopbackListen(cfg.Listen) {
		log.Warn("serving plain HTTP on a non-loopback address: tokens and secrets cross the network in clear text unless a TLS-terminating proxy (trusted_proxies) is in front; set tls.cert_file and tls.key_file to serve HTTPS", slog.String("listen", cfg.Listen))
	}
	if err := checkProviderNames(cfg); err != nil {
		return withExitCode(exitUsage, err)
	}
	if len(tokens) == 0 && cfg.Insecure {
		log.Warn("serving without tokens on a non-loopback address (--insecure): anyone who reaches it may change every tenant", slog.String("listen", cfg.Listen))
	}

	// Listen before anything is opened or runs, so that a taken address
	// fails start-up before the database is created or migrated.
	ln, err := bindAPI(cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close() // after Serve, a no-op

	m := metrics.New()
	keys, err := cfg.Encryption.Keyring(os.Getenv, log)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	schemas := &registrySchemas{}
	store, dbDesc, err := openStore(ctx, cfg.Database, seal.NewConfigs(keys, schemas), log)
	if err != nil {
		return err
	}
	defer store.Close()
	hashKey, err := store.Key(ctx, configHashKey)
	if err != nil {
		return fmt.Errorf("database: read the install key: %w", err)
	}
	registry, defaultProvider, err := providers(ctx, cfg, hashKey, log)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	schemas.set(registry)
	manager, err := compute.NewManager(registry, compute.ManagerOptions{DefaultProvider: defaultProvider, Logger: log, Observer: m, HashKey: hashKey})
	if err != nil {
		return withExitCode(exitUsage, fmt.Errorf("config: compute.default: %w", err))
	}
	warnStranded(ctx, store, registry, log)

	copts, err := controllerOptions(cfg.Controller, store, log, m)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	copts.Plans = store
	ctrl := controller.New(store, manager, copts)
	// The rollouts are driven by one replica at a time, beside its
	// controller, under the controller's identity, woken by tenants'
	// changes.
	ropts := rollout.Options{Leases: store, LeaseTTL: copts.LeaseTTL, Identity: copts.Identity, Logger: log}
	if feed, ok := store.(tenant.ChangeFeed); ok {
		ropts.Changes = feed
	}
	rollouts := rollout.New(store, store, ropts)
	m.WatchQueue(ctrl.QueueDepth)
	m.WatchPartitions(ctrl.Partitions, ctrl.Members)
	m.WatchTenants(store.(tenant.StatusCounter), log)
	m.WatchRollouts(store, log)

	ready := map[string]func(context.Context) error{}
	runController := cfg.Controller.Enabled == nil || *cfg.Controller.Enabled
	if runController {
		ready["controller"] = func(context.Context) error { return ctrl.Ready() }
	}
	server, err := api.New(api.Options{Store: store, Fleet: store, Compute: manager, Tokens: tokens, Verifier: verifier, MaxBodyBytes: cfg.API.MaxBodyBytes,
		IdempotencyLease: time.Duration(cfg.API.IdempotencyLease), Hosts: cfg.API.Hosts, Ready: ready, Logger: log, Observer: m, Metrics: m.Handler()})
	if err != nil {
		return err
	}
	console, err := newConsole(ctx, store, server, log)
	if err != nil {
		return err
	}
	defer console.Close()
	handler := http.Handler(withConsole(server, console))
	if tlsConfig == nil {
		handler = server.RequireSecureTokens(handler, api.TransportPolicy{InsecureHTTP: cfg.InsecureHTTP || cfg.Insecure, TrustedProxies: proxies, CredentialPaths: []string{ui.Prefix}})
	}
	httpServer := api.HTTPServer(cfg.Listen, handler)
	httpServer.TLSConfig = tlsConfig
	// Failed handshakes (a client of another CA, one without a required
	// certificate) go to landlord's log, not to the standard logger.
	httpServer.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	// Live pages hold their streams open: end them when the server stops,
	// so that Shutdown does not wait for them.
	httpServer.RegisterOnShutdown(console.Close)

	auth := "tokens"
	if len(tokens) == 0 {
		auth = "none (loopback only)"
		if cfg.Insecure {
			auth = "none (insecure)"
		}
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	log.Info("landlord started",
		slog.String("database", dbDesc),
		slog.String("providers", strings.Join(registry.Names(), ",")),
		slog.String("default_provider", manager.DefaultProvider()),
		slog.String("address", scheme+"://"+ln.Addr().String()),
		slog.String("auth", auth),
		slog.Bool("controller", runController),
		slog.String("encryption", encryptionSummary(keys)),
		slog.String("config", cmp.Or(file, "none")))

	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if runController {
		wg.Go(func() {
			if err := ctrl.Run(runCtx); err != nil {
				log.Error("controller stopped", slog.Any("error", err))
			}
		})
		wg.Go(func() { _ = rollouts.Run(runCtx) })
	}
	serveErr := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			// ServeTLS offers HTTP/2; the certificate comes from
			// tlsConfig.GetCertificate.
			serveErr <- httpServer.ServeTLS(ln, "", "")
			return
		}
		serveErr <- httpServer.Serve(ln)
	}()

	select {
	case <-ctx.Done():
		log.Info("stopping: finishing requests and in-flight operations")
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			cancel()
			wg.Wait()
			return fmt.Errorf("serve: %w", err)
		}
	}
	shutdownCtx, done := context.WithTimeout(context.Background(), 30*time.Second)
	defer done()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		log.Warn("requests did not finish in time", slog.Any("error", err))
	}
	cancel()
	wg.Wait()
	log.Info("landlord stopped")
	return nil
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

// providers enables a provider for each compute block. With none
// configured it enables the one compute.default names, else Docker when an
// Engine answers, else the mock.
func providers(ctx context.Context, cfg config.Config, hashKey []byte, log *slog.Logger) (*compute.Registry, string, error) {
	blocks, err := cfg.ComputeBlocks()
	if err != nil {
		return nil, "", err
	}
	def, err := cfg.ComputeDefault()
	if err != nil {
		return nil, "", err
	}
	var errs []error
	if def != "" {
		if _, err := lookupProvider(def); err != nil {
			errs = append(errs, fmt.Errorf("config: compute.default: %w", err))
		}
	}
	registry := compute.NewRegistry()
	if len(blocks) == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, "", err
		}
		p, err := implicitProvider(ctx, def, providerEnv{HashKey: hashKey, Logger: log}, log)
		if err != nil {
			return nil, "", err
		}
		return registry, p.Name(), registry.Register(p)
	}
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		p, err := newProvider(ctx, name, providerEnv{Block: blocks[name], HashKey: hashKey, Logger: log})
		if err == nil {
			err = registry.Register(p)
		}
		if err == nil {
			warnUnhealthy(ctx, p, log)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	return registry, def, nil
}

// warnUnhealthy says at start-up when a configured provider's platform
// does not answer, or answers that the block names something it does not
// have (a namespace, a region): landlord starts all the same, since a
// platform may come up later, and its tenants wait for it.
func warnUnhealthy(ctx context.Context, p compute.Provider, log *slog.Logger) {
	hc, ok := p.(compute.HealthChecker)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	if err := hc.CheckHealth(ctx); err != nil {
		log.Warn("a compute provider's health check fails at start-up: its tenants wait until it passes (GET /v1/compute/providers shows it)",
			slog.String("provider", p.Name()), slog.String("error", err.Error()))
	}
}

// engineTimeout bounds the ping that decides whether a Docker Engine answers.
const engineTimeout = 3 * time.Second

// implicitProvider is the provider of a configuration without compute
// blocks: the one named, or Docker when an Engine answers, else the mock.
func implicitProvider(ctx context.Context, name string, env providerEnv, log *slog.Logger) (compute.Provider, error) {
	if name != "" {
		return newProvider(ctx, name, env)
	}
	p, err := newProvider(ctx, docker.Name, env)
	if err != nil {
		return nil, err
	}
	hc, ok := p.(compute.HealthChecker)
	if !ok {
		return p, nil
	}
	pingCtx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	err = hc.CheckHealth(pingCtx)
	if err == nil {
		log.Info("no compute provider is configured and a Docker Engine answers: using the docker provider (docs/configuration.md)")
		return p, nil
	}
	log.Warn("no compute provider is configured and no Docker Engine answers: using the mock provider, which runs nothing; start Docker or configure a provider (docs/configuration.md)",
		slog.String("docker", err.Error()))
	if c, ok := p.(io.Closer); ok {
		_ = c.Close() // the Engine client goes unused
	}
	return newProvider(ctx, mock.Name, env)
}

// consoleSessionKey names the install key (tenant.KeyStore) that seals the
// web console's session cookies, the same on every replica.
const consoleSessionKey = "console-session"

// newConsole makes the web console, live when the store announces changes.
func newConsole(ctx context.Context, store store, server *api.Server, log *slog.Logger) (*ui.Console, error) {
	key, err := store.Key(ctx, consoleSessionKey)
	if err != nil {
		return nil, fmt.Errorf("database: read the console's key: %w", err)
	}
	opts := ui.Options{API: server.Handler(), SessionKey: key, Sessions: store, Logger: log}
	if feed, ok := store.(tenant.ChangeFeed); ok {
		opts.Changes = feed.Changes
	}
	return ui.New(opts)
}

// withConsole serves the console under /ui/, beside the API, and sends a
// browser that asks for / to it.
func withConsole(server *api.Server, console *ui.Console) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, server.Wrap(console))
	mux.Handle("GET /{$}", http.RedirectHandler(ui.Prefix, http.StatusFound))
	mux.Handle("/", server.Handler())
	return mux
}

// configHashKey names the install key (tenant.KeyStore) every compute
// provider keys its configuration hashes with, so that they reveal nothing
// of the secrets they cover and agree across restarts and replicas. It was
// "docker-config-hash" before the stores' migrations copied it here.
const configHashKey = "provider-config-hash"

// store is what serve needs of a database.
type store interface {
	tenant.Store
	fleet.Store
	tenant.LeaseStore
	tenant.StatusCounter
	tenant.KeyStore
	identity.SessionStore
}

// openStore opens the database; sealer, if set, seals and opens the
// secrets of compute configs (see tenant.Sealer).
func openStore(ctx context.Context, db config.Database, sealer tenant.Sealer, log *slog.Logger) (store, string, error) {
	switch db.Driver {
	case "postgres":
		s, err := postgres.Open(ctx, db.URL, postgres.Options{Logger: log, Sealer: sealer})
		if err != nil {
			return nil, "", fmt.Errorf("database (database.url, --database, LANDLORD_DATABASE): %w", err)
		}
		return s, "postgres", nil
	default:
		s, err := sqlite.Open(ctx, db.Path, sqlite.Options{Logger: log, Sealer: sealer})
		if err != nil {
			return nil, "", fmt.Errorf("database (database.path, --database, LANDLORD_DATABASE): %w", err)
		}
		return s, "sqlite:" + db.Path, nil
	}
}

// controllerOptions are the controller's options from the configuration,
// with the controller's defaults filled in (the identity among them, which
// names this replica in the leases and in the history): it shares the
// tenants with the other replicas through the store's leases (on SQLite,
// one replica holds every partition). It reports lease timings out of
// bounds (controller.CheckLease) before anything runs.
func controllerOptions(c config.Controller, leases tenant.LeaseStore, log *slog.Logger, m *metrics.Metrics) (controller.Options, error) {
	opts := controller.Options{
		Workers:          c.Workers,
		Resync:           time.Duration(c.Resync),
		Sweep:            time.Duration(c.Sweep),
		MaxRetries:       c.MaxRetries,
		ProgressDeadline: time.Duration(c.ProgressDeadline),
		PollInterval:     time.Duration(c.PollInterval),
		ShutdownTimeout:  time.Duration(c.ShutdownTimeout),
		Leases:           leases,
		LeaseTTL:         time.Duration(c.LeaseTTL),
		LeaseRenew:       time.Duration(c.LeaseRenew),
		Logger:           log,
		Observer:         m,
	}.WithDefaults()
	return opts, controller.CheckLease(opts.LeaseTTL, opts.LeaseRenew)
}

// The metrics count what the controller reports, drift included.
var _ controller.DriftObserver = (*metrics.Metrics)(nil)

// newLogger logs text on a terminal and JSON otherwise.
func newLogger(level string, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lvl}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return slog.New(slog.NewTextHandler(w, opts))
		}
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
