package fleet

import (
	"fmt"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The rules of Store.CreateRollout and Store.AddMembers, for every store
// to call, so that a rollout starts the same whichever store keeps it. A
// store keeps only what is its own: the transaction, the uniqueness of a
// plan's active rollout, the encoding.

// NewRollout returns the rollout a store creates from the fields
// CreateRollout reads of in (ID, Spec, Waves, CreatedBy), the members to
// add with it (NewMembers) and its "started" event: running at its first
// wave, at version 1, created and updated now. A new id is drawn unless
// in.ID holds one; one that is not a UUID, as PostgreSQL's uuid columns
// require, is ErrInvalid. The errors name the field at fault after the
// caller's prefix ("create rollout: ").
func NewRollout(in *Rollout, members []Member, now time.Time) (*Rollout, []Member, Event, error) {
	now = tenant.Timestamp(now)
	r := &Rollout{ID: in.ID, Spec: in.Spec, Waves: slices.Clone(in.Waves), State: StateRunning, Version: 1,
		CreatedBy: in.CreatedBy, CreatedAt: now, UpdatedAt: now}
	if r.ID == "" {
		r.ID = tenant.NewID()
	}
	if !tenant.IsID(r.ID) {
		return nil, nil, Event{}, fmt.Errorf("%w: rollout id %q is not a UUID", ErrInvalid, r.ID)
	}
	pending, err := NewMembers(members)
	if err != nil {
		return nil, nil, Event{}, err
	}
	ev := Event{RolloutID: r.ID, Time: now, Type: EventStarted, Actor: r.CreatedBy}
	return r, pending, ev, nil
}

// NewMembers returns the members a store adds to a rollout (CreateRollout,
// AddMembers): each pending, not changed yet, whatever state, generation
// or times the caller gave. A tenant id that is not an id (tenant.IsID),
// as PostgreSQL's uuid columns require, is ErrInvalid.
func NewMembers(members []Member) ([]Member, error) {
	out := make([]Member, len(members))
	for i, m := range members {
		if !tenant.IsID(m.TenantID) {
			return nil, fmt.Errorf("%w: member %q is not a tenant id", ErrInvalid, m.TenantID)
		}
		out[i] = Member{TenantID: m.TenantID, TenantName: m.TenantName, Wave: m.Wave, State: MemberPending, From: m.From}
	}
	return out, nil
}

// CheckTarget is the rule of CreateRollout that the rollout's plan exists
// and the plan it moves tenants to (Spec.Target: the same one, but for a
// fleet move) has the version, and, for a fleet move, is for
// Spec.ToProvider, as the store found them in the transaction that creates
// it: nil, or an error wrapping ErrNotFound naming what is missing.
func CheckTarget(spec Spec, planExists bool, target FoundPlan) error {
	to := spec.Target()
	switch {
	case !planExists:
		return fmt.Errorf("plan %q: %w", spec.Plan, ErrNotFound)
	case !target.Exists:
		return fmt.Errorf("plan %q: %w", to.Name, ErrNotFound)
	case spec.Moves() && target.Provider != spec.ToProvider:
		return fmt.Errorf("plan %q for provider %s: %w: it is for %s", to.Name, spec.ToProvider, ErrNotFound, target.Provider)
	case !target.HasVersion:
		return fmt.Errorf("plan %q version %d: %w", to.Name, to.Version, ErrNotFound)
	}
	return nil
}

// CheckAddMembers is the rule of AddMembers that only a rollout that has
// not finished takes members: nil for an active state, else an error
// wrapping ErrState that says the state after the caller's prefix
// ("add members to rollout …: ").
func CheckAddMembers(state State) error {
	if !state.Active() {
		return fmt.Errorf("%w: it is %s", ErrState, state)
	}
	return nil
}
