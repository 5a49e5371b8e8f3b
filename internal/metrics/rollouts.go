package metrics

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jaxxstorm/landlord/internal/fleet"
)

// memberStates are the member states exported, in order.
var memberStates = []fleet.MemberState{fleet.MemberPending, fleet.MemberChanging, fleet.MemberDone,
	fleet.MemberFailed, fleet.MemberSkipped, fleet.MemberRolledBack}

// WatchRollouts exports the active rollouts of store, read at each scrape:
// landlord_rollout_info (1 per active rollout, with its state and versions),
// landlord_rollout_wave (the index of the wave in progress) and
// landlord_rollout_members (its tenants by member state).
func (m *Metrics) WatchRollouts(store fleet.Store, log *slog.Logger) {
	labels := []string{"rollout", "plan"}
	m.Registry.MustRegister(&rolloutCollector{store: store, log: log,
		info:    prometheus.NewDesc("landlord_rollout_info", "Active rollouts (1 each), with their state and versions.", append(labels, "state", "from_version", "to_version"), nil),
		wave:    prometheus.NewDesc("landlord_rollout_wave", "The index (from 0) of an active rollout's wave in progress.", labels, nil),
		members: prometheus.NewDesc("landlord_rollout_members", "An active rollout's tenants, by member state.", append(labels, "state"), nil),
	})
}

type rolloutCollector struct {
	store               fleet.Store
	log                 *slog.Logger
	info, wave, members *prometheus.Desc
}

func (c *rolloutCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.info
	ch <- c.wave
	ch <- c.members
}

func (c *rolloutCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fail := func(err error) {
		if c.log != nil {
			c.log.Warn("cannot read the active rollouts for metrics", slog.Any("error", err))
		}
	}
	active, err := c.store.ListRollouts(ctx, fleet.RolloutListOptions{Active: true})
	if err != nil {
		fail(err)
		return
	}
	for _, r := range active {
		members, err := fleet.SummarizeMembers(ctx, c.store, r.ID)
		if err != nil {
			fail(err)
			return
		}
		from := "any"
		if r.Spec.From != 0 {
			from = strconv.FormatInt(r.Spec.From, 10)
		}
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, r.ID, r.Spec.Plan, string(r.State), from, strconv.FormatInt(r.Spec.To, 10))
		ch <- prometheus.MustNewConstMetric(c.wave, prometheus.GaugeValue, float64(r.Wave), r.ID, r.Spec.Plan)
		counts := members.Total()
		for _, st := range memberStates {
			ch <- prometheus.MustNewConstMetric(c.members, prometheus.GaugeValue, float64(counts[st]), r.ID, r.Spec.Plan, string(st))
		}
	}
}
