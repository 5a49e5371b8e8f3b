package controller

import (
	"log/slog"
	"os"
	"time"
)

// Options configure a Controller. Zero values take the documented defaults.
type Options struct {
	// Workers reconcile tenants in parallel, one tenant per worker at a
	// time. Default 16.
	Workers int
	// Resync is how often every live tenant is checked against its provider,
	// with ±10% jitter. Default 60s.
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
	// OperationTimeout bounds one provider call. Default 5m.
	OperationTimeout time.Duration
	// ShutdownTimeout is how long in-flight operations may run once the
	// controller is asked to stop. Default 30s.
	ShutdownTimeout time.Duration
	// Identity names this process in leases and events. Default
	// "controller@<hostname>:<pid>".
	Identity string
	// Logger receives the controller's lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Observer, if set, is told of every reconcile.
	Observer ReconcileObserver
}

// ReconcileObserver records reconciles (for metrics).
type ReconcileObserver interface {
	// ObserveReconcile records one reconcile; result is "done", "requeue",
	// "retry" (after a delay) or "error".
	ObserveReconcile(result string, d time.Duration)
}

func (o Options) withDefaults() Options {
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
	def(&o.OperationTimeout, 5*time.Minute)
	def(&o.ShutdownTimeout, 30*time.Second)
	if o.MaxRetries <= 0 {
		o.MaxRetries = 10
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = "controller@" + host + ":" + itoa(os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
