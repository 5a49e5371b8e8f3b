package config

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Events tunes the outbox, the feed and webhook deliveries (docs/events.md);
// zero values take the dispatcher's defaults.
type Events struct {
	// Source is the CloudEvents source of every event; "landlord" when
	// unset. A URI reference naming this install, such as its API's URL.
	Source string `yaml:"source"`
	// AllowNetworks are CIDRs webhooks may be sent to although they are
	// not public (loopback, private, link-local...): by default deliveries
	// go to public addresses only.
	AllowNetworks []string `yaml:"allow_networks"`
	// Timeout bounds each delivery attempt (default 10s).
	Timeout workload.Duration `yaml:"timeout"`
	// Workers bounds the attempts in flight (default 16).
	Workers int `yaml:"workers"`
	// RetryInitial is the wait after a first failed attempt (default
	// 5s), doubled after each further one up to RetryMax (default 1h),
	// until the waits sum past RetryHorizon (default 24h): then the
	// delivery is given up and its subscription disabled.
	RetryInitial workload.Duration `yaml:"retry_initial"`
	RetryMax     workload.Duration `yaml:"retry_max"`
	RetryHorizon workload.Duration `yaml:"retry_horizon"`
	// Retention is how long events are kept for the feed and redelivery
	// (default 168h); those still to be delivered are kept longer.
	Retention workload.Duration `yaml:"retention"`
	// Poll is how often the dispatcher looks for due deliveries when
	// nothing wakes it (default 1s).
	Poll workload.Duration `yaml:"poll"`
}

// Networks returns AllowNetworks parsed.
func (e Events) Networks() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(e.AllowNetworks))
	for i, s := range e.AllowNetworks {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			if a, aerr := netip.ParseAddr(s); aerr == nil {
				p, err = a.Prefix(a.BitLen())
			}
		}
		if err != nil {
			return nil, fmt.Errorf("events.allow_networks[%d]: %q is not a CIDR (such as 10.0.0.0/8) or an address", i, s)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (e Events) validate() []error {
	var errs []error
	if _, err := e.Networks(); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		name string
		v    workload.Duration
	}{{"timeout", e.Timeout}, {"retry_initial", e.RetryInitial}, {"retry_max", e.RetryMax}, {"retry_horizon", e.RetryHorizon},
		{"retention", e.Retention}, {"poll", e.Poll}} {
		if time.Duration(d.v) < 0 {
			errs = append(errs, fmt.Errorf("events.%s: %s is negative", d.name, time.Duration(d.v)))
		}
	}
	if e.Workers < 0 {
		errs = append(errs, fmt.Errorf("events.workers: %d is negative", e.Workers))
	}
	if e.RetryMax != 0 && e.RetryInitial != 0 && e.RetryMax < e.RetryInitial {
		errs = append(errs, fmt.Errorf("events.retry_max (%s) is less than events.retry_initial (%s)", time.Duration(e.RetryMax), time.Duration(e.RetryInitial)))
	}
	return errs
}
