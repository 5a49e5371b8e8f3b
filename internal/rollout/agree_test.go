package rollout_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// hooked is the store as the driver sees it, with a hook run once before
// one of its calls: it puts someone's action (an abort) at an exact point
// of a step, so that each interleaving is tested, not left to timing.
type hooked struct {
	store
	calls map[string]int
	// before runs before the call named (Members, MoveTenant or
	// UpdateMember) whose number (from 1) is at.
	before struct {
		call string
		at   int
		do   func()
	}
}

func (h *hooked) hook(call string) {
	h.calls[call]++
	if h.before.call == call && h.before.at == h.calls[call] && h.before.do != nil {
		do := h.before.do
		h.before.do = nil
		do()
	}
}

func (h *hooked) Members(ctx context.Context, id string) ([]fleet.Member, error) {
	h.hook("Members")
	return h.store.Members(ctx, id)
}

func (h *hooked) MoveTenant(ctx context.Context, id string, mv fleet.Move) (fleet.Member, error) {
	h.hook("MoveTenant")
	return h.store.MoveTenant(ctx, id, mv)
}

func (h *hooked) UpdateMember(ctx context.Context, id string, m fleet.Member, expect fleet.MemberState, events ...fleet.Event) error {
	h.hook("UpdateMember")
	return h.store.UpdateMember(ctx, id, m, expect, events...)
}

// ticker is a driver stepped by the test alone, one Tick at a time, over
// the hooked store.
func (e *env) ticker(t *testing.T) (*rollout.Driver, *hooked) {
	h := &hooked{store: e.s, calls: map[string]int{}}
	return rollout.New(e.s, h, rollout.Options{Identity: "driver-1", Now: e.clock.now}), h
}

func (e *env) tick(t *testing.T, d *rollout.Driver) {
	t.Helper()
	if err := d.Tick(ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
}

// abort aborts the rollout as the API does (without If-Match), without
// rollback unless asked.
func (e *env) abort(t *testing.T, id string, rollback bool) {
	t.Helper()
	r := e.rollout(t, id)
	next, ev, err := fleet.Abort(r, must(e.s.Members(ctx, id)), rollback, "alice", e.clock.now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.UpdateRollout(ctx, next, ev); err != nil {
		t.Fatalf("abort: %v", err)
	}
}

// settled reports whether no member of the rollout is changing.
func (e *env) settled(t *testing.T, id string) bool {
	return fleet.Count(must(e.s.Members(ctx, id)), -1)[fleet.MemberChanging] == 0
}

// TestAbortLeavesNoMemberChanging aborts a rollout without rollback at
// each point of the driver's steps: before one, between its read and its
// moves, between two moves, after its moves while the tenants converge,
// after they are ready but before the driver looked, and while it settles
// members. Whatever the point, once the tenants have converged every
// member agrees with its tenant: none stays changing (the driver stepped
// active rollouts only, so a member changing at the abort stayed so while
// its tenant was ready at the new generation), a done member's tenant is
// ready at the target, a pending member's tenant was never changed, and
// no tenant was changed twice.
func TestAbortLeavesNoMemberChanging(t *testing.T) {
	type point struct {
		name string
		// run steps the rollout, aborting it at its point.
		run func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func())
	}
	ready := func(t *testing.T, e *env, tenants []*tenant.Tenant) {
		for _, tn := range tenants {
			e.await(t, tn.Name+" ready at generation 2", func() bool {
				got := e.get(t, tn.ID)
				return got.Generation == 2 && got.ObservedGeneration == 2 && got.Status == tenant.StatusReady
			})
		}
	}
	var tenantsOf func() []*tenant.Tenant
	for _, p := range []point{
		{"before the first step", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			abort()
			e.tick(t, d)
		}},
		{"between the driver's read and its moves", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			h.before.call, h.before.at, h.before.do = "Members", 1, abort
			e.tick(t, d)
		}},
		{"between two of its moves", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			h.before.call, h.before.at, h.before.do = "MoveTenant", 2, abort
			e.tick(t, d)
		}},
		{"after its moves, while the tenants converge", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			e.tick(t, d)
			abort()
		}},
		{"after the tenants are ready, before the driver looked", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			e.tick(t, d)
			ready(t, e, tenantsOf())
			abort()
		}},
		{"while the driver settles its members", func(t *testing.T, e *env, d *rollout.Driver, h *hooked, abort func()) {
			e.tick(t, d)
			ready(t, e, tenantsOf())
			h.before.call, h.before.at, h.before.do = "UpdateMember", 1, abort
			e.tick(t, d)
		}},
	} {
		t.Run(p.name, func(t *testing.T) {
			stores(t, func(t *testing.T, s store, c *clock) {
				e := newEnv(t, s, c)
				e.plan(t, "app:1", "app:2")
				tenants := e.tenants(t, 3, nil)
				tenantsOf = func() []*tenant.Tenant { return tenants }
				r := e.start(t, fleet.Spec{Plan: "standard", To: 2})
				d, h := e.ticker(t)
				p.run(t, e, d, h, func() { e.abort(t, r.ID, false) })
				if got := e.rollout(t, r.ID).State; got != fleet.StateAborted {
					t.Fatalf("rollout %s, want aborted", got)
				}
				// The tenants changed converge; the driver, stepping now and
				// then, settles their members.
				e.await(t, "no member changing", func() bool {
					e.tick(t, d)
					return e.settled(t, r.ID)
				})
				for _, m := range must(s.Members(ctx, r.ID)) {
					got := e.get(t, m.TenantID)
					switch m.State {
					case fleet.MemberDone:
						if got.Plan.Version != 2 || got.Status != tenant.StatusReady || got.ObservedGeneration < m.Generation {
							t.Errorf("%s is done, but its tenant is %s at v%d, observed generation %d of %d",
								m.TenantName, got.Status, got.Plan.Version, got.ObservedGeneration, m.Generation)
						}
					case fleet.MemberPending:
						if got.Plan.Version != 1 || got.Generation != 1 {
							t.Errorf("%s is pending, but its tenant is at v%d, generation %d", m.TenantName, got.Plan.Version, got.Generation)
						}
					default:
						t.Errorf("%s is %s: %s", m.TenantName, m.State, m.Message)
					}
					if n := e.updates(t, m.TenantID); n > 1 {
						t.Errorf("%s was changed %d times", m.TenantName, n)
					}
				}
				if left, err := s.ListRollouts(ctx, fleet.RolloutListOptions{Unsettled: true}); err != nil || len(left) != 0 {
					t.Errorf("rollouts the driver still steps: %d (%v), want none", len(left), err)
				}
			})
		})
	}
}

// TestNewcomersCountInTheirWave creates tenants on the plan while its
// rollout runs: they join its last wave before it completes, and that
// wave's size says so (it said the size it started with, 1, beside 4
// done).
func TestNewcomersCountInTheirWave(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		e.tenants(t, 2, func(i int, tn *tenant.Tenant) {
			if i == 0 {
				tn.Labels = map[string]string{"ring": "canary"}
			}
		})
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, Waves: []fleet.Wave{{Name: "canary", Selector: map[string]string{"ring": "canary"}}}})
		d, _ := e.ticker(t)
		e.tick(t, d) // the canary changes
		for i := range 3 {
			tn := &tenant.Tenant{Name: fmt.Sprintf("late%d", i), Provider: mock.Name, ComputeConfig: []byte(`{}`),
				Plan: &tenant.PlanRef{Name: "standard", Version: 1}}
			if _, err := s.Create(ctx, tn, "test"); err != nil {
				t.Fatal(err)
			}
		}
		e.await(t, "the rollout to complete", func() bool {
			e.tick(t, d)
			return e.rollout(t, r.ID).State == fleet.StateCompleted
		})
		got := e.rollout(t, r.ID)
		members := must(s.Members(ctx, r.ID))
		if len(members) != 5 {
			t.Fatalf("%d members, want 5 (2, and 3 that joined)", len(members))
		}
		for i, w := range got.Waves {
			if c := fleet.Count(members, i); w.Size != c[fleet.MemberDone] || len(c) != 1 {
				t.Errorf("wave %s: size %d, members %v; want as many, all done", w.Name, w.Size, c)
			}
		}
		if rest := got.Waves[len(got.Waves)-1]; rest.Name != fleet.RestWave || rest.Size != 4 {
			t.Errorf("wave %s has size %d, want rest of 4 (t01 and the 3 that joined)", rest.Name, rest.Size)
		}
	})
}

// TestVersionMovesOnlyWithWaves steps a rollout whose first three waves
// take no tenant: they are passed in one write, and while its tenants
// change and converge the rollout's version (its ETag) stays, so that an
// If-Match read then is still good; it moves when a wave ends.
func TestVersionMovesOnlyWithWaves(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		tenants := e.tenants(t, 2, nil)
		none := map[string]string{"ring": "none"}
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, Waves: []fleet.Wave{
			{Name: "e1", Selector: none}, {Name: "e2", Selector: none}, {Name: "e3", Selector: none}}})
		d, _ := e.ticker(t)
		e.tick(t, d)
		first := e.rollout(t, r.ID)
		if first.Wave != 3 || first.Version != r.Version+1 {
			t.Fatalf("after the first step: wave %d at version %d; want wave 3 (rest) at version %d", first.Wave, first.Version, r.Version+1)
		}
		e.tick(t, d) // moves both tenants
		for _, tn := range tenants {
			e.await(t, tn.Name+" ready at generation 2", func() bool {
				got := e.get(t, tn.ID)
				return got.ObservedGeneration == 2 && got.Status == tenant.StatusReady
			})
			if v := e.rollout(t, r.ID).Version; v != first.Version {
				t.Fatalf("version %d while %s converged, want %d: a step that changed no wave changed the rollout", v, tn.Name, first.Version)
			}
		}
		e.await(t, "the rollout to complete", func() bool {
			e.tick(t, d)
			return e.rollout(t, r.ID).State == fleet.StateCompleted
		})
		if v := e.rollout(t, r.ID).Version; v != first.Version+1 {
			t.Errorf("completed at version %d, want %d: one write for the three empty waves, one for the completion", v, first.Version+1)
		}
	})
}
