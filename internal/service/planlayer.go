package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// A tenant's plan, as requests set it: the plan a request names is looked
// up (its version, 0 for the plan's current one, must exist), and the
// version's config is the plan layer of the tenant's effective config.

// planLayer looks up the plan ref names, for a tenant on provider (empty
// for a new tenant): it returns ref with its version resolved (0 is the
// plan's current version), the plan and the version. Refusals are
// invalid_plan at /plan/name or /plan/version.
func (s *Service) planLayer(ctx context.Context, ref *tenant.PlanRef, provider string) (*tenant.PlanRef, *fleet.Plan, *fleet.Version, error) {
	if err := s.NeedFleet(); err != nil {
		return nil, nil, nil, err
	}
	if err := tenant.ValidateName(ref.Name); err != nil {
		return nil, nil, nil, invalidPlan("the plan's name is not valid",
			"/plan/name", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
	}
	p, err := s.fleet.GetPlan(ctx, ref.Name)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, nil, nil, invalidPlan(fmt.Sprintf("there is no plan %s", ref.Name), "/plan/name", s.noSuchPlan(ctx))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if provider != "" && p.Provider != provider {
		return nil, nil, nil, invalidPlan(fmt.Sprintf("plan %s is for provider %s; the tenant runs on %s and cannot follow it", p.Name, p.Provider, provider),
			"/plan/name", fmt.Sprintf("is a plan for provider %s, not %s", p.Provider, provider))
	}
	out := *ref
	if out.Version == 0 {
		if p.Current == 0 {
			return nil, nil, nil, invalidPlan(fmt.Sprintf("plan %s has no version yet; publish one with POST /v1/plans/%s/versions", p.Name, p.Name),
				"/plan/version", "the plan has no version yet")
		}
		out.Version = p.Current
	}
	v, err := s.fleet.GetVersion(ctx, p.Name, out.Version)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, nil, nil, invalidPlan(fmt.Sprintf("plan %s has no version %d; its versions are 1 to %d", p.Name, out.Version, p.Latest),
			"/plan/version", fmt.Sprintf("is not a version of plan %s (1 to %d)", p.Name, p.Latest))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return &out, p, v, nil
}

func invalidPlan(detail, at, msg string) *Error {
	return refuse(KindInvalid, wire.CodeInvalidPlan, detail, Field{Pointer: at, Message: msg})
}

// noSuchPlan says what to do about a plan that does not exist: the plans
// there are, or how to make one.
func (s *Service) noSuchPlan(ctx context.Context) string {
	if plans, err := s.fleet.ListPlans(ctx); err == nil && len(plans) > 0 {
		names := make([]string, len(plans))
		for i, p := range plans {
			names[i] = p.Name
		}
		return "no plan has this name; the plans are " + strings.Join(names, ", ")
	}
	return "no plan has this name; there are no plans (create one with POST /v1/plans)"
}

// ChoosePlan is the plan a create or a replace asks for (choice) made
// from the tenant's (cur, nil for a new tenant): nil keeps cur; a name
// left out is cur's; a version left out (0) is cur's when the plan is
// cur's, else 0 (the plan's current version).
func ChoosePlan(cur, choice *tenant.PlanRef) (*tenant.PlanRef, error) {
	if choice == nil {
		return clonePlanRef(cur), nil
	}
	ref := *choice
	if ref.Name == "" {
		if cur == nil {
			return nil, invalidPlan("the plan's name is required", "/plan/name", "is required")
		}
		ref.Name = cur.Name
	}
	if ref.Version < 0 {
		return nil, invalidPlan("the plan's version is not valid", "/plan/version", "must be at least 1, or left out for the plan's current version")
	}
	if ref.Version == 0 && cur != nil && cur.Name == ref.Name {
		ref.Version = cur.Version
	}
	return &ref, nil
}

// PlanPatch is what a merge patch changes of a tenant's plan.
type PlanPatch struct {
	// SetName sets the plan to follow to Name; a new one starts from its
	// current version unless the patch names one.
	SetName bool
	Name    string
	// SetVersion sets the version to Version (0 is the plan's current).
	SetVersion bool
	Version    int64
	// SetPinned sets whether the tenant is pinned to Pinned.
	SetPinned bool
	Pinned    bool
}

// PatchPlan applies p to the tenant's plan, cur.
func PatchPlan(cur *tenant.PlanRef, p PlanPatch) (*tenant.PlanRef, error) {
	next := clonePlanRef(cur)
	if next == nil {
		next = &tenant.PlanRef{}
	}
	if p.SetName && p.Name != next.Name {
		next.Name, next.Version = p.Name, 0
	}
	if p.SetVersion {
		next.Version = p.Version
	}
	if p.SetPinned {
		next.Pinned = p.Pinned
	}
	if next.Name == "" {
		return nil, invalidPlan("the tenant follows no plan; name one", "/plan/name", "is required: the tenant follows no plan")
	}
	if next.Version < 0 {
		return nil, invalidPlan("the plan's version is not valid", "/plan/version", "must be at least 1, or null for the plan's current version")
	}
	return next, nil
}

func clonePlanRef(p *tenant.PlanRef) *tenant.PlanRef {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// checkProviderChoice refuses a compute_config that chooses another
// provider than the plan's, saying why.
func checkProviderChoice(config json.RawMessage, p *fleet.Plan) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(config, &top) != nil {
		return nil // Resolve reports it
	}
	raw, ok := top[wire.SelectionKey]
	if !ok {
		return nil
	}
	var chosen string
	if json.Unmarshal(raw, &chosen) == nil && chosen != "" && chosen != p.Provider {
		return refuse(KindInvalid, wire.CodeInvalidComputeConfig,
			fmt.Sprintf("the tenant follows plan %s, whose provider is %s", p.Name, p.Provider),
			Field{Pointer: "/compute_config/" + wire.SelectionKey, Message: fmt.Sprintf("must be %s, the provider of plan %s, or left out", p.Provider, p.Name)})
	}
	return nil
}
