package fleet

import (
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The rules of Store.UpdateRollout and Store.UpdateMember, and of the
// events every write records, for every store to call in the transaction
// that reads the stored rollout or member. The errors say what is wrong
// after the caller's prefix naming the rollout or member ("update rollout
// …: ").

// CheckUpdate checks what UpdateRollout is asked to write before anything
// is read: r's state must be a rollout state (else ErrInvalid). ApplyUpdate
// checks it too; a store calls CheckUpdate first to refuse without a
// round trip to its database.
func CheckUpdate(r *Rollout) error {
	if !r.State.Valid() {
		return fmt.Errorf("%w: unknown state %q", ErrInvalid, r.State)
	}
	return nil
}

// ApplyUpdate returns the stored rollout cur as UpdateRollout writes r
// over it: r's State, Wave, Rollback, Message, BakeFrom and FinishedAt, at
// the next version, updated now. r at another version than cur is
// ErrConflict: someone wrote it since the caller read it. Neither cur nor
// r is changed.
func ApplyUpdate(cur, r *Rollout, now time.Time) (*Rollout, error) {
	if err := CheckUpdate(r); err != nil {
		return nil, err
	}
	if cur.Version != r.Version {
		return nil, fmt.Errorf("%w: it is at version %d, not %d", ErrConflict, cur.Version, r.Version)
	}
	next := *cur
	next.State, next.Wave, next.Rollback, next.Message = r.State, r.Wave, r.Rollback, r.Message
	next.BakeFrom, next.FinishedAt = timestamp(r.BakeFrom), timestamp(r.FinishedAt)
	next.Version++
	next.UpdatedAt = tenant.Timestamp(now)
	return &next, nil
}

// ApplyMemberUpdate returns the stored member cur as UpdateMember writes m
// over it: m's State, FinishedAt and Message. A member not in state expect
// is ErrConflict: another controller moved it since the caller read it.
func ApplyMemberUpdate(cur, m Member, expect MemberState) (Member, error) {
	if cur.State != expect {
		return Member{}, fmt.Errorf("%w: it is %s, not %s", ErrConflict, cur.State, expect)
	}
	cur.State, cur.FinishedAt, cur.Message = m.State, timestamp(m.FinishedAt), m.Message
	return cur, nil
}

// EventsAt returns events as a store records them: those without a time
// happened now, and every time is a stored one (tenant.Timestamp). events
// is not changed.
func EventsAt(events []Event, now time.Time) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		if e.Time.IsZero() {
			e.Time = now
		}
		e.Time = tenant.Timestamp(e.Time)
		out[i] = e
	}
	return out
}

// timestamp is a copy of t as stored (tenant.Timestamp), or nil.
func timestamp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	ts := tenant.Timestamp(*t)
	return &ts
}
