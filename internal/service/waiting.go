package service

import (
	"context"
	"errors"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Waiting is a member of a rollout that waits for its tenant's
// maintenance window.
type Waiting struct {
	TenantID   string
	TenantName string
	// OpensAt is when the window opens next, nil when it never does.
	OpensAt *time.Time
}

// waitingGets is how many pending members Waiting reads one by one; it
// reads more with the plan's followers, a page at a time, so that a wave
// of thousands costs a few round trips to the store, not thousands (the
// console reads a rollout every second).
const waitingGets = 16

// Waiting lists the pending members of the wave in progress of a running
// rollout whose tenant follows the rollout's plan and whose maintenance
// window is closed now.
func (s *Service) Waiting(ctx context.Context, ro *fleet.Rollout, members []fleet.Member) ([]Waiting, error) {
	pending := pendingNow(ro, members)
	if len(pending) == 0 {
		return nil, nil
	}
	tenants := make(map[string]*tenant.Tenant, len(pending))
	if len(pending) <= waitingGets {
		for _, m := range pending {
			t, err := s.tenants.Get(ctx, m.TenantID, tenant.GetOptions{})
			if errors.Is(err, tenant.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			tenants[t.ID] = t
		}
	} else {
		followers, err := tenant.ListAll(ctx, s.tenants, tenant.ListOptions{Plan: ro.Spec.Plan})
		if err != nil {
			return nil, err
		}
		for _, t := range followers {
			tenants[t.ID] = t
		}
	}
	return WaitingOf(s.now(), ro, members, tenants), nil
}

// pendingNow returns the pending members of the wave in progress of a
// rollout that is running (or paused or halted: it may run again).
func pendingNow(ro *fleet.Rollout, members []fleet.Member) []fleet.Member {
	if ro.State != fleet.StateRunning && ro.State != fleet.StatePaused && ro.State != fleet.StateHalted {
		return nil
	}
	var out []fleet.Member
	for _, m := range members {
		if m.Wave == ro.Wave && m.State == fleet.MemberPending {
			out = append(out, m)
		}
	}
	return out
}

// WaitingOf is Waiting with the tenants at hand, by id. A member whose
// tenant is not there (deleted) or no longer follows the plan waits for
// nothing: the driver skips it.
func WaitingOf(now time.Time, ro *fleet.Rollout, members []fleet.Member, tenants map[string]*tenant.Tenant) []Waiting {
	var out []Waiting
	for _, m := range pendingNow(ro, members) {
		t := tenants[m.TenantID]
		if t == nil || t.Plan == nil || t.Plan.Name != ro.Spec.Plan {
			continue
		}
		if open, opens := t.MaintenanceWindow.Open(now); !open {
			wt := Waiting{TenantID: m.TenantID, TenantName: m.TenantName}
			if !opens.IsZero() {
				at := opens.UTC()
				wt.OpensAt = &at
			}
			out = append(out, wt)
		}
	}
	return out
}
