package tenant

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// A move takes a placement to another provider (or another place on the
// same one), make-before-break: the target workload is provisioned beside
// the source and awaited until it runs and its endpoints answer, then,
// once an operator approves when the move asked to hold, the placement
// switches to it (its endpoints with it) in one write, and only then is
// the source destroyed. Every step is recorded in the tenant's row, so
// that a landlord killed between any two of them finds the move where it
// was: the source alone, both, or the target alone, never neither. A move
// cancelled before the switch destroys the target and leaves the source
// as it was.

// EventMove records a step of a move: asked for, the target running, held
// for approval, approved, switched, done, cancelled, failed.
const EventMove EventType = "move"

// ErrPlacementNotFound is a move action for a placement the tenant does
// not have (or, for a tenant of several, that names none).
var ErrPlacementNotFound = errors.New("tenant: no such placement")

// ErrMoving is a change refused because a placement of the tenant is
// being moved: wait for the move, or cancel it.
var ErrMoving = errors.New("tenant: a placement is being moved")

// MoveStep is where a move is.
type MoveStep string

// The steps of a move.
const (
	// MoveProvisioning: the target is provisioned and awaited until it
	// runs and its endpoints answer; the source serves.
	MoveProvisioning MoveStep = "provisioning"
	// MoveAwaitingApproval: the target runs and answers; the move holds
	// for an operator's approval (of a data cut-over, say) before it
	// switches.
	MoveAwaitingApproval MoveStep = "awaiting_approval"
	// MoveDestroyingSource: the placement switched to the target, which
	// serves; the source is being destroyed.
	MoveDestroyingSource MoveStep = "destroying_source"
	// MoveCancelling: the move was cancelled before the switch; the
	// target is being destroyed, the source serves.
	MoveCancelling MoveStep = "cancelling"
)

// Move is a placement's move in progress.
type Move struct {
	// ID identifies the move; the target's workload id is drawn from it.
	ID   string   `json:"id"`
	Step MoveStep `json:"step"`
	// Hold makes the move wait for an approval (Approved) before it
	// switches.
	Hold     bool `json:"hold,omitempty"`
	Approved bool `json:"approved,omitempty"`
	// From and To are the source's and the target's providers.
	From string `json:"from"`
	To   string `json:"to"`
	// Other is the workload that does not serve: the target until the
	// switch, the source after it; with its own observed state.
	Other       Placement  `json:"other"`
	RequestedAt time.Time  `json:"requested_at"`
	Actor       string     `json:"actor,omitempty"`
	SwitchedAt  *time.Time `json:"switched_at,omitempty"`
	// Plan is the plan Other follows (nil: none): the one the target
	// follows until the switch, which makes it the tenant's; the one the
	// source followed after it.
	Plan *PlanRef `json:"plan,omitempty"`
}

// MoveAction is what a change does to a placement's move (DesiredChange's
// Move): start one, approve its switch, or cancel it.
type MoveAction struct {
	Kind MoveKind
	// Placement names the placement; "" for a tenant of one.
	Placement string
	// Provider and ComputeConfig are the target's, for a start; Hold
	// makes it wait for an approval before it switches.
	Provider      string
	ComputeConfig json.RawMessage
	Hold          bool
	// Plan, for a start, is the plan the target follows, on its provider
	// (its version resolved): the tenant follows it from the switch. A
	// tenant that follows a plan moves only to another plan, whose config
	// is for the target's provider; nil moves a tenant that follows none.
	Plan *PlanRef
}

// MoveKind is what a MoveAction does.
type MoveKind string

// The kinds of MoveAction.
const (
	MoveStart   MoveKind = "start"
	MoveApprove MoveKind = "approve"
	MoveCancel  MoveKind = "cancel"
)

// moveTarget returns the id and name of the target workload of move id of
// placement p of tenant tenantID: an id drawn from the move's, and p's
// workload's name, with a suffix of the move's when the target is on p's
// own provider, where the source's objects may have that name.
func moveTarget(tenantID string, p *Placement, moveID, provider string) (id, name string) {
	id, _ = derivedID("landlord move", tenantID, p.Name, moveID)
	name = p.WorkloadName
	if provider == p.Provider {
		suffix := "-m" + moveID[len(moveID)-4:]
		if len(name)+len(suffix) > 63 {
			name = name[:63-len(suffix)]
		}
		name += suffix
	}
	return id, name
}

// Moving reports whether a placement of t is being moved.
func (t *Tenant) Moving() bool {
	for _, p := range t.Placements {
		if p.Move != nil {
			return true
		}
	}
	return false
}

// applyMove returns cur with a move action applied, and its event. It
// bumps the version, not the generation: a move does not change what the
// placement runs, only where.
func applyMove(cur *Tenant, change DesiredChange, now time.Time) (*Tenant, []Event, error) {
	a := change.Move
	i, err := observed(cur, a.Placement)
	switch {
	case errors.Is(err, ErrConflict):
		return nil, nil, fmt.Errorf("%w: tenant %s has no placement %q; it has %s", ErrPlacementNotFound, cur.Name, a.Placement, strings.Join(cur.PlacementNames(), ", "))
	case err != nil:
		return nil, nil, fmt.Errorf("%w: tenant %s has placements %s; name the one whose move it is", ErrPlacementNotFound, cur.Name, strings.Join(cur.PlacementNames(), ", "))
	}
	placements := clonePlacements(cur.Placements)
	p := &placements[i]
	var msg string
	switch a.Kind {
	case MoveStart:
		switch {
		case p.Move != nil:
			return nil, nil, fmt.Errorf("%w: placement %s is already moving to %s (%s); wait for it, or cancel it", ErrMoving, p.Name, p.Move.To, p.Move.Step)
		case p.Removed:
			return nil, nil, fmt.Errorf("%w: /placement: placement %s is being removed", ErrInvalid, p.Name)
		case cur.Annotations[wire.PausedAnnotation] == "true":
			return nil, nil, fmt.Errorf("%w: tenant %s is paused (%s): resume it before moving it", ErrMoving, cur.Name, wire.PausedAnnotation)
		case cur.Plan != nil && a.Plan == nil:
			// A plan's config is for one provider: the tenant would run
			// the plan's layer on another.
			return nil, nil, fmt.Errorf("%w: tenant %s follows plan %s, whose config is for %s; name a plan for the target to follow (--plan), or leave the plan (PATCH {\"plan\": null}) to move it on its own",
				ErrMoving, cur.Name, cur.Plan, p.Provider)
		case a.Plan != nil && len(cur.Placements) > 1:
			return nil, nil, fmt.Errorf("%w: /plan: tenant %s has placements %s, and a tenant of several placements follows no plan",
				ErrInvalid, cur.Name, strings.Join(cur.PlacementNames(), ", "))
		case p.Status != StatusReady || p.ObservedGeneration != cur.Generation:
			return nil, nil, fmt.Errorf("%w: placement %s is %s, not ready at generation %d: a move starts from a running placement; wait for it (or fix it) first",
				ErrMoving, p.Name, p.Status, cur.Generation)
		}
		var errs violation.List
		validateConfig(a.ComputeConfig, "/compute_config", &errs)
		validatePlan(a.Plan, &errs)
		if err := errs.Err(ErrInvalid); err != nil {
			return nil, nil, err
		}
		id := NewID()
		wid, wname := moveTarget(cur.ID, p, id, a.Provider)
		p.Move = &Move{ID: id, Step: MoveProvisioning, Hold: a.Hold, From: p.Provider, To: a.Provider, RequestedAt: now, Actor: change.Actor,
			Other: Placement{Name: p.Name, Provider: a.Provider, ComputeConfig: compacted(a.ComputeConfig), WorkloadID: wid, WorkloadName: wname,
				Status: StatusRequested, StatusChangedAt: now},
			Plan: clonePlan(a.Plan)}
		msg = fmt.Sprintf("move of placement %s from %s to %s asked for: the target workload is %s (%s)", p.Name, p.Provider, a.Provider, wname, wid)
		if a.Plan != nil {
			msg += fmt.Sprintf(", following plan %s", a.Plan)
		}
		if a.Hold {
			msg += "; it holds for an approval before it switches"
		}
	case MoveApprove:
		switch {
		case p.Move == nil:
			return nil, nil, fmt.Errorf("%w: placement %s is not moving", ErrMoving, p.Name)
		case p.Move.Step == MoveCancelling:
			return nil, nil, fmt.Errorf("%w: the move of placement %s was cancelled; cancel again to retry a failed cancel", ErrMoving, p.Name)
		case rearm(p.Move, cur.Generation):
			// Go on: the step that failed is tried again.
			msg = fmt.Sprintf("the move of placement %s goes on: its failed step (%s) is tried again", p.Name, p.Move.Step)
			if p.Move.Step == MoveAwaitingApproval || p.Move.Step == MoveProvisioning {
				p.Move.Approved = true
			}
		case p.Move.Step == MoveDestroyingSource:
			return nil, nil, fmt.Errorf("%w: the move of placement %s has switched already: there is nothing to approve", ErrMoving, p.Name)
		case p.Move.Approved:
			return cur, nil, nil
		default:
			p.Move.Approved = true
			msg = fmt.Sprintf("the switch of placement %s to %s approved", p.Name, p.Move.To)
		}
	case MoveCancel:
		switch {
		case p.Move == nil:
			return nil, nil, fmt.Errorf("%w: placement %s is not moving", ErrMoving, p.Name)
		case p.Move.Step == MoveCancelling && rearm(p.Move, cur.Generation):
			msg = fmt.Sprintf("the cancel of the move of placement %s is tried again: its target on %s is destroyed", p.Name, p.Move.To)
		case p.Move.Step == MoveCancelling:
			return cur, nil, nil
		case p.Move.Step == MoveDestroyingSource:
			return nil, nil, fmt.Errorf("%w: placement %s has switched to %s already; move it back instead", ErrMoving, p.Name, p.Move.To)
		}
		if msg == "" {
			p.Move.Step = MoveCancelling
			msg = fmt.Sprintf("the move of placement %s to %s cancelled: its target is destroyed, %s serves on", p.Name, p.Move.To, p.Move.From)
		}
	default:
		return nil, nil, fmt.Errorf("%w: unknown move action %q", ErrInvalid, a.Kind)
	}
	next := *cur
	next.Placements = placements
	next.Version++
	next.UpdatedAt = now
	// The tenant is updating while a placement moves from the write that
	// asks for the move on, not from its controller's first look: the
	// answer says so, and a landlord that stops before that look finds the
	// move among its work (ListWork) when it starts again.
	next.summarize(now)
	events := []Event{{TenantID: cur.ID, Placement: p.Name, Time: now, Type: EventMove, Generation: cur.Generation, Message: msg, Actor: change.Actor}}
	if next.Status != cur.Status {
		events = append(events, Event{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: next.Status, Generation: cur.Generation, Message: next.StatusMessage, Actor: change.Actor})
	}
	return &next, events, nil
}

// rearm makes the failed workload of move m (its other, failed at
// generation: a target that did not provision, a destruction that failed)
// be tried again, and reports whether it was failed.
func rearm(m *Move, generation int64) bool {
	o := &m.Other
	if o.Status != StatusFailed || o.ObservedGeneration != generation {
		return false
	}
	o.ObservedGeneration, o.Attempts, o.RetryAt = 0, 0, nil
	return true
}

// OtherView is View of the workload of the named placement's move that
// does not serve (Move.Other): the target, or the source being destroyed
// after the switch. A target being cancelled, and a switched source, are
// views whose deletion was requested.
func (t *Tenant) OtherView(name string) (*Tenant, error) {
	p := t.Placement(name)
	if p == nil || p.Move == nil {
		return nil, fmt.Errorf("%w: tenant %s has no placement %q being moved", ErrNotFound, t.ID, name)
	}
	o := p.Move.Other
	o.Move = nil
	v := viewOf(t, o, p.Move.Step == MoveCancelling || p.Move.Step == MoveDestroyingSource || t.DeletionRequestedAt != nil)
	v.Plan = clonePlan(p.Move.Plan)
	return v, nil
}

// applyMoveStep applies an observation's MoveStep to placement p (the
// controller's steps: held for approval, switched, done). now is a
// Timestamp already. It returns the event to record.
func applyMoveStep(t *Tenant, p *Placement, step MoveStep, now time.Time, actor string) (*Event, error) {
	// t is the tenant being made (a copy of the one read): the switch
	// changes the plan it follows.
	m := p.Move
	if m == nil {
		return nil, fmt.Errorf("%w: placement %s is not moving", ErrConflict, p.Name)
	}
	ev := &Event{TenantID: t.ID, Placement: p.Name, Time: now, Type: EventMove, Generation: t.Generation, Actor: actor}
	switch step {
	case MoveAwaitingApproval:
		if m.Step != MoveProvisioning {
			return nil, fmt.Errorf("%w: the move of placement %s is %s, not provisioning", ErrConflict, p.Name, m.Step)
		}
		m.Step = step
		ev.Message = fmt.Sprintf("the target on %s runs and answers; the move holds for an approval to switch (landlord move %s --approve)", m.To, t.Name)
	case MoveDestroyingSource:
		if (m.Step != MoveProvisioning && m.Step != MoveAwaitingApproval) || (m.Hold && !m.Approved) || m.Other.Status != StatusReady {
			return nil, fmt.Errorf("%w: the move of placement %s cannot switch: it is %s, hold %t, approved %t, target %s",
				ErrConflict, p.Name, m.Step, m.Hold, m.Approved, m.Other.Status)
		}
		source, target := *p, m.Other
		source.Move = nil
		// The placement becomes the target, as it runs; the source is
		// what is left to destroy.
		*p = target
		p.Name = source.Name
		p.Removed = source.Removed
		p.Drift = nil
		p.Attempts, p.RetryAt = 0, nil
		p.stored, p.read = nil, nil
		source.stored, source.read = nil, nil
		source.Attempts, source.RetryAt = 0, nil
		m.Other = source
		m.Step = MoveDestroyingSource
		m.SwitchedAt = &now
		// The tenant follows the target's plan from now on; the move keeps
		// the source's, with which the source is destroyed.
		t.Plan, m.Plan = m.Plan, t.Plan
		p.Move = m
		ev.Message = fmt.Sprintf("placement %s switched from %s to %s: its endpoints are the target's now; the source is destroyed next", p.Name, m.From, m.To)
		if t.Plan != nil {
			ev.Message += fmt.Sprintf("; the tenant follows plan %s", t.Plan)
		}
	default:
		return nil, fmt.Errorf("%w: a controller does not set a move to %s", ErrInvalidTransition, step)
	}
	return ev, nil
}

// finishMove ends placement p's move once Move.Other is destroyed: the
// move is done (the source is gone), or cancelled (the target is).
func finishMove(t *Tenant, p *Placement, now time.Time, actor string) Event {
	m := p.Move
	p.Move = nil
	var msg string
	switch {
	case m.Step == MoveCancelling:
		msg = fmt.Sprintf("the cancelled move of placement %s is undone: its target on %s is destroyed", p.Name, m.To)
	case m.SwitchedAt == nil:
		msg = fmt.Sprintf("the move of placement %s to %s ends with the tenant's deletion: its target is destroyed", p.Name, m.To)
	default:
		msg = fmt.Sprintf("the move of placement %s from %s to %s is done: the source is destroyed", p.Name, m.From, m.To)
	}
	return Event{TenantID: t.ID, Placement: p.Name, Time: now, Type: EventMove, Generation: t.Generation, Message: msg, Actor: actor}
}
