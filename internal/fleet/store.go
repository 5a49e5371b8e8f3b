package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// Store persists plans, their versions, rollouts, their members and their
// events, in the database that holds the tenants (a rollout's move of a
// tenant commits with the tenant's change). Implementations are safe for
// concurrent use and behave identically; internal/store/storetest checks
// them.
type Store interface {
	// CreatePlan stores a new plan with no version. Only Name, Provider and
	// Description are read from p. A name in use is ErrExists; a plan
	// breaking ValidatePlan wraps ErrInvalid.
	CreatePlan(ctx context.Context, p *Plan, actor string) (*Plan, error)
	// GetPlan returns the named plan, or ErrNotFound.
	GetPlan(ctx context.Context, name string) (*Plan, error)
	// ListPlans returns every plan, in name order.
	ListPlans(ctx context.Context) ([]*Plan, error)
	// DeletePlan deletes a plan and its versions. ErrInUse when a tenant
	// that is not deleted follows it or a rollout of it is active;
	// ErrNotFound when there is no such plan. Finished rollouts of it are
	// deleted with it. It serializes with the tenant writes that put a
	// tenant on the plan (tenant.Store's Create and UpdateDesired check the
	// plan in their transaction): a tenant committed first is seen, and
	// one committed after fails with tenant.ErrPlanNotFound.
	DeletePlan(ctx context.Context, name string) error

	// PublishVersion stores config as the plan's next version (Latest+1)
	// and returns it; the first version also becomes the plan's Current.
	// ErrNotFound when there is no such plan.
	PublishVersion(ctx context.Context, plan string, config json.RawMessage, message, actor string) (*Version, error)
	// GetVersion returns one version of a plan, or ErrNotFound.
	GetVersion(ctx context.Context, plan string, version int64) (*Version, error)
	// ListVersions returns a plan's versions, oldest first; ErrNotFound
	// when there is no such plan.
	ListVersions(ctx context.Context, plan string) ([]*Version, error)

	// CreateRollout stores a new rollout in state running at its first
	// wave, with its members (all pending) and a "started" event. ID (a
	// new one is drawn when empty), Spec, Waves, CreatedBy are read from r.
	// ErrConflict when the plan has an active rollout; ErrNotFound when the
	// plan or the target version does not exist.
	CreateRollout(ctx context.Context, r *Rollout, members []Member) (*Rollout, error)
	// GetRollout returns a rollout, or ErrNotFound.
	GetRollout(ctx context.Context, id string) (*Rollout, error)
	// ListRollouts returns rollouts, newest first.
	ListRollouts(ctx context.Context, opts RolloutListOptions) ([]*Rollout, error)
	// Members returns a rollout's members in wave order, then tenant id
	// order; ErrNotFound when there is no such rollout.
	Members(ctx context.Context, id string) ([]Member, error)
	// AddMembers adds members to an active rollout (pending); tenants that
	// are members already are left as they are. The waves' sizes become
	// their numbers of members (SizeWaves), and when one changes the
	// rollout's version is bumped, in the same transaction. ErrNotFound
	// when there is no such rollout; ErrState when it has finished.
	AddMembers(ctx context.Context, id string, members []Member) error
	// UpdateRollout writes r's State, Wave, BakeFrom, Rollback, Message
	// and FinishedAt, and events, when r.Version is the stored version
	// (else ErrConflict), and returns the rollout with its version bumped.
	// A rollout that becomes completed makes its target the plan's Current
	// version in the same transaction (a fleet move leaves it); it is refused (ErrConflict) while a
	// tenant that it would take (Select's candidates for its Spec: one
	// that follows the plan, unpinned, not being deleted, on another
	// version than the target and, with Spec.From, on that one) is not a
	// member, so that a driver that missed it adds it (AddMembers) and
	// completes after. The check serializes with the tenant writes that put
	// a tenant on the plan: one committed before the completion is seen.
	// One committed after is not, and keeps the version its caller chose:
	// a caller that read Current before the completion and writes it after
	// leaves the tenant on the old version (the store cannot tell that
	// version from one chosen on purpose).
	UpdateRollout(ctx context.Context, r *Rollout, events ...Event) (*Rollout, error)
	// UpdateMember writes a member's State, FinishedAt and Message, and
	// events, when the stored member is in state expect (else
	// ErrConflict).
	UpdateMember(ctx context.Context, id string, m Member, expect MemberState, events ...Event) error
	// MoveTenant applies mv to a member's tenant in one transaction:
	// ApplyMove decides, and the tenant's change, its events, the member
	// and the rollout events commit together or not at all. It returns the
	// member as stored. ErrConflict when the member is not in state
	// mv.Expect (another controller moved it). The plan the tenant is put
	// on needs no check here: CreateRollout checked it, and DeletePlan
	// refuses a plan while a rollout of it, or a fleet move onto it, is
	// active, which ApplyMove requires in this transaction.
	MoveTenant(ctx context.Context, id string, mv Move) (Member, error)
	// ListRolloutEvents returns a rollout's events, oldest first, after
	// seq (0: from the first), at most limit (0: all); ErrNotFound when
	// there is no such rollout. (Not ListEvents: the stores implement
	// tenant.Store too, whose ListEvents lists a tenant's events.)
	ListRolloutEvents(ctx context.Context, id string, after int64, limit int) ([]Event, error)
}

// IdempotencyStore is a Store that keeps, with a write, the response to
// the request that made it, for that request's reservation of an
// Idempotency-Key (tenant.IdempotencyStore reserves and releases keys). The
// write and the response commit in one transaction or not at all: a retry
// after a crash gets the response, or does the write, never both.
//
// Each method is its Store method that first checks the reservation res,
// then writes, then keeps the response respond makes of what it stored. It
// returns an error wrapping tenant.ErrReservationLost, having written
// nothing, when res is no longer pending with its token (taken over,
// released or completed); otherwise the Store method's errors and
// respond's. respond may be called more than once (a transaction retried).
type IdempotencyStore interface {
	// CreatePlanIdempotent is CreatePlan keeping the response to it.
	CreatePlanIdempotent(ctx context.Context, p *Plan, actor string, res tenant.IdempotentResponse,
		respond func(*Plan) (tenant.IdempotentResponse, error)) (*Plan, error)
	// PublishVersionIdempotent is PublishVersion keeping the response
	// to it.
	PublishVersionIdempotent(ctx context.Context, plan string, config json.RawMessage, message, actor string, res tenant.IdempotentResponse,
		respond func(*Version) (tenant.IdempotentResponse, error)) (*Version, error)
	// CreateRolloutIdempotent is CreateRollout keeping the response to
	// it.
	CreateRolloutIdempotent(ctx context.Context, r *Rollout, members []Member, res tenant.IdempotentResponse,
		respond func(*Rollout) (tenant.IdempotentResponse, error)) (*Rollout, error)
}

// RolloutListOptions filter ListRollouts. Empty fields do not filter.
type RolloutListOptions struct {
	Plan string
	// Active lists only active rollouts.
	Active bool
	// Unsettled lists only the rollouts the driver steps: the active ones,
	// and finished ones with a member still changing (an abort without
	// rollback leaves the tenants it changed converging; their members
	// settle as the tenants turn out).
	Unsettled bool
	// Limit caps the number returned; 0 is 100, or, with Active or
	// Unsettled, no limit: there is at most one active rollout per plan,
	// and the driver steps every one.
	Limit int
}

// Move is one change of a member's tenant to another version of the plan.
type Move struct {
	TenantID string
	// Expect is the member's state the move starts from: pending to move a
	// tenant forward, changing, done or failed to roll it back. Another is
	// ErrConflict.
	Expect MemberState
	// To is the plan version to set and State the member's state after
	// (changing or rolled_back).
	To    int64
	State MemberState
	Actor string
	// Message is the tenant event's message, and the rollout event's.
	Message string
}

// ApplyMove is the rule of a move, for stores to call in the transaction
// that reads cur (the tenant) and m (its member, of rollout r): it returns
// the tenant to write (nil when it is not to change) and its events, and
// the member and the rollout event to write. Tenants move forward only in
// a running rollout and back only in an aborting one (else ErrState). A
// tenant that is deleting or deleted, follows another plan or none, is
// pinned, or is on another version than the move expects (its member's
// From or the target going forward, the target going back: someone else
// chose it) is not changed, and the member is skipped saying why. A
// fleet move starts (or, going back, cancels) the tenant's move instead
// (moveChange); one the move refuses fails the member, saying why.
func ApplyMove(r *Rollout, cur *tenant.Tenant, m Member, mv Move, now time.Time) (*tenant.Tenant, []tenant.Event, Member, Event, error) {
	if m.State != mv.Expect {
		return nil, nil, m, Event{}, fmt.Errorf("%w: tenant %s is %s in rollout %s, not %s", ErrConflict, m.TenantID, m.State, r.ID, mv.Expect)
	}
	// A driver that read the rollout before it was paused or aborted must
	// not move a tenant after.
	allowed := StateRunning
	if mv.State == MemberRolledBack {
		allowed = StateAborting
	}
	if r.State != allowed {
		return nil, nil, m, Event{}, fmt.Errorf("%w: rollout %s is %s", ErrState, r.ID, r.State)
	}
	now = tenant.Timestamp(now)
	ev := Event{RolloutID: r.ID, Time: now, TenantID: m.TenantID, TenantName: m.TenantName, Wave: m.Wave, Actor: mv.Actor}
	settle := func(state MemberState, typ EventType, why string) (*tenant.Tenant, []tenant.Event, Member, Event, error) {
		m.State, m.FinishedAt, m.Message = state, &now, why
		ev.Type, ev.Message = typ, why
		return nil, nil, m, ev, nil
	}
	var (
		change tenant.DesiredChange
		skip   string
	)
	if r.Spec.Moves() {
		change, skip = moveChange(r, cur, mv)
	} else {
		change, skip = versionChange(r, cur, m, mv)
	}
	if skip != "" {
		return settle(MemberSkipped, EventSkipped, skip)
	}
	next, events, err := tenant.ApplyDesired(cur, change, now)
	switch {
	case r.Spec.Moves() && mv.State == MemberChanging && (errors.Is(err, tenant.ErrMoving) || errors.Is(err, tenant.ErrInvalid)):
		// The move refuses the tenant as it is (failed, being moved
		// already): that is this member's failure, not the rollout's.
		return settle(MemberFailed, EventFailed, "cannot be moved: "+err.Error())
	case err != nil:
		return nil, nil, m, Event{}, err
	}
	m.State, m.Generation, m.ChangedAt, m.FinishedAt, m.Message = mv.State, next.Generation, &now, nil, ""
	ev.Type, ev.Message = EventChanged, mv.Message
	if mv.State == MemberRolledBack {
		m.FinishedAt = &now
		ev.Type = EventRolledBack
	}
	if next == cur {
		next = nil // already at the version, or cancelled already: nothing to write
	}
	return next, events, m, ev, nil
}

// versionChange is the change of a rollout of versions to member m's
// tenant cur: its plan's version set to mv.To, the rest as it is; or why
// the member is skipped.
func versionChange(r *Rollout, cur *tenant.Tenant, m Member, mv Move) (tenant.DesiredChange, string) {
	switch {
	case cur.DeletionRequestedAt != nil || cur.Status == tenant.StatusDeleted:
		return tenant.DesiredChange{}, "the tenant is being deleted"
	case cur.Plan == nil || cur.Plan.Name != r.Spec.Plan:
		return tenant.DesiredChange{}, "the tenant no longer follows plan " + r.Spec.Plan
	case cur.Plan.Pinned:
		return tenant.DesiredChange{}, fmt.Sprintf("the tenant is pinned to %s", cur.Plan)
	case mv.State == MemberChanging && cur.Plan.Version != m.From && cur.Plan.Version != mv.To,
		mv.State == MemberRolledBack && cur.Plan.Version != r.Spec.To:
		// Someone chose its version since the rollout read it: theirs
		// stands.
		return tenant.DesiredChange{}, fmt.Sprintf("the tenant was moved to %s by someone else", cur.Plan)
	}
	plan := *cur.Plan
	plan.Version = mv.To
	change := tenant.DesiredChange{
		Version: cur.Version, ComputeConfig: cur.ComputeConfig, Labels: cur.Labels, Annotations: cur.Annotations,
		Plan: &plan, MaintenanceWindow: cur.MaintenanceWindow, Actor: mv.Actor, Message: mv.Message,
	}
	if len(cur.Placements) > 1 {
		change.ComputeConfig, change.Placements = nil, cur.Declared()
	}
	return change, ""
}

// moveChange is the change of a fleet move (Spec.ToPlan) to a member's
// tenant cur: forward, the start of the move of its placement to ToPlan's
// provider, following ToPlan at version To, with the tenant's own
// compute_config (less the provider it chose, which the target's plan
// chooses); back, the cancel of its move if it has not switched yet, its
// source serving still; or why the member is skipped.
func moveChange(r *Rollout, cur *tenant.Tenant, mv Move) (tenant.DesiredChange, string) {
	target := r.Spec.Target()
	var action *tenant.MoveAction
	switch {
	case cur.DeletionRequestedAt != nil || cur.Status == tenant.StatusDeleted:
		return tenant.DesiredChange{}, "the tenant is being deleted"
	case mv.State == MemberRolledBack:
		mover := movingTo(cur, target.Name)
		switch {
		case mover != nil:
			action = &tenant.MoveAction{Kind: tenant.MoveCancel, Placement: mover.Name}
		case cur.Plan != nil && cur.Plan.Name == target.Name:
			return tenant.DesiredChange{}, fmt.Sprintf("the tenant switched to plan %s already; it stays there", target.Name)
		default:
			return tenant.DesiredChange{}, "the tenant is not being moved to plan " + target.Name
		}
	case cur.Plan == nil || cur.Plan.Name != r.Spec.Plan:
		return tenant.DesiredChange{}, "the tenant no longer follows plan " + r.Spec.Plan
	case cur.Plan.Pinned:
		return tenant.DesiredChange{}, fmt.Sprintf("the tenant is pinned to %s", cur.Plan)
	default:
		action = &tenant.MoveAction{Kind: tenant.MoveStart, Provider: r.Spec.ToProvider, ComputeConfig: MovedConfig(cur.ComputeConfig), Plan: &target}
	}
	return tenant.DesiredChange{Version: cur.Version, Move: action, Actor: mv.Actor, Message: mv.Message}, ""
}

// movingTo returns t's placement being moved onto plan, not switched yet,
// or nil.
func movingTo(t *tenant.Tenant, plan string) *tenant.Placement {
	for i := range t.Placements {
		p := &t.Placements[i]
		if p.Move != nil && p.Move.SwitchedAt == nil && p.Move.Plan != nil && p.Move.Plan.Name == plan {
			return p
		}
	}
	return nil
}

// MovedConfig is the compute_config a fleet move gives a tenant's target:
// the tenant's own, without the provider it names (wire.SelectionKey), if
// any, since the target plan's provider is the target's.
func MovedConfig(config json.RawMessage) json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal(config, &top) != nil {
		return config
	}
	if _, ok := top[wire.SelectionKey]; !ok {
		return config
	}
	delete(top, wire.SelectionKey)
	out, err := json.Marshal(top)
	if err != nil {
		return config
	}
	return out
}
