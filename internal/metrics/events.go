package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jaxxstorm/landlord/internal/events"
)

// eventMetrics are the dispatcher's counters.
type eventMetrics struct {
	once       sync.Once
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
}

// ObserveDelivery implements events.Observer:
// landlord_event_deliveries_total by outcome (delivered, failed, given_up)
// and landlord_event_delivery_duration_seconds.
func (m *Metrics) ObserveDelivery(outcome string, latency time.Duration) {
	m.events.init(m.Registry)
	m.events.deliveries.WithLabelValues(outcome).Inc()
	m.events.latency.Observe(latency.Seconds())
}

func (e *eventMetrics) init(reg *prometheus.Registry) {
	e.once.Do(func() {
		e.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "landlord_event_deliveries_total", Help: "Webhook delivery attempts by outcome: delivered, failed (to be retried) or given_up.",
		}, []string{"outcome"})
		e.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "landlord_event_delivery_duration_seconds", Help: "Webhook delivery attempt latency, to the receiver's answer.",
			Buckets: prometheus.ExponentialBuckets(.001, 4, 9),
		})
		reg.MustRegister(e.deliveries, e.latency)
	})
}

// WatchEvents exports, read from store at each scrape,
// landlord_event_deliveries_pending (the queue) and
// landlord_event_oldest_undelivered_seconds (the lag: the age of the
// oldest event a subscription still waits for, 0 when none), and
// registers the delivery counters so that they show before the first
// delivery.
func (m *Metrics) WatchEvents(store events.Store, now func() time.Time, log *slog.Logger) {
	m.events.init(m.Registry)
	for _, o := range []string{"delivered", "failed", "given_up"} {
		m.events.deliveries.WithLabelValues(o)
	}
	m.Registry.MustRegister(&eventCollector{store: store, now: now, log: log,
		pending: prometheus.NewDesc("landlord_event_deliveries_pending", "Webhook deliveries not yet made (or being retried).", nil, nil),
		lag:     prometheus.NewDesc("landlord_event_oldest_undelivered_seconds", "Age of the oldest event a subscription has not yet been delivered; 0 when none waits.", nil, nil),
	})
}

type eventCollector struct {
	store        events.Store
	now          func() time.Time
	log          *slog.Logger
	pending, lag *prometheus.Desc
}

func (c *eventCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.lag
}

func (c *eventCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, oldest, err := c.store.DeliveryStats(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Warn("cannot count the webhook deliveries for metrics", slog.Any("error", err))
		}
		return
	}
	lag := 0.0
	if !oldest.IsZero() {
		lag = max(c.now().Sub(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
}
