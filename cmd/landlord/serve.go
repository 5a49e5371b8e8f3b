package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/internal/build"
	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/server"
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

// serve runs landlord with cfg, read from file ("" for none), until ctx
// ends, then stops gracefully. It reads the encryption keys, which may
// name environment variables, and hands the rest to internal/server.
func serve(ctx context.Context, cfg config.Config, file string, stderr io.Writer) error {
	log := newLogger(cfg.LogLevel, stderr)
	keys, err := cfg.Encryption.Keyring(os.Getenv, log)
	if err != nil {
		return withExitCode(exitUsage, err)
	}
	srv, err := server.New(ctx, cfg, server.Options{Providers: providerTable, Keys: keys, Logger: log, ConfigFile: file, Version: build.Read().String()})
	if err != nil {
		return serverExit(err)
	}
	return srv.Run(ctx)
}

// serverExit marks the errors of a configuration the server refuses as
// usage errors; others (an address or a database it cannot have) end
// with exit code 1.
func serverExit(err error) error {
	if errors.Is(err, server.ErrConfig) {
		return withExitCode(exitUsage, err)
	}
	return err
}

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
