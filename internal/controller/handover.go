package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// handOver gives partition p up to its new owner (to; empty when this
// member is leaving and the next owner is not known yet): its tenants are
// no longer taken, those in flight may finish for up to timeout (the lease
// is renewed meanwhile), then the lease is released so that the new owner
// takes it at once.
func (m *member) handOver(p int, to string, timeout time.Duration) {
	l := m.held[p]
	m.releasing[p] = l.Epoch
	m.log.Debug("handing a partition over", slog.Int("partition", p), slog.Int64("epoch", l.Epoch), slog.String("to", to))
	m.handovers.Go(func() {
		start := time.Now()
		if !m.r.drain(p, timeout) {
			m.log.Warn("a partition's in-flight work did not finish in time for its handover; it was cancelled",
				slog.Int("partition", p), slog.Duration("timeout", timeout))
		}
		m.release(l)
		m.log.Debug("partition released", slog.Int("partition", p), slog.Int64("epoch", l.Epoch), slog.String("to", to),
			slog.Duration("drained_in", time.Since(start).Round(time.Millisecond)))
		m.handed <- handover{p, l.Epoch}
	})
}

// handedOver forgets a partition whose handover is done.
func (m *member) handedOver(h handover) {
	if m.releasing[h.p] == h.epoch {
		delete(m.releasing, h.p)
	}
	if l, ok := m.held[h.p]; ok && l.Epoch == h.epoch {
		delete(m.held, h.p)
	}
}

// release gives a lease up; a lease not released expires.
func (m *member) release(l tenant.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.leases.ReleaseLease(ctx, l.Name, m.id, l.Epoch); err != nil {
		m.log.Warn("cannot release a lease; it expires instead", slog.String("lease", l.Name), slog.Any("error", err))
	}
}

// drainHanded forgets the partitions whose handovers are done.
func (m *member) drainHanded() {
	for {
		select {
		case h := <-m.handed:
			m.handedOver(h)
		default:
			return
		}
	}
}
