package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// NewTenant is what a create asks for.
type NewTenant struct {
	Name string
	// ComputeConfig declares a tenant of one placement; Placements, one
	// of one or more named placements. A create has one or the other.
	ComputeConfig     json.RawMessage
	Placements        []PlacementRequest
	Labels            map[string]string
	Annotations       map[string]string
	MaintenanceWindow *tenant.Window
	// Plan, if set, is the plan to follow (see ChoosePlan); Version 0 is
	// its current one.
	Plan *tenant.PlanRef
	// Seen, if set, is told of the tenant about to be stored, its id
	// drawn (for the log line of the request, which names it whether the
	// write succeeds or not).
	Seen func(*tenant.Tenant)
}

// Created is a tenant a create stored, or, for a dry run, would store.
type Created struct {
	Tenant *tenant.Tenant
	// Resolution is the tenant's effective config (its first
	// placement's), and PlanConfig its plan layer (nil without a plan).
	Resolution *compute.Resolution
	PlanConfig json.RawMessage
	// Resolutions are those of every placement, in order.
	Resolutions []*compute.Resolution
}

// CreateTenant checks a new tenant (its name, window and plan, and its
// config resolved with the plan's and the operator's layers against its
// provider's schema) and stores it as actor's. A dry run checks all that
// Create would, that the name is free among the tenants now, and stores
// nothing. keep, if set, keeps the response to an idempotent request with
// the tenant.
func (s *Service) CreateTenant(ctx context.Context, in NewTenant, actor string, dryRun bool, keep *Keep[*tenant.Tenant]) (*Created, error) {
	if err := checkDeclaration(in.ComputeConfig, in.Placements); err != nil {
		return nil, err
	}
	if in.Placements == nil {
		if err := RequireObject(in.ComputeConfig, "/compute_config"); err != nil {
			return nil, err
		}
	}
	if err := tenant.ValidateName(in.Name); err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidName, "the name is not valid",
			Field{Pointer: "/name", Message: strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": ")})
	}
	t := &tenant.Tenant{ID: tenant.NewID(), Name: in.Name, Labels: in.Labels, Annotations: in.Annotations,
		MaintenanceWindow: in.MaintenanceWindow}
	if err := tenant.ValidateWindow(t.MaintenanceWindow); err != nil {
		return nil, err
	}
	out := &Created{}
	var (
		provider string
		follows  *followed
	)
	if in.Plan != nil {
		ref, err := ChoosePlan(nil, in.Plan)
		if err != nil {
			return nil, err
		}
		ref, plan, version, err := s.planLayer(ctx, ref, "")
		if err != nil {
			return nil, err
		}
		if err := checkProviderChoice(in.ComputeConfig, plan); err != nil {
			return nil, err
		}
		t.Plan, provider = ref, plan.Provider
		follows = &followed{name: plan.Name, provider: plan.Provider, config: version.Config}
		if out.PlanConfig, err = fleet.Layer(version.Config, tenant.DefaultPlacement); err != nil {
			return nil, err
		}
	}
	if in.Placements != nil {
		specs, resolutions, err := s.resolvePlacements(ctx, t, nil, 1, in.Placements, follows)
		if err != nil {
			return nil, err
		}
		for _, p := range specs {
			t.Placements = append(t.Placements, tenant.Placement{Name: p.Name, Provider: p.Provider, ComputeConfig: p.ComputeConfig})
		}
		out.Resolution, out.Resolutions = resolutions[0], resolutions
		if follows != nil { // the plan layer of the first placement, whose effective config is the tenant's
			if out.PlanConfig, err = fleet.Layer(follows.config, specs[0].Name); err != nil {
				return nil, err
			}
		}
	} else {
		res, err := s.compute.Resolve(ctx, compute.ResolveRequest{
			TenantID: t.ID, TenantName: t.Name, Generation: 1,
			ComputeConfig: in.ComputeConfig, Plan: out.PlanConfig, Labels: t.Labels, Annotations: t.Annotations, Provider: provider,
		})
		if err != nil {
			return nil, err
		}
		t.Provider, t.ComputeConfig, out.Resolution, out.Resolutions = res.Spec.ProviderType, res.Config, res, []*compute.Resolution{res}
	}
	var err error
	if dryRun {
		if _, err := s.tenants.Get(ctx, t.Name, tenant.GetOptions{}); err == nil {
			return nil, fmt.Errorf("%w: %q", tenant.ErrNameTaken, t.Name)
		} else if !errors.Is(err, tenant.ErrNotFound) {
			return nil, err
		}
		// Everything Create would check, nothing stored.
		if out.Tenant, _, err = tenant.NewTenant(t, actor, s.now()); err != nil {
			return nil, err
		}
		return out, nil
	}
	if in.Seen != nil {
		in.Seen(t)
	}
	if keep != nil {
		out.Tenant, err = s.idem.CreateIdempotent(ctx, t, actor, keep.Reservation, keep.Respond)
	} else {
		out.Tenant, err = s.tenants.Create(ctx, t, actor)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Desired is a tenant's desired state as a change makes it from the
// current one; a Plan whose Version is 0 is to get the plan's current
// version.
type Desired struct {
	// ComputeConfig is the config of a tenant of one placement, when
	// Placements is nil; Placements, all of a tenant's placements as they
	// are to be.
	ComputeConfig     json.RawMessage
	Placements        []PlacementRequest
	Labels            map[string]string
	Annotations       map[string]string
	Plan              *tenant.PlanRef
	MaintenanceWindow *tenant.Window
}

// Change is a change of a tenant's desired state.
type Change struct {
	// Tenant is the tenant's id or name.
	Tenant string
	// Expect are the versions the change accepts; none accepts any.
	Expect Versions
	Actor  string
	// Seen, if set, is told of the tenant as read, before any check (for
	// the log line of the request).
	Seen func(*tenant.Tenant)
	// Next makes the desired state from the current tenant.
	Next func(cur *tenant.Tenant) (Desired, error)
	// DryRun checks all that the change would (the expected versions
	// too) and stores nothing: no write, no event.
	DryRun bool
}

// Changed is a tenant a change stored, or, for a dry run, would store.
type Changed struct {
	Tenant *tenant.Tenant
	// Version is the tenant's version as stored: Tenant's, or for a dry
	// run the version the change was checked against (what the real
	// change's expected versions are to name).
	Version int64
	// The fields below are set for a dry run. Resolution is the
	// effective config of the tenant's first placement (the one its
	// compute_config shows), nil when that placement is being removed;
	// PlanConfig is its plan layer (nil without a plan).
	Resolution *compute.Resolution
	PlanConfig json.RawMessage
	// Resolutions are those of the tenant's placements, in order; nil for
	// a placement being removed.
	Resolutions []*compute.Resolution
}

// ChangeTenant applies a new desired state made from the current tenant.
// With versions expected, a tenant that changed meanwhile is a
// *StaleError; without, a concurrent change is made again on the new
// state a few times, then fails with tenant.ErrConflict. Every change resolves with the
// plan layer, so that an override that no longer validates with the plan
// is refused here; secrets sent back as they were shown ("[redacted]")
// keep their stored values. A dry run makes the change's checks on the
// tenant as read, and applies the change with the store's rules
// (tenant.ApplyDesired) without storing it: a plan deleted between its
// check here and the write is all it cannot see.
func (s *Service) ChangeTenant(ctx context.Context, c Change) (*Changed, error) {
	for attempt := 0; ; attempt++ {
		cur, err := s.changeable(ctx, c.Tenant, c.Expect, c.Seen)
		if err != nil {
			return nil, err
		}
		req, err := c.Next(cur)
		if err != nil {
			return nil, err
		}
		if err := tenant.ValidateWindow(req.MaintenanceWindow); err != nil {
			return nil, err
		}
		resolved, err := s.desiredChange(ctx, cur, req)
		if err != nil {
			return nil, err
		}
		resolved.change.Actor = c.Actor
		if c.DryRun {
			next, _, err := tenant.ApplyDesired(cur, resolved.change, s.now())
			if err != nil {
				return nil, err
			}
			return resolved.dryRun(next, cur.Version)
		}
		updated, err := s.tenants.UpdateDesired(ctx, cur.ID, resolved.change)
		if retry, err := settleWrite(err, c.Expect, attempt); retry {
			continue
		} else if err != nil {
			return nil, err
		}
		// The write is done: nothing after it may fail the request.
		return &Changed{Tenant: updated, Version: updated.Version}, nil
	}
}

// resolvedChange is a change to store with the effective configs it was
// resolved into.
type resolvedChange struct {
	change tenant.DesiredChange
	// resolutions are the effective configs of the placements the change
	// declares, by name.
	resolutions map[string]*compute.Resolution
	// plan is the config of the plan version the tenant is to follow, nil
	// for none.
	plan json.RawMessage
}

// dryRun is what a dry run of the change answers: t, the tenant as the
// change would make it, with its effective configs, stored at version.
func (r *resolvedChange) dryRun(t *tenant.Tenant, version int64) (*Changed, error) {
	out := &Changed{Tenant: t, Version: version, Resolutions: make([]*compute.Resolution, len(t.Placements))}
	for i, p := range t.Placements {
		if !p.Removed {
			out.Resolutions[i] = r.resolutions[p.Name]
		}
	}
	if len(t.Placements) == 0 || out.Resolutions[0] == nil {
		return out, nil
	}
	out.Resolution = out.Resolutions[0]
	if r.plan != nil {
		var err error
		if out.PlanConfig, err = fleet.Layer(r.plan, t.Placements[0].Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// desiredChange resolves req, the desired state a change makes of cur,
// into the change to store: a tenant's compute_config with its plan layer,
// or its placements, each against its provider.
func (s *Service) desiredChange(ctx context.Context, cur *tenant.Tenant, req Desired) (*resolvedChange, error) {
	out := &resolvedChange{change: tenant.DesiredChange{Version: cur.Version, Labels: req.Labels, Annotations: req.Annotations,
		MaintenanceWindow: req.MaintenanceWindow}}
	// A tenant of one placement (one that moved, say) takes a
	// compute_config as every tenant did before placements.
	if req.Placements == nil && len(cur.Placements) > 1 {
		return nil, refuse(KindInvalid, wire.CodeInvalidBody,
			fmt.Sprintf("tenant %s has placements %s: a change declares them (placements), not a compute_config", cur.Name, strings.Join(cur.PlacementNames(), ", ")),
			Field{Pointer: "/placements", Message: "is required for a tenant with placements"})
	}
	if req.Placements != nil {
		if err := checkDeclaration(nil, req.Placements); err != nil {
			return nil, err
		}
		var follows *followed
		if req.Plan != nil {
			// Each placement's provider is checked against the plan's.
			ref, plan, version, err := s.planLayer(ctx, req.Plan, "")
			if err != nil {
				return nil, err
			}
			req.Plan, follows = ref, &followed{name: plan.Name, provider: plan.Provider, config: version.Config}
			out.plan = version.Config
		}
		next := *cur
		next.Labels, next.Annotations = req.Labels, req.Annotations
		specs, resolutions, err := s.resolvePlacements(ctx, &next, cur, cur.Generation+1, req.Placements, follows)
		if err != nil {
			return nil, err
		}
		out.change.Placements, out.change.Plan = specs, req.Plan
		out.resolutions = make(map[string]*compute.Resolution, len(specs))
		for i, p := range specs {
			out.resolutions[p.Name] = resolutions[i]
		}
		return out, nil
	}
	var planConfig json.RawMessage
	if req.Plan != nil {
		ref, plan, version, err := s.planLayer(ctx, req.Plan, cur.Provider)
		if err != nil {
			return nil, err
		}
		if err := checkProviderChoice(req.ComputeConfig, plan); err != nil {
			return nil, err
		}
		if planConfig, err = fleet.Layer(version.Config, cur.Placements[0].Name); err != nil {
			return nil, err
		}
		req.Plan, out.plan = ref, version.Config
	}
	res, err := s.compute.Resolve(ctx, compute.ResolveRequest{
		TenantID: cur.Placements[0].WorkloadID, TenantName: cur.Placements[0].WorkloadName, Generation: cur.Generation + 1,
		ComputeConfig: req.ComputeConfig, Plan: planConfig, Previous: cur.ComputeConfig,
		Labels: req.Labels, Annotations: req.Annotations, Provider: cur.Provider,
	})
	if err != nil {
		return nil, err
	}
	out.change.ComputeConfig, out.change.Plan = res.Config, req.Plan
	out.resolutions = map[string]*compute.Resolution{cur.Placements[0].Name: res}
	return out, nil
}

// settleWrite words the error of a change's write in attempt: a tenant
// changed meanwhile (ErrConflict) is a *StaleError when the caller
// expected versions, else the change is to be made again (retry), at most
// maxRetries times.
func settleWrite(err error, expect Versions, attempt int) (retry bool, out error) {
	switch {
	case errors.Is(err, tenant.ErrConflict) && !expect.Any():
		return false, &StaleError{What: "tenant"}
	case errors.Is(err, tenant.ErrConflict) && attempt < maxRetries:
		return true, nil
	}
	return false, err
}

// changeable reads a tenant that a change may change: one of the expected
// versions, not being deleted, on a provider this server has.
func (s *Service) changeable(ctx context.Context, ref string, expect Versions, seen func(*tenant.Tenant)) (*tenant.Tenant, error) {
	cur, err := s.tenants.Get(ctx, ref, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		return nil, err
	}
	if seen != nil {
		seen(cur)
	}
	if !expect.Match(cur.Version) {
		return nil, &StaleError{What: "tenant", Current: cur.Version}
	}
	if cur.DeletionRequestedAt != nil || cur.DeletedAt != nil {
		return nil, refuse(KindConflict, wire.CodeTenantDeleting, "the tenant is being deleted, or is deleted, and cannot be changed")
	}
	for _, name := range cur.Providers() {
		if _, err := s.compute.Registry().Get(name); err != nil {
			return nil, reword(err, fmt.Sprintf("the tenant's provider %s is not enabled on this server; enable it to change the tenant", name))
		}
	}
	return cur, nil
}

// Deletion is a request to delete a tenant.
type Deletion struct {
	// Tenant is the tenant's id or name.
	Tenant string
	// Expect are the versions the deletion accepts; none accepts any.
	Expect Versions
	Actor  string
	// Forget deletes the record at once and destroys nothing (see
	// ForgetTenant).
	Forget bool
	// Seen, if set, is told of the tenant as read (for the log line of
	// the request).
	Seen func(*tenant.Tenant)
}

// DeleteTenant asks for a tenant's deletion, which the controller carries
// out (or, with Forget, forgets it).
func (s *Service) DeleteTenant(ctx context.Context, d Deletion) (*tenant.Tenant, error) {
	cur, err := s.tenants.Get(ctx, d.Tenant, tenant.GetOptions{})
	if err != nil {
		return nil, err
	}
	if d.Seen != nil {
		d.Seen(cur)
	}
	if !d.Expect.Match(cur.Version) {
		return nil, &StaleError{What: "tenant", Current: cur.Version}
	}
	if d.Forget {
		return s.forgetTenant(ctx, cur, d)
	}
	deleting, err := s.tenants.RequestDeletion(ctx, cur.ID, d.Expect.expected(cur.Version), d.Actor)
	if errors.Is(err, tenant.ErrConflict) && !d.Expect.Any() {
		return nil, &StaleError{What: "tenant"}
	}
	return deleting, err
}
