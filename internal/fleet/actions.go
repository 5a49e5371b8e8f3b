package fleet

import (
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The actions people take on a rollout: each returns the rollout to write
// (with Store.UpdateRollout, at r's Version) and its event, or an error
// wrapping ErrState saying which states allow the action. r is not
// changed.

// Pause stops a running rollout from changing more tenants; those already
// changing go on converging, and are followed.
func Pause(r *Rollout, actor string, now time.Time) (*Rollout, Event, error) {
	if r.State != StateRunning {
		return nil, Event{}, stateError(r, "paused", StateRunning)
	}
	now = tenant.Timestamp(now)
	next := *r
	next.State = StatePaused
	next.Message = "paused by " + actorName(actor) + "; resume to go on, or abort"
	return &next, actionEvent(r, EventPaused, next.Message, actor, now), nil
}

// Resume lets a paused or halted rollout go on. A halted rollout whose
// failed members are still more than its budget halts again at the next
// step: fix or delete them first, or abort.
func Resume(r *Rollout, actor string, now time.Time) (*Rollout, Event, error) {
	if r.State != StatePaused && r.State != StateHalted {
		return nil, Event{}, stateError(r, "resumed", StatePaused, StateHalted)
	}
	now = tenant.Timestamp(now)
	next := *r
	next.State, next.Message = StateRunning, ""
	return &next, actionEvent(r, EventResumed, fmt.Sprintf("resumed by %s (was %s)", actorName(actor), r.State), actor, now), nil
}

// Abort ends an active rollout. With rollback the rollout becomes
// aborting: the controller moves the members it changed (changing, done or
// failed) back to their versions, or, for a fleet move, cancels the moves
// that have not switched, then marks it aborted. It does so even
// when members shows none changed: the driver may have changed one since
// they were read, and only its next step, which reads them again, knows.
// Without rollback it is aborted at once, and tenants already changed stay
// at the target version. An aborting rollout cannot be aborted again: the
// controller is finishing it.
func Abort(r *Rollout, members []Member, rollback bool, actor string, now time.Time) (*Rollout, Event, error) {
	if !r.State.Active() || r.State == StateAborting {
		return nil, Event{}, stateError(r, "aborted", StateRunning, StatePaused, StateHalted)
	}
	now = tenant.Timestamp(now)
	changed := 0
	for _, m := range members {
		switch m.State {
		case MemberChanging, MemberDone, MemberFailed:
			changed++
		}
	}
	next := *r
	next.Rollback = rollback
	var msg string
	switch {
	case rollback && r.Spec.Moves():
		next.State = StateAborting
		msg = fmt.Sprintf("aborted by %s: cancelling the moves that have not switched; their sources serve on", actorName(actor))
	case rollback:
		next.State = StateAborting
		msg = fmt.Sprintf("aborted by %s: rolling the changed tenants back to their versions", actorName(actor))
	case r.Spec.Moves():
		next.State, next.FinishedAt = StateAborted, &now
		msg = fmt.Sprintf("aborted by %s: %d tenants moved or moving to plan %s go on", actorName(actor), changed, r.Spec.ToPlan)
	default:
		next.State, next.FinishedAt = StateAborted, &now
		msg = fmt.Sprintf("aborted by %s: %d changed tenants stay at version %d", actorName(actor), changed, r.Spec.To)
	}
	next.Message = msg
	return &next, actionEvent(r, EventAborted, msg, actor, now), nil
}

func actionEvent(r *Rollout, typ EventType, msg, actor string, now time.Time) Event {
	return Event{RolloutID: r.ID, Time: now, Type: typ, Wave: r.Wave, Message: msg, Actor: actor}
}

func actorName(actor string) string {
	if actor == "" {
		return "someone"
	}
	return actor
}

// stateError says that r cannot be done (paused, resumed…) in its state, and which
// states allow it.
func stateError(r *Rollout, done string, allowed ...State) error {
	list := ""
	for i, s := range allowed {
		switch {
		case i == 0:
		case i == len(allowed)-1:
			list += " or "
		default:
			list += ", "
		}
		list += string(s)
	}
	return fmt.Errorf("%w: rollout %s is %s; only a %s rollout can be %s", ErrState, r.ID, r.State, list, done)
}
