package rollout

import (
	"context"
	"errors"
	"fmt"
	"github.com/jaxxstorm/landlord/internal/leader"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// LeaseName is the lease whose holder drives the rollouts.
const LeaseName = "rollouts"

// Options configure a Driver. Zero values take the documented defaults.
type Options struct {
	// Interval is how often every active rollout is stepped. Default 2s.
	Interval time.Duration
	// Changes, when set, wakes the driver as soon as a tenant changes
	// (one becoming ready at its new generation, say) while rollouts are
	// active, so that a wave moves on without waiting for the next
	// Interval. The store's ChangeFeed, typically.
	Changes tenant.ChangeFeed
	// Leases, when set, makes the driver step rollouts only while it holds
	// the lease LeaseName, so that one replica among those sharing the
	// database drives them. Nil means it drives them alone.
	Leases tenant.LeaseStore
	// LeaseTTL is how long the lease lasts without renewal. Default 15s.
	LeaseTTL time.Duration
	// Identity names this process in the lease and is the actor of the
	// changes it makes. Default "rollouts@<hostname>:<pid>".
	Identity string
	// Logger receives the driver's lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		o.Identity = fmt.Sprintf("rollouts@%s:%d", host, os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Driver steps the active rollouts. Create one with New.
type Driver struct {
	tenants tenant.Store
	fleet   fleet.Store
	opts    Options
	log     *slog.Logger
	lease   *leader.Lease
	// active is how many rollouts the last tick stepped: changes of
	// tenants wake the driver only while some are.
	active int
}

// maxStreak bounds how many steps the driver takes at once, one after the
// other, before it waits for a tick or a tenant's change.
const maxStreak = 8

// coalesce is how long the driver lets tenants' changes gather after the
// first wakes it, so that a burst of them (a wave's tenants turning ready
// together) costs one step: a step reads every follower of the plan (92 ms
// for 5,000 on SQLite, BenchmarkTick), so a wave moves on within a quarter
// of a second of its last tenant turning ready, at most about a third of a core while tenants keep changing.
const coalesce = 250 * time.Millisecond

// New returns a driver of the rollouts in plans over the tenants in
// tenants (the same database).
func New(tenants tenant.Store, plans fleet.Store, opts Options) *Driver {
	opts = opts.withDefaults()
	log := opts.Logger.With(slog.String("component", "rollouts"))
	return &Driver{tenants: tenants, fleet: plans, opts: opts, log: log,
		lease: &leader.Lease{Leases: opts.Leases, Name: LeaseName, Identity: opts.Identity, TTL: opts.LeaseTTL, Log: log,
			Doing: "driving the rollouts", Others: "another replica drives them"}}
}

// Run steps the rollouts every Interval, at once again after a step that
// changed a rollout, and soon after tenants change (Options.Changes) while
// rollouts are active, until ctx ends; then it gives the lease up. It
// returns nothing: a step that fails is logged and tried again at the next
// tick, so only ctx ends it.
func (d *Driver) Run(ctx context.Context) {
	tick := time.NewTicker(d.opts.Interval)
	defer tick.Stop()
	defer d.lease.Release()
	changes := d.subscribe(ctx)
	streak := 0 // steps taken at once, one after the other
	for {
		again := false
		if d.lease.Lead(ctx) {
			more, err := d.tick(ctx)
			if err != nil && ctx.Err() == nil {
				d.log.Warn("rollout step failed; trying again at the next tick", slog.Any("error", err))
			}
			// A step that changed a rollout may let the next decide more
			// at once; after an error, wait for the tick. A rollout has
			// few changes of its own in a row (a wave done, the next
			// started): a longer streak is a write that keeps losing, and
			// waits too rather than spin.
			again = more && err == nil && streak < maxStreak
		}
		if again && ctx.Err() == nil {
			streak++
			continue
		}
		streak = 0
		if !d.wait(ctx, tick.C, changes) {
			return
		}
	}
}

// subscribe returns the channel of tenants' changes, or nil (never ready)
// without a feed or when the feed cannot be read: the ticks alone then
// drive the rollouts.
func (d *Driver) subscribe(ctx context.Context) <-chan string {
	if d.opts.Changes == nil {
		return nil
	}
	ch, err := d.opts.Changes.Changes(ctx)
	if err != nil {
		d.log.Warn("cannot follow tenants' changes; stepping rollouts every interval only",
			slog.Duration("interval", d.opts.Interval), slog.Any("error", err))
		return nil
	}
	return ch
}

// wait waits for the next tick, or for a tenant's change while rollouts
// are active, and reports whether to go on.
func (d *Driver) wait(ctx context.Context, tick <-chan time.Time, changes <-chan string) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case _, ok := <-changes:
			if !ok {
				changes = nil // the feed ended (the store closes): ticks go on
				continue
			}
			if d.active == 0 {
				continue
			}
			t := time.NewTimer(coalesce)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
			drain(changes)
			return true
		}
	}
}

// drain empties ch of what has gathered: one step reads every tenant anew.
func drain(ch <-chan string) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// Tick steps every active rollout once, and every finished one with
// members still changing.
func (d *Driver) Tick(ctx context.Context) error {
	_, err := d.tick(ctx)
	return err
}

// tick steps every active rollout once, and every finished one with
// members still changing (an abort without rollback leaves them so: their
// members settle as their tenants turn out), and reports whether a step
// may decide more at once (see step).
func (d *Driver) tick(ctx context.Context) (bool, error) {
	active, err := d.fleet.ListRollouts(ctx, fleet.RolloutListOptions{Unsettled: true})
	if err != nil {
		return false, fmt.Errorf("rollouts: list active rollouts: %w", err)
	}
	d.active = len(active)
	var (
		errs []error
		more bool
	)
	for _, r := range active {
		again, err := d.step(ctx, r)
		more = more || again
		if err != nil {
			errs = append(errs, fmt.Errorf("rollout %s: %w", r.ID, err))
		}
	}
	return more, errors.Join(errs...)
}

// step decides and applies one step of r, and reports whether its next
// step may decide more at once: when the rollout itself changed (a wave
// done starts the next in the following step) or a write found that
// someone else had written first. Members settled and moved in one step
// need no other: Step moves into the places its settles free, and the
// tenants it moves announce their own changes.
func (d *Driver) step(ctx context.Context, r *fleet.Rollout) (bool, error) {
	members, err := d.fleet.Members(ctx, r.ID)
	if err != nil {
		return false, err
	}
	following, err := d.following(ctx, r.Spec.Plan)
	if err != nil {
		return false, err
	}
	known := following
	if r.Spec.Moves() {
		// The tenants a fleet move switched follow its target plan: read
		// them in one list too, not one by one.
		moved, err := d.following(ctx, r.Spec.ToPlan)
		if err != nil {
			return false, err
		}
		known = append(slices.Clip(following), moved...)
	}
	tenants, err := d.tenantsOf(ctx, members, known)
	if err != nil {
		return false, err
	}
	dec := fleet.Step(r, members, tenants, d.opts.Now(), d.opts.Identity)
	log := d.log.With(slog.String("rollout", r.ID), slog.String("plan", r.Spec.Plan))
	complete := true // every settle and move was written
	for _, s := range dec.Settles {
		err := d.fleet.UpdateMember(ctx, r.ID, s.Member, s.Expect, s.Event)
		if errors.Is(err, fleet.ErrConflict) {
			complete = false
			continue
		}
		if err != nil {
			return true, err
		}
		log.Info("rollout member "+string(s.Member.State), slog.String("tenant_id", s.Member.TenantID), slog.String("tenant", s.Member.TenantName), slog.String("message", s.Member.Message))
	}
	for _, mv := range dec.Moves {
		m, err := d.fleet.MoveTenant(ctx, r.ID, mv)
		if errors.Is(err, fleet.ErrConflict) || errors.Is(err, fleet.ErrState) || errors.Is(err, tenant.ErrConflict) {
			complete = false // moved by another, paused meanwhile, or the tenant changed: look again
			continue
		}
		if err != nil {
			return true, err
		}
		log.Info("rollout member "+string(m.State), slog.String("tenant_id", m.TenantID), slog.String("tenant", m.TenantName),
			slog.Int64("to_version", mv.To), slog.Int64("generation", m.Generation), slog.String("message", m.Message))
	}
	if !complete || dec.Rollout == nil {
		return !complete, nil
	}
	next := dec.Rollout
	if next.State == fleet.StateCompleted {
		// Tenants that began to follow the plan during the rollout join
		// its last wave rather than be left behind.
		if late := newcomers(r, members, following); len(late) > 0 {
			log.Info("tenants joined the plan during the rollout; adding them to its last wave", slog.Int("tenants", len(late)))
			return true, d.fleet.AddMembers(ctx, r.ID, late)
		}
	}
	if _, err := d.fleet.UpdateRollout(ctx, next, dec.Events...); err != nil && !errors.Is(err, fleet.ErrConflict) {
		return true, err
	}
	if next.State != r.State || next.Wave != r.Wave {
		log.Info("rollout "+string(next.State), slog.Int("wave", next.Wave), slog.String("message", next.Message))
	}
	return true, nil
}

// following lists the tenants that follow plan, in id order.
func (d *Driver) following(ctx context.Context, plan string) ([]*tenant.Tenant, error) {
	out, err := tenant.ListAll(ctx, d.tenants, tenant.ListOptions{Plan: plan})
	if err != nil {
		return nil, fmt.Errorf("list the tenants of plan %s: %w", plan, err)
	}
	return out, nil
}

// tenantsOf maps the members' tenants by id: those that follow the plan,
// and those read one by one that no longer do (a member whose tenant is
// missing from the map is deleted or forgotten).
func (d *Driver) tenantsOf(ctx context.Context, members []fleet.Member, following []*tenant.Tenant) (map[string]*tenant.Tenant, error) {
	out := make(map[string]*tenant.Tenant, len(following))
	for _, t := range following {
		out[t.ID] = t
	}
	for _, m := range members {
		if _, ok := out[m.TenantID]; ok || m.State == fleet.MemberSkipped || m.State == fleet.MemberRolledBack {
			continue
		}
		t, err := d.tenants.Get(ctx, m.TenantID, tenant.GetOptions{IncludeDeleted: true})
		if errors.Is(err, tenant.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read tenant %s: %w", m.TenantID, err)
		}
		out[t.ID] = t
	}
	return out, nil
}

// newcomers are the tenants of the plan the rollout would take now that
// are not its members, as members of its last wave.
func newcomers(r *fleet.Rollout, members []fleet.Member, following []*tenant.Tenant) []fleet.Member {
	known := make(map[string]bool, len(members))
	for _, m := range members {
		known[m.TenantID] = true
	}
	var out []fleet.Member
	last := len(r.Waves) - 1
	for _, t := range fleet.Select(r.Spec, following).Candidates {
		if !known[t.ID] {
			out = append(out, fleet.Member{TenantID: t.ID, TenantName: t.Name, Wave: last, State: fleet.MemberPending, From: t.Plan.Version})
		}
	}
	return out
}
