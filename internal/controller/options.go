package controller

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Options configure a Controller. Zero values take the documented defaults.
type Options struct {
	// Workers reconcile tenants in parallel, one tenant per worker at a
	// time. Default 16.
	Workers int
	// Resync is how often every live tenant is checked against its provider,
	// with ±10% jitter, from the start of one resync to the start of the
	// next. A resync spreads its checks evenly over 80% of the period, so a
	// provider is asked at a steady rate. Default 60s.
	Resync time.Duration
	// Sweep is how often the store is asked for tenants that need work,
	// catching announcements that were lost. Default 5m; a sweep also runs
	// when the controller starts.
	Sweep time.Duration
	// BaseBackoff and MaxBackoff bound the delay before retrying a failed
	// attempt: BaseBackoff·2^(attempt-1), jittered, at most MaxBackoff.
	// Defaults 1s and 5m.
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxRetries is how many failed attempts end in failed. Default 10.
	MaxRetries int
	// ProgressDeadline is how long a workload may take to run after
	// provisioning or updating starts before the tenant fails. Default 10m.
	ProgressDeadline time.Duration
	// PollInterval is how often a workload that is still starting is
	// checked. Default 2s.
	PollInterval time.Duration
	// SpecCache is how many tenants' resolved specs are kept in memory for
	// the drift checks of ready tenants; a tenant past it is resolved
	// again at each check. Default 10,000; negative keeps none.
	SpecCache int
	// OperationTimeout bounds one provider call. Default 5m.
	OperationTimeout time.Duration
	// ShutdownTimeout is how long in-flight operations may run once the
	// controller is asked to stop. Default 30s. A partition handed over to
	// another replica lets its in-flight operations run for this long or
	// LeaseTTL, whichever is less.
	ShutdownTimeout time.Duration
	// Leases, when set, makes the controller one member among the replicas
	// sharing these leases: it works only the partitions of the tenants it
	// holds the leases of (see Run). Nil means it works every tenant alone,
	// unfenced.
	Leases tenant.LeaseStore
	// LeaseTTL is how long a lease lasts without renewal: how long the
	// others wait for a replica that died before its partitions are taken
	// over. A replica that has not renewed for LeaseTTL·4/5 steps down from
	// all its partitions, before anyone may take them. Default 15s; at
	// least MinLeaseTTL.
	LeaseTTL time.Duration
	// LeaseRenew is how often a replica renews its leases (in one call),
	// looks at the members and acquires or hands over partitions. Default
	// LeaseTTL/3; at most LeaseTTL·2/5, so that a failed renewal is tried
	// again before the replica steps down.
	LeaseRenew time.Duration
	// Identity names this process in leases and events (the actor of the
	// status changes it records); it must be unique among the replicas
	// sharing a database. Default "<hostname>:<random>:<pid>", where the
	// six random characters keep apart processes that share a hostname and
	// a pid (containers given one hostname, each its pid 1).
	Identity string
	// Logger receives the controller's lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Plans gives the config of the plan versions tenants follow; a tenant
	// that follows a plan fails while it is nil.
	Plans PlanVersions
	// Observer, if set, is told of every reconcile.
	Observer ReconcileObserver
	// Probe checks that an endpoint of a move's target answers before the
	// move switches to it; nil dials it (ProbeEndpoint).
	Probe func(ctx context.Context, e provider.Endpoint) error
}

// ReconcileObserver records reconciles (for metrics).
type ReconcileObserver interface {
	// ObserveReconcile records one reconcile; result is "done", "requeue",
	// "retry" (after a delay) or "error".
	ObserveReconcile(result string, d time.Duration)
}

// WithDefaults returns o with every zero value replaced by its documented
// default, as New does; an Identity it makes up is random in part, so call
// it once and keep the result.
func (o Options) WithDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	def(&o.Resync, 60*time.Second)
	def(&o.Sweep, 5*time.Minute)
	def(&o.BaseBackoff, time.Second)
	def(&o.MaxBackoff, 5*time.Minute)
	def(&o.ProgressDeadline, 10*time.Minute)
	def(&o.PollInterval, 2*time.Second)
	if o.SpecCache == 0 {
		o.SpecCache = 10_000
	}
	def(&o.OperationTimeout, 5*time.Minute)
	def(&o.ShutdownTimeout, 30*time.Second)
	def(&o.LeaseTTL, DefaultLeaseTTL)
	def(&o.LeaseRenew, o.LeaseTTL/3)
	if o.MaxRetries <= 0 {
		o.MaxRetries = 10
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = host + ":" + rand.Text()[:6] + ":" + itoa(os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Probe == nil {
		o.Probe = ProbeEndpoint
	}
	return o
}
