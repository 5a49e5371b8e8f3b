package server

import (
	"cmp"
	"time"

	"github.com/jaxxstorm/landlord/internal/build"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/metrics"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// eventParts are what the feed, the subscriptions and the dispatcher share:
// the encoder (whose Tenant the API sets), the keys that seal the
// subscriptions' secrets and the guard of their URLs.
type eventParts struct {
	encoder *events.Encoder
	guard   *events.Guard
}

// buildEvents makes the event parts from the configuration (events:),
// which Validate has checked.
func (s *Server) buildEvents() (eventParts, error) {
	nets, err := s.cfg.Events.Networks()
	if err != nil {
		return eventParts{}, refused(err)
	}
	return eventParts{
		encoder: &events.Encoder{Source: cmp.Or(s.cfg.Events.Source, "landlord")},
		guard:   events.NewGuard(nets),
	}, nil
}

// buildDispatcher makes the dispatcher that delivers webhooks, from the
// replica that holds its lease, under the controller's identity, and has
// m count what it does.
func (s *Server) buildDispatcher(parts eventParts, identity string, leaseTTL time.Duration, m *metrics.Metrics) {
	c := s.cfg.Events
	opts := events.Options{
		Store: s.db, Leases: s.db, Encoder: parts.encoder, Keys: s.opts.Keys, Guard: parts.guard,
		Identity: identity, LeaseTTL: leaseTTL,
		Timeout: time.Duration(c.Timeout), Workers: c.Workers,
		Initial: time.Duration(c.RetryInitial), MaxWait: time.Duration(c.RetryMax), Horizon: time.Duration(c.RetryHorizon),
		Retention: time.Duration(c.Retention), Poll: time.Duration(c.Poll),
		UserAgent: "landlord/" + build.Read().Version, Logger: s.log, Observer: m,
	}
	if feed, ok := s.db.(tenant.ChangeFeed); ok {
		opts.Changes = feed
	}
	s.dispatcher = events.New(opts)
}
