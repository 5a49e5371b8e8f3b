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
	plan, err := s.rolloutPlan(ctx, spec.Plan, &errs)
	if err != nil {
		return spec, nil, nil, err
	}
	var target *fleet.Version
	if plan != nil {
		if target, err = s.rolloutTarget(ctx, plan, &spec, &errs); err != nil {
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

// rolloutPlan reads the plan a rollout names; one that does not exist is
// added to errs.
func (s *Service) rolloutPlan(ctx context.Context, name string, errs *violation.List) (*fleet.Plan, error) {
	if tenant.ValidateName(name) != nil {
		return nil, nil // ValidateSpec says so
	}
	p, err := s.fleet.GetPlan(ctx, name)
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		errs.Add("/plan", "%s", s.noSuchPlan(ctx))
		return nil, nil
	case err != nil:
		return nil, err
	}
	return p, nil
}

// rolloutTarget reads the version a rollout of plan moves to (the latest
// when spec names none), adding what is wrong with spec's versions to
// errs.
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
	if spec.From > plan.Latest {
		errs.Add("/from_version", "plan %s has no version %d; its versions are 1 to %d", plan.Name, spec.From, plan.Latest)
	}
	return target, nil
}
