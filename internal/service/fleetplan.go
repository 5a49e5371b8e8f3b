package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// FleetPlan is what a rollout would do, tenant by tenant: the fleet
// planner's answer, which StartRollout stores as a rollout.
type FleetPlan struct {
	Spec fleet.Spec
	Plan *fleet.Plan
	// Selection sorts the plan's followers: the candidates, and those
	// left alone.
	Selection fleet.Selection
	Waves     []fleet.AssignedWave
	// Members are the candidates in wave order, as the plan shows them.
	Members []fleet.Member
	// Tenants are the candidates by id.
	Tenants map[string]*tenant.Tenant
	// Moves are what the rollout would do to each candidate's effective
	// config, by tenant id; filled only when the plan was asked with
	// diffs.
	Moves map[string]Move
	// Diffs are the different changes of the candidates, each once.
	Diffs []Diff
	// InPlace says the plan's provider updates a workload in place.
	InPlace bool
	// Now is when the plan was made.
	Now time.Time
	// stored is Stored's answer, sorted once for the response and the
	// write.
	stored []fleet.Member
}

// Move is what a rollout would do to one tenant's effective config.
type Move struct {
	Diff    string // the ID of its changes in the fleet plan's Diffs
	Changed bool   // some field of it changes
	Same    bool   // the effective config does not change
	// Moved says the tenant moves to another workload (a fleet move).
	Moved bool
}

// Action is what the provider would do to the workload (wire.Action*).
func (mv Move) Action(inPlace bool) string {
	switch {
	case mv.Moved:
		return wire.ActionMove
	case !mv.Changed && mv.Same:
		return wire.ActionNone
	case inPlace:
		return wire.ActionInPlace
	default:
		return wire.ActionReplace
	}
}

// Stored are the members as a rollout stores them: in wave, then tenant
// id, order. The slice is shared: callers must not change it.
func (fp *FleetPlan) Stored() []fleet.Member {
	if fp.stored == nil {
		fp.stored = slices.Clone(fp.Members)
		slices.SortFunc(fp.stored, func(a, b fleet.Member) int {
			return cmp.Or(cmp.Compare(a.Wave, b.Wave), strings.Compare(a.TenantID, b.TenantID))
		})
	}
	return fp.stored
}

// BreaksTenantsError refuses a rollout whose target version does not
// resolve with the compute_config of some of the tenants it would change.
type BreaksTenantsError struct {
	Plan    string
	Version int64
	Tenants []Broken
}

// Broken is a tenant that does not resolve at a rollout's target, and why.
type Broken struct {
	Tenant *tenant.Tenant
	Err    error
}

func (e *BreaksTenantsError) Error() string {
	names := make([]string, len(e.Tenants))
	for i, b := range e.Tenants {
		names[i] = b.Tenant.Name
	}
	return fmt.Sprintf("version %d of plan %s does not validate with the compute_config of %d tenants (%s); change their overrides, or publish a version that suits them, then start the rollout; nothing was started",
		e.Version, e.Plan, len(names), strings.Join(names, ", "))
}

// PlanRollout is the fleet planner: it reads a rollout request and answers
// what the rollout would do, tenant by tenant. Every tenant it would
// change must resolve at the target version, with its own overrides: one
// that does not makes it a *BreaksTenantsError naming each. With diff, it
// also resolves each at its current version and keeps what changes.
func (s *Service) PlanRollout(ctx context.Context, req RolloutRequest, diff bool) (*FleetPlan, error) {
	if err := s.NeedFleet(); err != nil {
		return nil, err
	}
	spec, plan, target, err := s.rolloutSpec(ctx, req)
	if err != nil {
		return nil, err
	}
	tenants, err := tenant.ListAll(ctx, s.tenants, tenant.ListOptions{Plan: plan.Name})
	if err != nil {
		return nil, err
	}
	fp := &FleetPlan{Spec: spec, Plan: plan, Selection: fleet.Select(spec, tenants), Now: s.now()}
	fp.Waves, fp.Members = fleet.Assign(spec, fp.Selection.Candidates)
	fp.Tenants = make(map[string]*tenant.Tenant, len(fp.Selection.Candidates))
	for _, t := range fp.Selection.Candidates {
		fp.Tenants[t.ID] = t
	}
	inWaves := make([]*tenant.Tenant, len(fp.Members))
	for i, m := range fp.Members {
		inWaves[i] = fp.Tenants[m.TenantID]
	}
	var diffs *planDiffs
	if diff {
		diffs = newPlanDiffs()
	}
	if fp.Moves, err = s.resolveMoves(ctx, spec, plan, target, inWaves, diffs); err != nil {
		return nil, err
	}
	if diffs != nil {
		fp.Diffs = diffs.list
	}
	if d, err := s.compute.Registry().Describe(plan.Provider); err == nil && d.Capabilities != nil {
		fp.InPlace = d.Capabilities.InPlaceUpdate
	}
	return fp, nil
}

// StartRollout stores the rollout fp plans, as actor's. A plan that has
// a rollout running is refused (KindConflict, rollout_active). keep, if
// set, keeps the response to an idempotent request with the rollout.
func (s *Service) StartRollout(ctx context.Context, fp *FleetPlan, actor string, keep *Keep[*fleet.Rollout]) (*fleet.Rollout, error) {
	members := fp.Stored()
	ro := &fleet.Rollout{Spec: fp.Spec, Waves: fp.Waves, CreatedBy: actor}
	var err error
	if keep != nil {
		ro, err = s.fleetIdem.CreateRolloutIdempotent(ctx, ro, members, keep.Reservation, keep.Respond)
	} else {
		ro, err = s.fleet.CreateRollout(ctx, ro, members)
	}
	if errors.Is(err, fleet.ErrConflict) {
		return nil, s.rolloutActive(ctx, fp.Plan.Name)
	}
	return ro, err
}

// resolveMoves resolves each candidate's effective config at the target
// version (for a fleet move, on the target plan's provider, with the
// tenant's own config as the move takes it: fleet.MovedConfig); with
// diffs, also at its current version, and compares them, keeping the
// changes in diffs. A candidate that does not resolve at the target makes
// it a *BreaksTenantsError naming every such tenant.
//
// What it keeps of a candidate is bounded whatever the size of the plan's
// configs: the resolved configs and their full changes are dropped once
// compared, and only the first changes of each different diff, cut short,
// are kept (planDiffs), so that a 1 MB version and its 109 tenants no
// longer made a 142 MB answer and a heap of a gigabyte.
func (s *Service) resolveMoves(ctx context.Context, spec fleet.Spec, plan *fleet.Plan, target *fleet.Version, candidates []*tenant.Tenant, diffs *planDiffs) (map[string]Move, error) {
	versions := map[int64]json.RawMessage{}
	if !spec.Moves() {
		versions[target.Version] = target.Config
	}
	out := map[string]Move{}
	broken := &BreaksTenantsError{Plan: spec.Target().Name, Version: target.Version}
	for _, t := range candidates {
		placements := t.Declared()
		if len(placements) == 0 { // a tenant made by hand: its one placement
			placements = []tenant.PlacementSpec{{Name: tenant.DefaultPlacement, Provider: t.Provider, ComputeConfig: t.ComputeConfig}}
		}
		if spec.Moves() && len(placements) > 1 {
			broken.Tenants = append(broken.Tenants, Broken{Tenant: t, Err: fmt.Errorf("%w: tenant %s has placements %s: a fleet move moves a tenant of one placement; move its placements one at a time (landlord move --placement)",
				tenant.ErrMoving, t.Name, strings.Join(t.PlacementNames(), ", "))})
			continue
		}
		cur := versions[t.Plan.Version]
		if _, ok := versions[t.Plan.Version]; !ok && diffs != nil {
			v, err := s.fleet.GetVersion(ctx, plan.Name, t.Plan.Version)
			if err != nil && !errors.Is(err, fleet.ErrNotFound) {
				return nil, err
			}
			if v != nil {
				cur = v.Config
			}
			versions[t.Plan.Version] = cur
		}
		var (
			changes  []provider.Change
			same     = true
			resolved = true
		)
		for _, p := range placements {
			id, name, resourceIDs := t.ID, t.Name, t.ResourceIDs
			if q := t.Placement(p.Name); q != nil {
				id, name, resourceIDs = q.WorkloadID, q.WorkloadName, q.ResourceIDs
			}
			toLayer, err := fleet.Layer(target.Config, p.Name)
			if err != nil {
				return nil, err
			}
			req := compute.ResolveRequest{TenantID: id, TenantName: name, Generation: t.Generation + 1, ComputeConfig: p.ComputeConfig,
				Plan: toLayer, Labels: t.Labels, Annotations: t.Annotations, Provider: p.Provider, ResourceIDs: resourceIDs}
			if spec.Moves() {
				req.ComputeConfig, req.Provider, req.ResourceIDs, req.Generation = fleet.MovedConfig(p.ComputeConfig), spec.ToProvider, nil, t.Generation
			}
			to, err := s.compute.Resolve(ctx, req)
			if err != nil {
				broken.Tenants = append(broken.Tenants, Broken{Tenant: t, Err: err})
				resolved = false
				break
			}
			if diffs == nil {
				continue
			}
			req.ComputeConfig, req.Provider, req.ResourceIDs, req.Generation = p.ComputeConfig, p.Provider, resourceIDs, t.Generation
			if req.Plan, err = fleet.Layer(cur, p.Name); err != nil {
				return nil, err
			}
			from, err := s.compute.Resolve(ctx, req)
			var these []provider.Change
			if err != nil {
				// Its current config no longer resolves (the operator's
				// defaults changed): everything may change.
				these, same = []provider.Change{{Field: "compute_config", From: "(does not resolve now)", To: "(resolves)"}}, false
			} else {
				these = provider.Diff(from.Spec, to.Spec)
				same = same && from.Spec.ConfigHash == to.Spec.ConfigHash
			}
			if len(placements) > 1 {
				for i := range these {
					these[i].Field = "placements/" + p.Name + ": " + these[i].Field
				}
			}
			changes = append(changes, these...)
		}
		switch {
		case !resolved:
		case diffs == nil:
			if spec.Moves() {
				out[t.ID] = Move{Moved: true}
			}
		default:
			out[t.ID] = Move{Diff: diffs.add(changes), Changed: len(changes) > 0, Same: same, Moved: spec.Moves()}
		}
	}
	if len(broken.Tenants) > 0 {
		return nil, broken
	}
	return out, nil
}

// rolloutActive is the refusal of a rollout of a plan that has an active
// rollout already.
func (s *Service) rolloutActive(ctx context.Context, plan string) error {
	detail := fmt.Sprintf("plan %s has a rollout that has not finished; let it finish, or abort it, first", plan)
	if active, err := s.fleet.ListRollouts(ctx, fleet.RolloutListOptions{Plan: plan, Active: true}); err == nil && len(active) > 0 {
		detail = fmt.Sprintf("plan %s has rollout %s, which is %s; let it finish, or abort it (POST /v1/rollouts/%s/abort), first",
			plan, active[0].ID, active[0].State, active[0].ID)
	}
	return refuse(KindConflict, wire.CodeRolloutActive, detail)
}
