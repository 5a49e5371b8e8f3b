package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// shutdownTimeout bounds the wait for requests in flight when the server
// stops.
const shutdownTimeout = 30 * time.Second

// Run serves the API and the console, and runs the controller and the
// rollout driver (unless controller.enabled is false), until ctx ends;
// then it stops taking requests, finishes those in flight (for up to 30
// s), stops the controller and the driver, and closes the database. It
// returns nil after such a stop, and an error when the address cannot be
// served. Run is called once.
func (s *Server) Run(ctx context.Context) error {
	defer s.Close()
	s.logStarted()
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.runsController() {
		wg.Go(func() {
			if err := s.ctrl.Run(runCtx); err != nil {
				s.log.Error("controller stopped", slog.Any("error", err))
			}
		})
		wg.Go(func() { s.rollouts.Run(runCtx) })
		wg.Go(func() { s.dispatcher.Run(runCtx) })
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.serve() }()

	select {
	case <-ctx.Done():
		s.log.Info("stopping: finishing requests and in-flight operations")
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			cancel()
			wg.Wait()
			return fmt.Errorf("serve: %w", err)
		}
	}
	shutdownCtx, done := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer done()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("requests did not finish in time", slog.Any("error", err))
	}
	cancel()
	wg.Wait()
	s.log.Info("landlord stopped")
	return nil
}

// serve serves HTTP, or HTTPS with HTTP/2, on the bound address until
// the HTTP server shuts down.
func (s *Server) serve() error {
	if s.access.tls != nil {
		// ServeTLS offers HTTP/2; the certificate comes from
		// TLSConfig.GetCertificate.
		return s.http.ServeTLS(s.ln, "", "")
	}
	return s.http.Serve(s.ln)
}

// logStarted logs the one line that says what runs: the database, the
// providers, the address, how requests are authenticated, whether the
// controller runs, how secrets are stored and the configuration file.
func (s *Server) logStarted() {
	s.log.Info("landlord started",
		slog.String("database", s.dbDesc),
		slog.String("providers", strings.Join(s.registry.Names(), ",")),
		slog.String("default_provider", s.manager.DefaultProvider()),
		slog.String("address", s.URL()),
		slog.String("auth", s.access.describe(s.cfg.Insecure)),
		slog.Bool("controller", s.runsController()),
		slog.String("encryption", encryptionSummary(s.opts.Keys)),
		slog.String("config", cmp.Or(s.opts.ConfigFile, "none")))
}
