package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/jaxxstorm/landlord/internal/build"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Metrics records landlord's metrics in one registry.
type Metrics struct {
	Registry *prometheus.Registry

	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	operations     *prometheus.CounterVec
	opDuration     *prometheus.HistogramVec
	reconciles     *prometheus.CounterVec
	reconcileTimes *prometheus.HistogramVec
	drift          *prometheus.CounterVec
	events         eventMetrics
}

// New returns Metrics in a new registry that also holds the Go runtime and
// process collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "landlord_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "landlord_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "landlord_provider_operations_total", Help: "Compute provider operations by provider, operation and outcome.",
		}, []string{"provider", "operation", "outcome"}),
		opDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "landlord_provider_operation_duration_seconds", Help: "Compute provider operation latency.",
			Buckets: prometheus.ExponentialBuckets(.001, 4, 10),
		}, []string{"provider", "operation"}),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "landlord_reconciles_total", Help: "Reconciles by result: done, requeue, retry (after backoff) or error.",
		}, []string{"result"}),
		reconcileTimes: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "landlord_reconcile_duration_seconds", Help: "Reconcile latency by result.",
			Buckets: prometheus.ExponentialBuckets(.0005, 4, 10),
		}, []string{"result"}),
	}
	// Drift is labelled by placement, whose names are few across a fleet
	// (web, worker; "default" for a tenant declared without placements),
	// never by tenant.
	m.drift = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "landlord_drift_detected_total",
		Help: "Differences found between tenants' declared state and what runs (each path of each new drift), by provider, placement (default for a tenant without placements) and kind.",
	}, []string{"provider", "placement", "kind"})
	reg.MustRegister(m.httpRequests, m.httpDuration, m.operations, m.opDuration, m.reconciles, m.reconcileTimes, m.drift)
	info := build.Read()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "landlord_build_info",
		Help: "Always 1, labelled with the version, commit and Go release of the running landlord (see `landlord version`).",
		ConstLabels: prometheus.Labels{
			"version": info.Version, "revision": info.Commit, "goversion": info.GoVersion,
		},
	}, func() float64 { return 1 }))
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// ObserveHTTP records one HTTP request. route is the route pattern, never
// the raw path, so that tenant names do not make new series.
func (m *Metrics) ObserveHTTP(route, method string, code int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// ObserveOperation records one provider operation (compute.Manager).
func (m *Metrics) ObserveOperation(provider, operation, outcome string, d time.Duration) {
	m.operations.WithLabelValues(provider, operation, outcome).Inc()
	m.opDuration.WithLabelValues(provider, operation).Observe(d.Seconds())
}

// ObserveReconcile records one reconcile (controller).
func (m *Metrics) ObserveReconcile(result string, d time.Duration) {
	m.reconciles.WithLabelValues(result).Inc()
	m.reconcileTimes.WithLabelValues(result).Observe(d.Seconds())
}

// ObserveDrift records one difference found in the workload of a tenant
// declared without placements, whose one placement is
// tenant.DefaultPlacement (controller).
func (m *Metrics) ObserveDrift(provider string, kind provider.DriftKind) {
	m.ObservePlacementDrift(tenant.DefaultPlacement, provider, kind)
}

// ObservePlacementDrift records one difference found in the workload of
// a tenant's placement, named placement, on provider (controller).
func (m *Metrics) ObservePlacementDrift(placement, provider string, kind provider.DriftKind) {
	m.drift.WithLabelValues(provider, placement, string(kind)).Inc()
}

// WatchQueue exports the controller's work-queue depth.
func (m *Metrics) WatchQueue(depth func() int) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "landlord_controller_queue_depth", Help: "Tenants waiting in this replica's controller work queue (only tenants of the partitions it holds).",
	}, func() float64 { return float64(depth()) }))
}

// WatchPartitions exports how many partitions of the tenants this
// replica's controller works, and how many replicas it last saw sharing
// them.
func (m *Metrics) WatchPartitions(held, members func() int) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "landlord_controller_partitions", Help: "Partitions of the tenants whose lease this replica holds and whose tenants it reconciles.",
		}, func() float64 { return float64(held()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "landlord_controller_members", Help: "Replicas sharing the tenants, as this replica last saw their member leases.",
		}, func() float64 { return float64(members()) }),
	)
}

// WatchTenants exports tenants by status, counted by the store at each
// scrape.
func (m *Metrics) WatchTenants(counter tenant.StatusCounter, log *slog.Logger) {
	m.Registry.MustRegister(&tenantCollector{counter: counter, log: log,
		desc: prometheus.NewDesc("landlord_tenants", "Tenants that are not deleted, by status.", []string{"status"}, nil)})
}

type tenantCollector struct {
	counter tenant.StatusCounter
	log     *slog.Logger
	desc    *prometheus.Desc
}

func (c *tenantCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *tenantCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.counter.CountByStatus(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Warn("cannot count tenants for metrics", slog.Any("error", err))
		}
		return
	}
	for _, st := range tenant.Statuses {
		if st == tenant.StatusDeleted {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[st]), string(st))
	}
}
