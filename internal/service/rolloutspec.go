package service

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// RolloutRequest is what a rollout is asked to do: its spec with the
// durations as written, so that one that does not parse is reported at
// its pointer with every other problem.
type RolloutRequest struct {
	// Spec is the rollout's spec but for Bake and Deadline.
	Spec     fleet.Spec
	Bake     string
	Deadline string
	// Problems are those the caller found already (numbers given as 0
	// where leaving them out means the default, say), reported with the
	// rest.
	Problems violation.List
}

// rolloutSpec reads a rollout request into a spec, with the plan and the
// target version, reporting every problem at once (fleet.ErrInvalid, each
// at its pointer).
func (s *Service) rolloutSpec(ctx context.Context, req RolloutRequest) (fleet.Spec, *fleet.Plan, *fleet.Version, error) {
	spec := req.Spec
	spec.Deadline = fleet.DefaultDeadline
	errs := slices.Clone(req.Problems)
	duration := func(at, v string, into *time.Duration) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs.Add(at, "%s is not a duration such as 10m or 1h30m", wire.Quote(v))
			return
		}
		*into = d
	}
	duration("/bake", req.Bake, &spec.Bake)
	duration("/deadline", req.Deadline, &spec.Deadline)
	if req.Deadline != "" && spec.Deadline == 0 {
		errs.Add("/deadline", "is 0; give a positive duration, or leave deadline out for %s", fleet.DefaultDeadline)
	}
	plan, err := s.rolloutPlan(ctx, spec.Plan, "/plan", &errs)
	if err != nil {
		return spec, nil, nil, err
	}
	if plan != nil && spec.From > plan.Latest {
		errs.Add("/from_version", "plan %s has no version %d; its versions are 1 to %d", plan.Name, spec.From, plan.Latest)
	}
	// The plan whose version the tenants go to: the rollout's own, or, for
	// a fleet move, the one they move onto, on its provider.
	to := plan
	if spec.Moves() && spec.ToPlan != spec.Plan {
		if to, err = s.rolloutPlan(ctx, spec.ToPlan, "/to_plan", &errs); err != nil {
			return spec, nil, nil, err
		}
		if to != nil {
			spec.ToProvider = to.Provider
		}
	}
	var target *fleet.Version
	if to != nil {
		if target, err = s.rolloutTarget(ctx, to, &spec, &errs); err != nil {
			return spec, nil, nil, err
		}
	}
	check := spec
	if check.To == 0 && len(errs) > 0 {
		check.To = 1 // the missing target is reported already
	}
	errs = append(errs, violation.Of(fleet.ValidateSpec(check))...)
	if err := errs.Err(fleet.ErrInvalid); err != nil {
		return spec, nil, nil, err
	}
	return spec, plan, target, nil
}

// rolloutPlan reads a plan a rollout names at pointer at; one that does
// not exist is added to errs.
func (s *Service) rolloutPlan(ctx context.Context, name, at string, errs *violation.List) (*fleet.Plan, error) {
	if tenant.ValidateName(name) != nil {
		return nil, nil // ValidateSpec says so
	}
	p, err := s.fleet.GetPlan(ctx, name)
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		errs.Add(at, "%s", s.noSuchPlan(ctx))
		return nil, nil
	case err != nil:
		return nil, err
	}
	return p, nil
}

// rolloutTarget reads the version of plan (the rollout's, or a fleet
// move's target plan) the rollout moves tenants to (the latest when spec
// names none), adding what is wrong with it to errs.
func (s *Service) rolloutTarget(ctx context.Context, plan *fleet.Plan, spec *fleet.Spec, errs *violation.List) (*fleet.Version, error) {
	if spec.To == 0 {
		spec.To = plan.Latest
	}
	var target *fleet.Version
	switch {
	case plan.Latest == 0:
		errs.Add("/to_version", "plan %s has no version yet; publish one with POST /v1/plans/%s/versions", plan.Name, plan.Name)
	case spec.To > plan.Latest:
		errs.Add("/to_version", "plan %s has no version %d; its versions are 1 to %d", plan.Name, spec.To, plan.Latest)
	case spec.To >= 1:
		v, err := s.fleet.GetVersion(ctx, plan.Name, spec.To)
		if errors.Is(err, fleet.ErrNotFound) {
			errs.Add("/to_version", "plan %s has no version %d", plan.Name, spec.To)
		} else if err != nil {
			return nil, err
		}
		target = v
	}
	return target, nil
}
