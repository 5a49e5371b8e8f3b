package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// MoveRequest asks for a move of a tenant's placement (see tenant.Move),
// or acts on the one in progress.
type MoveRequest struct {
	// Tenant is the tenant's id or name.
	Tenant string
	// Placement names the placement; "" for a tenant of one.
	Placement string
	Kind      tenant.MoveKind
	// ComputeConfig is the placement's config on the target, for a start:
	// its compute_provider chooses the target provider. Hold makes the
	// move wait for an approval before it switches.
	ComputeConfig json.RawMessage
	Hold          bool
	// Plan, for a start, is the plan the target follows (its version 0
	// for the plan's current one), on the plan's provider; ComputeConfig
	// may then be left out (no overrides).
	Plan *tenant.PlanRef
	// Expect are the versions the request accepts; none accepts any.
	Expect Versions
	Actor  string
	// Seen, if set, is told of the tenant as read (for the log line of
	// the request).
	Seen func(*tenant.Tenant)
}

// MoveTenant starts, approves or cancels the move of a tenant's placement.
// A start resolves the target's config against its provider's schema, as
// a create does, and needs the placement ready; the controller does the
// rest.
func (s *Service) MoveTenant(ctx context.Context, m MoveRequest) (*tenant.Tenant, error) {
	if m.Kind == tenant.MoveStart {
		if m.Plan != nil && m.ComputeConfig == nil {
			m.ComputeConfig = json.RawMessage(`{}`)
		}
		if err := RequireObject(m.ComputeConfig, "/compute_config"); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		cur, err := s.changeable(ctx, m.Tenant, m.Expect, m.Seen)
		if err != nil {
			return nil, err
		}
		action := &tenant.MoveAction{Kind: m.Kind, Placement: m.Placement, Hold: m.Hold}
		if m.Kind == tenant.MoveStart {
			if action.Provider, action.ComputeConfig, action.Plan, err = s.resolveTarget(ctx, cur, m); err != nil {
				return nil, err
			}
		}
		updated, err := s.tenants.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, Move: action, Actor: m.Actor})
		if retry, err := settleWrite(err, m.Expect, attempt); retry {
			continue
		} else if err != nil {
			return nil, err
		}
		return updated, nil
	}
}

// resolveTarget resolves the config of the target of a move of cur's
// placement, as the target's workload will be asked to run it (over the
// layer of the plan the move names, if any, whose version it resolves).
func (s *Service) resolveTarget(ctx context.Context, cur *tenant.Tenant, m MoveRequest) (string, json.RawMessage, *tenant.PlanRef, error) {
	var p *tenant.Placement
	switch {
	case m.Placement != "":
		p = cur.Placement(m.Placement)
	case len(cur.Placements) == 1:
		p = &cur.Placements[0]
	default:
		return "", nil, nil, refuse(KindMalformed, wire.CodeInvalidBody,
			fmt.Sprintf("tenant %s has several placements: name the one to move", cur.Name),
			Field{Pointer: "/placement", Message: "is required for a tenant with several placements"})
	}
	if p == nil {
		return "", nil, nil, refuse(KindNotFound, wire.CodeNotFound, fmt.Sprintf("tenant %s has no placement %q", cur.Name, m.Placement),
			Field{Pointer: "/placement", Message: "names no placement of the tenant"})
	}
	req := compute.ResolveRequest{
		TenantID: p.WorkloadID, TenantName: p.WorkloadName, Generation: cur.Generation,
		ComputeConfig: m.ComputeConfig, Previous: p.ComputeConfig, Labels: cur.Labels, Annotations: cur.Annotations,
	}
	var ref *tenant.PlanRef
	if m.Plan != nil {
		if m.Plan.Pinned {
			return "", nil, nil, invalidPlan("a move's target follows its plan, unpinned", "/plan/pinned", "cannot be set on a move; pin the tenant once it moved")
		}
		r, plan, version, err := s.planLayer(ctx, m.Plan, "")
		if err != nil {
			return "", nil, nil, err
		}
		if err := checkProviderChoice(m.ComputeConfig, plan); err != nil {
			return "", nil, nil, err
		}
		ref, req.Plan, req.Provider = r, version.Config, plan.Provider
	}
	res, err := s.compute.Resolve(ctx, req)
	if err != nil {
		return "", nil, nil, err
	}
	return res.Spec.ProviderType, res.Config, ref, nil
}
