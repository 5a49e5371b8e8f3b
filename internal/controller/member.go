package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Bounds and default of the leases' timing.
const (
	DefaultLeaseTTL = 15 * time.Second
	MinLeaseTTL     = time.Second
	MaxLeaseTTL     = 5 * time.Minute
	MinLeaseRenew   = 100 * time.Millisecond
)

// CheckLease reports lease timings outside their bounds: a TTL of
// MinLeaseTTL to MaxLeaseTTL, renewed at least every MinLeaseRenew and at
// most every TTL·2/5.
func CheckLease(ttl, renewEvery time.Duration) error {
	switch {
	case ttl < MinLeaseTTL || ttl > MaxLeaseTTL:
		return fmt.Errorf("controller: the lease TTL %v is not between %v and %v", ttl, MinLeaseTTL, MaxLeaseTTL)
	case renewEvery < MinLeaseRenew || renewEvery > ttl*2/5:
		return fmt.Errorf("controller: renewing the leases every %v does not fit a TTL of %v: renew every %v to %v (two renewals before a replica that cannot renew steps down at 4/5 of the TTL)",
			renewEvery, ttl, MinLeaseRenew, ttl*2/5)
	}
	return nil
}

// member takes part in the controller's work among the replicas sharing
// the leases: it holds a member lease (tenant.MemberLease), works out from
// the live members which partitions are its own (Assign), acquires those
// that are free or expired, hands over those that are no longer its own,
// and renews all its leases in one call every RenewEvery. It alone changes
// the leases and the run's partitions, from one goroutine, except that a
// handover's drain runs on its own and reports back.
type member struct {
	c      *Controller
	r      *run
	leases tenant.LeaseStore
	id     string
	log    *slog.Logger

	self      *tenant.Lease        // the member lease; nil when not a member
	held      map[int]tenant.Lease // partition leases held
	releasing map[int]int64        // partitions being handed over, by epoch
	// leaving is set once the controller is stopping: the member lease is
	// given up and every partition handed over; the member only renews the
	// leases still held until their handovers are done.
	leaving bool
	renewed time.Time     // when the last renewal of every lease was sent
	handed  chan handover // handovers done
	// watchdog stops every partition's work at renewed + TTL·4/5, even
	// while the member is busy or blocked: by then its leases may expire
	// and be taken. expired tells the member it fired.
	watchdog  *time.Timer
	expired   atomic.Bool
	handovers sync.WaitGroup
	// departing is when the member began leaving and how many partitions
	// it held then, for the one line that says they are all released.
	departing struct {
		at   time.Time
		held int
	}

	view atomic.Pointer[leaseView] // what the last look at the leases saw
}

type handover struct {
	p     int
	epoch int64
}

// leaseView is what a member saw of the leases, for readiness and metrics.
type leaseView struct {
	at       time.Time // when, by this process's clock
	member   bool      // whether this replica held its member lease
	members  int       // live members
	held     int       // partition leases this replica holds
	orphaned []time.Time
}

func newMember(c *Controller, r *run) *member {
	m := &member{
		c: c, r: r, leases: c.opts.Leases, id: c.opts.Identity,
		log:       c.log.With(slog.String("identity", c.opts.Identity)),
		held:      map[int]tenant.Lease{},
		releasing: map[int]int64{},
		handed:    make(chan handover, tenant.Partitions),
	}
	m.watchdog = time.AfterFunc(time.Hour, m.expire)
	m.watchdog.Stop()
	return m
}

// confirmed records that every lease held was renewed or acquired by a
// call sent at sent, and arms the watchdog accordingly.
func (m *member) confirmed(sent time.Time) {
	m.renewed = sent
	m.watchdog.Reset(time.Until(sent.Add(m.c.opts.LeaseTTL * 4 / 5)))
}

// expire stops the work of every partition: the leases have not been
// renewed for TTL·4/5.
func (m *member) expire() {
	stopped := 0
	for p := range tenant.Partitions {
		if m.r.lose(p, nil, errPartitionLost) {
			stopped++
		}
	}
	m.expired.Store(true)
	m.log.Warn("leases not renewed in time; stepped down from every partition before the leases can expire",
		slog.Int("partitions", stopped), slog.Duration("ttl", m.c.opts.LeaseTTL))
}

// run takes part until stop is closed, then leaves (see depart): it gives
// its member lease up and hands every partition over, each as soon as its
// own in-flight reconciles are done, renewing the leases still held
// meanwhile, and returns once all are released. When ctx ends first, it
// gives every lease up at once: the run's workers must be done by then.
//
// Besides every renewal interval, it looks again as soon as a lease it
// waits for expires (see tick), so that the partitions of a replica that
// died are taken over when their leases expire, not up to a renewal
// interval later.
func (m *member) run(ctx context.Context, stop <-chan struct{}) {
	wake := time.NewTimer(m.tick(ctx))
	defer wake.Stop()
	ticker := time.NewTicker(m.c.opts.LeaseRenew)
	defer ticker.Stop()
	look := func() {
		wake.Reset(m.tick(ctx))
		ticker.Reset(m.c.opts.LeaseRenew)
	}
	for {
		if m.leaving && len(m.held) == 0 && len(m.releasing) == 0 {
			m.watchdog.Stop()
			m.log.Info("partitions released", slog.String("why", "stopping: every partition was handed over"),
				slog.Int("count", m.departing.held), slog.Duration("drained_in", time.Since(m.departing.at).Round(time.Millisecond)))
			return
		}
		select {
		case <-ctx.Done():
			m.leave()
			return
		case <-stop:
			stop = nil
			m.depart()
		case h := <-m.handed:
			m.handedOver(h)
		case <-wake.C:
			look()
		case <-ticker.C:
			look()
		}
	}
}

// depart starts leaving: the member lease is given up first, so that the
// others stop assigning partitions here, then every partition held is
// handed over, its in-flight reconciles allowed ShutdownTimeout.
func (m *member) depart() {
	m.leaving = true
	m.view.Store(nil)
	if m.self != nil {
		m.release(*m.self)
		m.self = nil
	}
	m.drainHanded()
	// One line at INFO when every partition is released (see run); each
	// partition's handover is at DEBUG.
	m.departing.at, m.departing.held = time.Now(), len(m.held)
	m.log.Debug("left the members; handing over every partition", slog.Int("held", len(m.held)))
	for p := range tenant.Partitions {
		if _, ok := m.held[p]; !ok {
			continue
		}
		if _, ok := m.releasing[p]; ok {
			continue // already being handed over
		}
		m.handOver(p, "", m.c.opts.ShutdownTimeout)
	}
}

// tick renews, looks at the members and partitions, and acts on what it
// sees. It returns how long until the first lease it waits for expires:
// another member's, whose expiry changes the assignment, or that of a
// partition assigned here that another still holds. That is longer than a
// renewal interval while every other replica renews its leases.
func (m *member) tick(ctx context.Context) time.Duration {
	never := time.Duration(math.MaxInt64)
	m.drainHanded()
	if m.expired.Swap(false) {
		m.stepDown()
	}
	if !m.renew(ctx) || m.leaving {
		return never
	}
	if m.self == nil {
		m.join(ctx)
	}
	lctx, cancel := context.WithTimeout(ctx, m.c.opts.LeaseRenew)
	defer cancel()
	// One listing of every lease holds both the members and the partitions.
	leases, now, err := m.leases.ListLeases(lctx, "")
	if err != nil {
		m.log.Warn("cannot list the leases", slog.Any("error", err))
		return never
	}
	looked := time.Now()
	// Expiry is judged by the database's clock: the wait is the time the
	// lease had left when it was listed, counted on this process's clock
	// from the listing's answer (a little late, never early).
	wait := never
	expiresIn := func(l *tenant.Lease) {
		wait = min(wait, max(time.Until(looked.Add(l.ExpiresAt.Sub(now))), minWake))
	}
	var live []string
	for i, l := range leases {
		if name, ok := strings.CutPrefix(l.Name, tenant.MemberLeasePrefix); ok && l.ExpiresAt.After(now) {
			live = append(live, name)
			if name != m.id {
				expiresIn(&leases[i])
			}
		}
	}
	if m.self != nil && !slices.Contains(live, m.id) {
		live = append(live, m.id) // renewed a moment ago
	}
	holders := tenant.PartitionHolders(leases, now)
	m.see(live, holders)
	if m.self == nil {
		return never // not a member: nothing is assigned to it
	}
	target := Assign(live)
	m.rebalance(ctx, target, holders)
	for p, h := range holders {
		if h != nil && h.Holder != m.id && target[p] == m.id {
			expiresIn(h)
		}
	}
	return wait
}

// minWake is the least a member waits for a lease to expire, so that a
// lease seen a moment before its expiry is not looked at again and again.
const minWake = 10 * time.Millisecond

// renew renews every lease held, in one call. When that fails for longer
// than TTL·4/5 it steps down from all of them, before any can expire and
// be taken over. It reports whether the leases could be renewed (or none
// was held).
func (m *member) renew(ctx context.Context) bool {
	all := m.all()
	if len(all) == 0 {
		return true
	}
	ttl := m.c.opts.LeaseTTL
	deadline := m.renewed.Add(ttl * 4 / 5)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	sent := time.Now()
	lost, err := m.leases.RenewLeases(rctx, m.id, all, ttl)
	switch {
	case err != nil && !time.Now().Before(deadline):
		m.log.Warn("leases not renewed in time", slog.Any("error", err))
		m.expire()
		m.expired.Store(false)
		m.stepDown()
		return false
	case err != nil:
		m.log.Warn("lease renewal failed; retrying", slog.Any("error", err))
		return false
	case m.expired.Load():
		// Renewed, but too late: the watchdog stopped the work meanwhile.
		// The next tick starts again from nothing.
		return false
	}
	m.confirmed(sent)
	for _, l := range lost {
		if l.Name == tenant.MemberLease(m.id) {
			m.log.Warn("member lease lost; joining again", slog.Int64("epoch", l.Epoch))
			m.self = nil
			continue
		}
		p, ok := tenant.ParsePartitionLease(l.Name)
		if !ok {
			continue
		}
		m.log.Warn("partition lease lost; its operations are cancelled", slog.Int("partition", p), slog.Int64("epoch", l.Epoch))
		delete(m.held, p)
		m.r.lose(p, nil, errPartitionLost)
	}
	return true
}

// all lists the leases held.
func (m *member) all() []tenant.Lease {
	var out []tenant.Lease
	if m.self != nil {
		out = append(out, *m.self)
	}
	for p := range tenant.Partitions {
		if l, ok := m.held[p]; ok {
			out = append(out, l)
		}
	}
	return out
}

// stepDown forgets every lease, as if all were lost: they may have
// expired by the time the database answers again. Those that have not are
// acquired again, at the same epoch, as the member rejoins.
func (m *member) stepDown() {
	for p := range m.held {
		m.r.lose(p, nil, errPartitionLost)
	}
	clear(m.held)
	m.self = nil
	m.watchdog.Stop()
}

// join acquires the member lease.
func (m *member) join(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, m.c.opts.LeaseRenew)
	defer cancel()
	sent := time.Now()
	l, err := m.leases.AcquireLease(actx, tenant.MemberLease(m.id), m.id, m.c.opts.LeaseTTL)
	if err != nil {
		m.log.Warn("cannot join the members", slog.Any("error", err))
		return
	}
	if len(m.held) == 0 {
		m.confirmed(sent)
	}
	m.self = &l
	m.log.Info("joined the members", slog.Int64("epoch", l.Epoch))
}

// rebalance acquires the partitions assigned to this member that are free
// or expired, hands over those it holds that are assigned to another, and
// releases those assigned to another that the database says it holds
// though it does not know it.
//
// Acquisitions stop for this tick once it has taken a renewal interval, so
// that the next renewal is not held up.
func (m *member) rebalance(ctx context.Context, target []string, holders []*tenant.Lease) {
	var gained, handed []string
	start := time.Now()
	for p := range tenant.Partitions {
		_, holds := m.held[p]
		_, releasing := m.releasing[p]
		mine := target[p] == m.id
		switch {
		case holds && !mine && !releasing:
			m.handOver(p, target[p], min(m.c.opts.LeaseTTL, m.c.opts.ShutdownTimeout))
			handed = append(handed, fmt.Sprintf("%d@%d>%s", p, m.held[p].Epoch, target[p]))
		case !holds && !mine && !releasing && holders[p] != nil && holders[p].Holder == m.id:
			// Held here by the database's account but not by this member's
			// (an acquisition whose answer was lost, or a lease kept through
			// a step-down) and assigned to another: give it up now rather
			// than let the new owner wait for it to expire.
			m.release(*holders[p])
		case !holds && mine && !releasing:
			if h := holders[p]; h != nil && h.Holder != m.id {
				continue // its holder hands it over, or it expires
			}
			if time.Since(start) > m.c.opts.LeaseRenew {
				continue // at the next tick
			}
			actx, cancel := context.WithTimeout(ctx, m.c.opts.LeaseRenew)
			sent := time.Now()
			l, err := m.leases.AcquireLease(actx, tenant.PartitionLease(p), m.id, m.c.opts.LeaseTTL)
			cancel()
			switch {
			case errors.Is(err, tenant.ErrLeaseHeld):
				continue
			case err != nil:
				m.log.Warn("cannot acquire a partition lease", slog.Int("partition", p), slog.Any("error", err))
				continue
			}
			if time.Since(sent) > m.c.opts.LeaseTTL*2/5 {
				// Acquired so slowly that the lease may lapse before the
				// next renewal: give it back rather than work it.
				m.release(l)
				continue
			}
			m.held[p] = l
			m.r.gain(p, l.Epoch)
			gained = append(gained, fmt.Sprintf("%d@%d", p, l.Epoch))
		}
	}
	// One short line at INFO each; which partitions (partition@epoch, and
	// >replica for a handover) at DEBUG.
	if len(handed) > 0 {
		m.log.Info("handing partitions over to other replicas", slog.Int("count", len(handed)), slog.Int("held", len(m.held)))
		m.log.Debug("handing partitions over to other replicas", slog.String("partitions", strings.Join(handed, " ")))
	}
	if len(gained) > 0 {
		m.log.Info("partitions acquired", slog.Int("count", len(gained)), slog.Int("held", len(m.held)))
		m.log.Debug("partitions acquired", slog.String("partitions", strings.Join(gained, " ")))
	}
}

// leave gives every lease up once the run's work is done: the partitions
// first, so that they are taken over at once, then the membership.
func (m *member) leave() {
	defer m.watchdog.Stop()
	m.handovers.Wait()
	m.drainHanded()
	var epochs []string
	for p := range tenant.Partitions {
		l, ok := m.held[p]
		if !ok {
			continue
		}
		m.r.lose(p, nil, errPartitionHandover)
		m.release(l)
		epochs = append(epochs, fmt.Sprintf("%d@%d", p, l.Epoch))
	}
	clear(m.held)
	if m.self != nil {
		m.release(*m.self)
		m.self = nil
	}
	m.view.Store(nil)
	released := len(epochs)
	if m.leaving {
		// Those handed over since the member began leaving count too.
		released = m.departing.held
	}
	m.log.Info("partitions released", slog.Int("count", released))
	if len(epochs) > 0 {
		m.log.Debug("partitions released", slog.String("partitions", strings.Join(epochs, " ")))
	}
}

// see records what the leases looked like: which partitions have no live
// holder, and since when.
func (m *member) see(live []string, holders []*tenant.Lease) {
	now := time.Now()
	v := &leaseView{at: now, member: m.self != nil, members: len(live), held: len(m.held), orphaned: make([]time.Time, tenant.Partitions)}
	prev := m.view.Load()
	for p, h := range holders {
		if h != nil {
			continue
		}
		v.orphaned[p] = now
		if prev != nil && !prev.orphaned[p].IsZero() {
			v.orphaned[p] = prev.orphaned[p]
		}
	}
	m.view.Store(v)
}

// ready says why the controller's work is not being done, as far as this
// replica can tell: it is not a member, it cannot see the leases, or some
// partition has had no live holder for longer than the lease TTL (a holder
// that died is replaced within about a TTL, so longer means nobody can
// take it).
func (m *member) ready() error {
	v := m.view.Load()
	ttl := m.c.opts.LeaseTTL
	switch {
	case v == nil:
		return errors.New("this replica has not yet seen the leases")
	case time.Since(v.at) > ttl:
		return fmt.Errorf("this replica has not seen the leases for %s", time.Since(v.at).Round(time.Second))
	case !v.member:
		return errors.New("this replica is not a member: it does not hold its member lease")
	}
	for p, since := range v.orphaned {
		if !since.IsZero() && v.at.Sub(since) > ttl {
			return fmt.Errorf("partition %d has had no live holder for %s", p, v.at.Sub(since).Round(time.Second))
		}
	}
	return nil
}
