package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// GetRollout reads a rollout; a missing one is KindNotFound
// rollout_not_found.
func (s *Service) GetRollout(ctx context.Context, id string) (*fleet.Rollout, error) {
	if err := s.NeedFleet(); err != nil {
		return nil, err
	}
	ro, err := s.fleet.GetRollout(ctx, id)
	if err != nil {
		return nil, RolloutError(err, id)
	}
	return ro, nil
}

// RolloutError words fleet.ErrNotFound for rollout id.
func RolloutError(err error, id string) error {
	if errors.Is(err, fleet.ErrNotFound) {
		return refuse(KindNotFound, wire.CodeRolloutNotFound, fmt.Sprintf("there is no rollout %s; GET /v1/rollouts lists them", wire.Quote(id)))
	}
	return err
}

// RolloutAction is a change of a rollout's state (fleet.Pause,
// fleet.Resume, fleet.Abort) made from the rollout, its members when
// NeedMembers, and the time.
type RolloutAction struct {
	Rollout string
	// Expect are the rollout versions the action accepts; none accepts
	// any.
	Expect      Versions
	NeedMembers bool
	Do          func(*fleet.Rollout, []fleet.Member, time.Time) (*fleet.Rollout, fleet.Event, error)
}

// ActOnRollout applies an action to a rollout. With versions expected, a
// rollout that changed meanwhile is a *StaleError; without, a concurrent
// change is made again on the new state a few times, then fails with
// fleet.ErrConflict.
func (s *Service) ActOnRollout(ctx context.Context, a RolloutAction) (*fleet.Rollout, error) {
	for attempt := 0; ; attempt++ {
		ro, err := s.GetRollout(ctx, a.Rollout)
		if err != nil {
			return nil, err
		}
		if !a.Expect.Match(ro.Version) {
			return nil, &StaleError{What: "rollout", Current: ro.Version}
		}
		var members []fleet.Member
		if a.NeedMembers {
			if members, err = s.fleet.Members(ctx, ro.ID); err != nil {
				return nil, RolloutError(err, ro.ID)
			}
		}
		next, ev, err := a.Do(ro, members, s.now())
		if err != nil {
			return nil, err
		}
		updated, err := s.fleet.UpdateRollout(ctx, next, ev)
		switch {
		case errors.Is(err, fleet.ErrConflict) && !a.Expect.Any():
			return nil, &StaleError{What: "rollout"}
		case errors.Is(err, fleet.ErrConflict) && attempt < maxRetries:
			continue
		case err != nil:
			return nil, RolloutError(err, ro.ID)
		}
		return updated, nil
	}
}
