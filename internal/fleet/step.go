package fleet

import (
	"fmt"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Decision is what one step of a rollout does, to be applied in order:
// members settled (Store.UpdateMember), tenants moved (Store.MoveTenant),
// then the rollout's update (Store.UpdateRollout), which is to be written
// only when every settle and move before it was.
type Decision struct {
	Settles []Settle
	Moves   []Move
	// Rollout is the rollout with its new State, Wave, BakeFrom, Message
	// and FinishedAt, or nil when they do not change; Events go with it.
	Rollout *Rollout
	Events  []Event
	// Waiting are the pending members of the wave in progress whose
	// maintenance window is closed, by tenant id, with when it next opens
	// (zero when it cannot be known).
	Waiting map[string]time.Time
}

// Settle is a member's new state, written when it is still in Expect.
type Settle struct {
	Member Member
	Expect MemberState
	Event  Event
}

// Step decides the next step of an active rollout from its members and
// their tenants as they are now (tenants by id; a member whose tenant is
// missing was deleted or forgotten). It never trusts a status older than a
// member's change: a member is done only when its tenant is ready at the
// generation that carries the new version (or a later one) and has
// settled it.
//
// A running rollout moves the pending members of the wave in progress
// whose maintenance window is open, at most the wave's MaxInFlight
// changing at once; halts when more members have failed than its budget;
// and, once every member of the wave is done, failed or skipped and has
// baked for Spec.Bake, starts the next wave with members (passing those
// without in the same decision), or completes. A paused or halted rollout
// only follows the members already changed. An aborting rollout moves its
// changed members back to their versions, then is aborted. A finished
// rollout (aborted without rollback) only settles its members still
// changing, done or failed as their tenants turn out, so that none stays
// changing while its tenant is ready.
func Step(r *Rollout, members []Member, tenants map[string]*tenant.Tenant, now time.Time, actor string) Decision {
	now = tenant.Timestamp(now)
	d := Decision{}
	event := func(typ EventType, m *Member, format string, args ...any) Event {
		e := Event{RolloutID: r.ID, Time: now, Type: typ, Wave: r.Wave, Message: fmt.Sprintf(format, args...), Actor: actor}
		if m != nil {
			e.TenantID, e.TenantName, e.Wave = m.TenantID, m.TenantName, m.Wave
		}
		return e
	}
	settle := func(m *Member, state MemberState, typ EventType, format string, args ...any) {
		expect := m.State
		m.State, m.FinishedAt, m.Message = state, &now, fmt.Sprintf(format, args...)
		d.Settles = append(d.Settles, Settle{Member: *m, Expect: expect, Event: event(typ, m, "%s", m.Message)})
	}
	members = append([]Member(nil), members...) // settled here, not in the caller's slice

	if r.State == StateAborting {
		for _, m := range members {
			switch {
			case r.Spec.Moves() && (m.State == MemberChanging || m.State == MemberFailed):
				// A tenant done has switched, and its source is gone: it
				// stays on the target.
				d.Moves = append(d.Moves, Move{TenantID: m.TenantID, Expect: m.State, State: MemberRolledBack, Actor: actor,
					Message: fmt.Sprintf("rollout %s aborted: the move to plan %s is cancelled unless it switched already", r.ID, r.Spec.ToPlan)})
			case r.Spec.Moves():
			case m.State == MemberChanging || m.State == MemberDone || m.State == MemberFailed:
				d.Moves = append(d.Moves, Move{TenantID: m.TenantID, Expect: m.State, To: m.From, State: MemberRolledBack, Actor: actor,
					Message: fmt.Sprintf("rollout %s aborted: plan %s back to version %d", r.ID, r.Spec.Plan, m.From)})
			}
		}
		next := *r
		next.State, next.FinishedAt = StateAborted, &now
		done := "%d tenants rolled back"
		if r.Spec.Moves() {
			done = "the moves of %d tenants cancelled where they had not switched"
		}
		d.Rollout, d.Events = &next, []Event{event(EventAborted, nil, done, len(d.Moves))}
		return d
	}

	deadline := r.Spec.deadline()
	finished := !r.State.Active()
	for i := range members {
		m := &members[i]
		t := tenants[m.TenantID]
		gone := t == nil || t.DeletionRequestedAt != nil || t.Status == tenant.StatusDeleted
		if finished && m.State != MemberChanging {
			// A finished rollout's record stands, but for the tenants it
			// left converging.
			continue
		}
		switch m.State {
		case MemberPending:
			// A tenant of a wave begun that the rollout may no longer
			// change is skipped now, not when its window opens.
			if m.Wave > r.Wave {
				break
			}
			if why := leftPending(r, m, t, gone); why != "" {
				settle(m, MemberSkipped, EventSkipped, "%s", why)
			}
		case MemberChanging:
			switch {
			case gone:
				settle(m, MemberSkipped, EventSkipped, "the tenant is deleted")
			case movedAway(r, m, t) != "":
				settle(m, MemberSkipped, EventSkipped, "%s", movedAway(r, m, t))
			case runsTarget(r, m, t):
				settle(m, MemberDone, EventDone, "ready at generation %d", t.ObservedGeneration)
			case t.Status == tenant.StatusFailed && t.ObservedGeneration >= m.Generation:
				settle(m, MemberFailed, EventFailed, "failed at generation %d: %s", t.ObservedGeneration, t.StatusMessage)
			case m.ChangedAt != nil && now.Sub(*m.ChangedAt) >= deadline:
				settle(m, MemberFailed, EventFailed, "not ready at generation %d within %s (status %s, observed generation %d)",
					m.Generation, deadline, t.Status, t.ObservedGeneration)
			}
		case MemberFailed:
			// A tenant fixed since (a new override, a retry) stops counting
			// against the budget: a halted rollout can then be resumed. So
			// does one deleted, or moved off the target by someone else
			// (never "recovered": it no longer runs the target version).
			switch {
			case gone:
				settle(m, MemberSkipped, EventSkipped, "the tenant is deleted")
			case movedAway(r, m, t) != "":
				settle(m, MemberSkipped, EventSkipped, "%s", movedAway(r, m, t))
			case runsTarget(r, m, t):
				settle(m, MemberDone, EventDone, "recovered: ready at generation %d", t.ObservedGeneration)
			}
		case MemberDone:
			// A tenant that fails while its wave bakes, or later, counts
			// against the budget; one moved off the target by someone else
			// is no longer done.
			switch {
			case gone:
			case movedAway(r, m, t) != "":
				settle(m, MemberSkipped, EventSkipped, "%s", movedAway(r, m, t))
			case t.Status == tenant.StatusFailed && t.ObservedGeneration >= m.Generation:
				settle(m, MemberFailed, EventFailed, "failed at generation %d after it was ready: %s", t.ObservedGeneration, t.StatusMessage)
			}
		}
	}

	next := *r
	changed := false
	if failed := Failed(members); len(failed) > r.Spec.MaxFailures && r.State == StateRunning {
		next.State = StateHalted
		tenants := "tenants"
		if len(failed) == 1 {
			tenants = "tenant"
		}
		next.Message = fmt.Sprintf("halted: %d %s failed, more than the failure budget of %d: %s; resume to go on, or abort",
			len(failed), tenants, r.Spec.MaxFailures, strings.Join(failed, ", "))
		d.Rollout, d.Events = &next, []Event{event(EventHalted, nil, "%s", next.Message)}
		return d
	}
	if r.State != StateRunning {
		return d
	}

	wave := r.Wave
	if wave < len(r.Waves) {
		limit := r.Waves[wave].MaxInFlight
		inFlight, open := 0, 0
		for _, m := range members {
			if m.Wave == wave && (m.State == MemberChanging || m.State == MemberPending) {
				open++
				if m.State == MemberChanging {
					inFlight++
				}
			}
		}
		for i := range members {
			m := &members[i]
			if m.Wave != wave || m.State != MemberPending || limit > 0 && inFlight >= limit {
				continue
			}
			t := tenants[m.TenantID]
			if r.Spec.Moves() && t.Status != tenant.StatusFailed && (t.Status != tenant.StatusReady || t.ObservedGeneration != t.Generation) {
				// A move starts from a running tenant: one still converging
				// (being provisioned, changed) is waited for; a failed one
				// is moved, which fails it as a member.
				continue
			}
			if ok, opens := t.MaintenanceWindow.Open(now); !ok {
				if d.Waiting == nil {
					d.Waiting = map[string]time.Time{}
				}
				d.Waiting[m.TenantID] = opens
				continue
			}
			inFlight++
			msg := fmt.Sprintf("rollout %s, wave %s: plan %s version %d to %d", r.ID, r.Waves[wave].Name, r.Spec.Plan, m.From, r.Spec.To)
			if r.Spec.Moves() {
				msg = fmt.Sprintf("rollout %s, wave %s: moved from plan %s (v%d) to plan %s (v%d) on %s",
					r.ID, r.Waves[wave].Name, r.Spec.Plan, m.From, r.Spec.ToPlan, r.Spec.To, r.Spec.ToProvider)
			}
			d.Moves = append(d.Moves, Move{TenantID: m.TenantID, Expect: MemberPending, To: r.Spec.To, State: MemberChanging, Actor: actor, Message: msg})
		}
		if open > 0 {
			return d
		}
		// Every member of the wave is done, failed or skipped: bake, if
		// the wave changed a tenant (an empty or all-skipped wave has
		// nothing to watch).
		bake := time.Duration(0)
		for _, m := range members {
			if m.Wave == wave && (m.State == MemberDone || m.State == MemberFailed) {
				bake = r.Spec.Bake
				break
			}
		}
		if next.BakeFrom == nil {
			next.BakeFrom, changed = &now, true
			if bake > 0 {
				d.Events = append(d.Events, event(EventWaveBaking, nil, "wave %s: every tenant settled; baking for %s", r.Waves[wave].Name, bake))
			}
		}
		if now.Sub(*next.BakeFrom) >= bake {
			next.Wave, next.BakeFrom, changed = wave+1, nil, true
			// Waves without members are passed in the same write: each
			// would be a step and a new version of the rollout that
			// changes no tenant (and makes every If-Match read meanwhile
			// stale).
			sizes := make([]int, len(r.Waves))
			for _, m := range members {
				if m.Wave >= 0 && m.Wave < len(sizes) {
					sizes[m.Wave]++
				}
			}
			for ; next.Wave < len(r.Waves); next.Wave++ {
				e := event(EventWaveStarted, nil, "wave %s: %d tenants", r.Waves[next.Wave].Name, sizes[next.Wave])
				e.Wave = next.Wave
				d.Events = append(d.Events, e)
				if sizes[next.Wave] > 0 {
					break
				}
			}
		}
	}
	if next.Wave >= len(r.Waves) {
		c := Count(members, -1)
		next.State, next.FinishedAt, next.Message, changed = StateCompleted, &now, "", true
		format := "plan %[1]s is at version %[2]d: %[4]d tenants done, %[5]d failed, %[6]d skipped"
		if r.Spec.Moves() {
			format = "plan %[1]s moved to plan %[3]s (v%[2]d): %[4]d tenants moved, %[5]d failed, %[6]d skipped"
		}
		d.Events = append(d.Events, event(EventCompleted, nil, format, r.Spec.Plan, r.Spec.To, r.Spec.ToPlan, c[MemberDone], c[MemberFailed], c[MemberSkipped]))
	}
	if changed {
		d.Rollout = &next
	}
	return d
}

// leftPending says why a pending member's tenant t (gone: deleted) may no
// longer be changed by r, or "" when it may: the rules of ApplyMove, so
// that such a member is skipped at once rather than when its window opens.
func leftPending(r *Rollout, m *Member, t *tenant.Tenant, gone bool) string {
	switch {
	case gone:
		return "the tenant is deleted"
	case t.Plan == nil || t.Plan.Name != r.Spec.Plan:
		return "the tenant no longer follows plan " + r.Spec.Plan
	case t.Plan.Pinned:
		return fmt.Sprintf("the tenant is pinned to %s", t.Plan)
	case !r.Spec.Moves() && t.Plan.Version != m.From && t.Plan.Version != r.Spec.To:
		return fmt.Sprintf("the tenant was moved to %s by someone else", t.Plan)
	}
	return ""
}

// runsTarget reports whether member m's tenant t runs the rollout's
// target: ready at the generation that carries it (or a later one), and,
// for a fleet move, on the target plan with its move over.
func runsTarget(r *Rollout, m *Member, t *tenant.Tenant) bool {
	ready := t.Status == tenant.StatusReady && t.ObservedGeneration >= m.Generation && t.ObservedGeneration == t.Generation
	if !r.Spec.Moves() {
		return ready
	}
	return ready && t.Plan != nil && t.Plan.Name == r.Spec.ToPlan && !t.Moving()
}

// movedAway says why a tenant the rollout changed no longer runs its
// target (it left the plan, someone moved it to another version, its move
// was cancelled), or "" when it does, or is being moved onto it, or (a
// member of a fleet move that failed before its move started) was never
// moved. Such a member is skipped: it is neither done nor failed at the
// target, and a rollback leaves it where it was put.
func movedAway(r *Rollout, m *Member, t *tenant.Tenant) string {
	target := r.Spec.Target()
	switch {
	case t.Plan != nil && t.Plan.Name == target.Name && t.Plan.Version != target.Version:
		return fmt.Sprintf("the tenant was moved to %s by someone else", t.Plan)
	case t.Plan != nil && t.Plan.Name == target.Name:
		return ""
	case !r.Spec.Moves() || t.Plan == nil || t.Plan.Name != r.Spec.Plan:
		return "the tenant no longer follows plan " + target.Name
	case movingTo(t, target.Name) != nil, m.ChangedAt == nil:
		return ""
	}
	return fmt.Sprintf("the move was cancelled: the tenant stays on plan %s", t.Plan)
}
