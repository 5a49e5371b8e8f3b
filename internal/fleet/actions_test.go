package fleet

import (
	"errors"
	"strings"
	"testing"
)

func TestActions(t *testing.T) {
	changed := []Member{{TenantID: "a", State: MemberDone}, {TenantID: "b", State: MemberPending}}
	untouched := []Member{{TenantID: "a", State: MemberPending}, {TenantID: "b", State: MemberSkipped}}
	type result struct {
		state    State
		event    EventType
		finished bool
	}
	for _, tt := range []struct {
		name    string
		from    State
		act     func(r *Rollout) (*Rollout, Event, error)
		want    result
		allowed string // in the error, when refused
	}{
		{"pause running", StateRunning, func(r *Rollout) (*Rollout, Event, error) { return Pause(r, "ops", t0) }, result{StatePaused, EventPaused, false}, ""},
		{"pause paused", StatePaused, func(r *Rollout) (*Rollout, Event, error) { return Pause(r, "ops", t0) }, result{}, "only a running rollout"},
		{"pause halted", StateHalted, func(r *Rollout) (*Rollout, Event, error) { return Pause(r, "ops", t0) }, result{}, "only a running rollout"},
		{"pause completed", StateCompleted, func(r *Rollout) (*Rollout, Event, error) { return Pause(r, "ops", t0) }, result{}, "only a running rollout"},
		{"resume paused", StatePaused, func(r *Rollout) (*Rollout, Event, error) { return Resume(r, "ops", t0) }, result{StateRunning, EventResumed, false}, ""},
		{"resume halted", StateHalted, func(r *Rollout) (*Rollout, Event, error) { return Resume(r, "ops", t0) }, result{StateRunning, EventResumed, false}, ""},
		{"resume running", StateRunning, func(r *Rollout) (*Rollout, Event, error) { return Resume(r, "ops", t0) }, result{}, "only a paused or halted rollout"},
		{"resume aborted", StateAborted, func(r *Rollout) (*Rollout, Event, error) { return Resume(r, "ops", t0) }, result{}, "only a paused or halted rollout"},
		{"abort running, rollback, changed", StateRunning, func(r *Rollout) (*Rollout, Event, error) { return Abort(r, changed, true, "ops", t0) }, result{StateAborting, EventAborted, false}, ""},
		// Members read as untouched may have been changed since: the
		// driver's next step, reading them again, finishes the abort.
		{"abort halted, rollback, nothing changed", StateHalted, func(r *Rollout) (*Rollout, Event, error) { return Abort(r, untouched, true, "ops", t0) }, result{StateAborting, EventAborted, false}, ""},
		{"abort paused, no rollback", StatePaused, func(r *Rollout) (*Rollout, Event, error) { return Abort(r, changed, false, "ops", t0) }, result{StateAborted, EventAborted, true}, ""},
		{"abort aborting", StateAborting, func(r *Rollout) (*Rollout, Event, error) { return Abort(r, changed, true, "ops", t0) }, result{}, "only a running, paused or halted rollout"},
		{"abort completed", StateCompleted, func(r *Rollout) (*Rollout, Event, error) { return Abort(r, nil, false, "ops", t0) }, result{}, "only a running, paused or halted rollout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rollout{ID: "r1", Spec: Spec{Plan: "standard", To: 2}, State: tt.from, Wave: 1, Message: "before", Version: 4}
			next, ev, err := tt.act(r)
			if tt.allowed != "" {
				if !errors.Is(err, ErrState) || !strings.Contains(err.Error(), tt.allowed) || !strings.Contains(err.Error(), string(tt.from)) {
					t.Fatalf("err = %v, want ErrState saying %q", err, tt.allowed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.State != tt.from || r.Message != "before" {
				t.Errorf("the action changed its argument: %+v", r)
			}
			if next.State != tt.want.state || (next.FinishedAt != nil) != tt.want.finished || next.Version != 4 {
				t.Errorf("next = %s finished %v version %d, want %s finished %v version 4", next.State, next.FinishedAt != nil, next.Version, tt.want.state, tt.want.finished)
			}
			if ev.Type != tt.want.event || ev.Actor != "ops" || ev.RolloutID != "r1" || ev.Wave != 1 || !ev.Time.Equal(t0) || ev.Message == "" {
				t.Errorf("event = %+v", ev)
			}
			if next.State == StateRunning && next.Message != "" {
				t.Errorf("resume kept the message %q", next.Message)
			}
		})
	}
	r := &Rollout{ID: "r1", State: StateRunning}
	if next, _, _ := Abort(r, changed, true, "ops", t0); !next.Rollback {
		t.Error("an abort with rollback does not record it")
	}
}
