package server

import (
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// buildController makes the controller and the rollout driver beside it,
// and has m watch them and the store.
func (s *Server) buildController(m *metrics.Metrics) error {
	copts, err := controllerOptions(s.cfg.Controller, s.db, s.log, m)
	if err != nil {
		return refused(err)
	}
	copts.Plans = s.db
	s.ctrl = controller.New(s.db, s.manager, copts)
	// The rollouts are driven by one replica at a time, beside its
	// controller, under the controller's identity, woken by tenants'
	// changes.
	ropts := rollout.Options{Leases: s.db, LeaseTTL: copts.LeaseTTL, Identity: copts.Identity, Logger: s.log}
	if feed, ok := s.db.(tenant.ChangeFeed); ok {
		ropts.Changes = feed
	}
	s.rollouts = rollout.New(s.db, s.db, ropts)
	// So are webhooks delivered, by one replica at a time.
	s.buildDispatcher(s.events, copts.Identity, copts.LeaseTTL, m)
	m.WatchEvents(s.db, time.Now, s.log)
	m.WatchQueue(s.ctrl.QueueDepth)
	m.WatchPartitions(s.ctrl.Partitions, s.ctrl.Members)
	m.WatchTenants(s.db, s.log)
	m.WatchRollouts(s.db, s.log)
	return nil
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
