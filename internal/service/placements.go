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
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// PlacementRequest is one placement as a create or a change declares it:
// a name and a compute_config, whose compute_provider member chooses its
// provider as a tenant's does.
type PlacementRequest struct {
	Name          string
	ComputeConfig json.RawMessage
}

// requestsOf returns t's placements (those not being removed) as a change
// that keeps them declares them.
func requestsOf(t *tenant.Tenant) []PlacementRequest {
	var out []PlacementRequest
	for _, p := range t.Placements {
		if !p.Removed {
			out = append(out, PlacementRequest{Name: p.Name, ComputeConfig: p.ComputeConfig})
		}
	}
	return out
}

// checkDeclaration refuses a request that declares a tenant both ways.
func checkDeclaration(config json.RawMessage, placements []PlacementRequest) error {
	if placements == nil {
		return nil
	}
	if config != nil {
		return refuse(KindMalformed, wire.CodeInvalidBody, "a tenant is declared with compute_config or with placements, not both",
			Field{Pointer: "/placements", Message: "cannot be given with compute_config"})
	}
	if len(placements) == 0 {
		return refuse(KindMalformed, wire.CodeInvalidBody, "a tenant has at least one placement",
			Field{Pointer: "/placements", Message: "must not be empty"})
	}
	return nil
}

// followed is the plan a tenant's placements follow: its provider, and
// the config of the version, whose layer for each placement fleet.Layer
// makes.
type followed struct {
	name, provider string
	config         json.RawMessage
}

// resolvePlacements checks and resolves the placements a request declares
// for t (at generation), each against its provider's schema as a
// tenant's config is (compute.Manager.Resolve), over its layer of the plan
// the tenant follows, if any: a placement cur already has keeps its
// provider, a new one on a plan takes the plan's, and secrets sent back
// redacted keep their stored values. It returns the placements to store
// and their resolutions. Problems are reported at /placements/{i}/….
func (s *Service) resolvePlacements(ctx context.Context, t, cur *tenant.Tenant, generation int64, reqs []PlacementRequest, plan *followed) ([]tenant.PlacementSpec, []*compute.Resolution, error) {
	var bad []Field
	for i, p := range reqs {
		at := fmt.Sprintf("/placements/%d", i)
		if err := tenant.ValidatePlacementName(p.Name); err != nil {
			bad = append(bad, Field{Pointer: at + "/name", Message: strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": ")})
		}
		if err := RequireObject(p.ComputeConfig, at+"/compute_config"); err != nil {
			var refused *Error
			if !errors.As(err, &refused) {
				return nil, nil, err
			}
			bad = append(bad, refused.Fields...)
		}
	}
	if len(bad) > 0 {
		return nil, nil, refuse(KindMalformed, wire.CodeInvalidBody, "a placement is not well formed", bad...)
	}
	specs := make([]tenant.PlacementSpec, len(reqs))
	resolutions := make([]*compute.Resolution, len(reqs))
	for i, p := range reqs {
		id, name := tenant.Workload(t.ID, t.Name, p.Name)
		var recorded string
		var previous json.RawMessage
		if cur != nil {
			if had := cur.Placement(p.Name); had != nil {
				id, name, recorded, previous = had.WorkloadID, had.WorkloadName, had.Provider, had.ComputeConfig
			}
		}
		var layer json.RawMessage
		if plan != nil {
			if recorded != "" && recorded != plan.provider {
				return nil, nil, invalidPlan(fmt.Sprintf("plan %s is for provider %s; placement %s runs on %s", plan.name, plan.provider, p.Name, recorded),
					"/plan/name", fmt.Sprintf("is a plan for provider %s; placement %s runs on %s, and every placement of a tenant on a plan runs on its provider", plan.provider, p.Name, recorded))
			}
			recorded = plan.provider
			var err error
			if layer, err = fleet.Layer(plan.config, p.Name); err != nil {
				return nil, nil, err
			}
		}
		res, err := s.compute.Resolve(ctx, compute.ResolveRequest{
			TenantID: id, TenantName: name, Generation: generation,
			ComputeConfig: p.ComputeConfig, Plan: layer, Previous: previous,
			Labels: t.Labels, Annotations: t.Annotations, Provider: recorded,
		})
		if err != nil {
			return nil, nil, atPlacement(i, err)
		}
		specs[i] = tenant.PlacementSpec{Name: p.Name, Provider: res.Spec.ProviderType, ComputeConfig: res.Config}
		resolutions[i] = res
	}
	return specs, resolutions, nil
}

// atPlacement is err, a refusal of the compute_config of placement i,
// with its fields at that placement's pointers rather than at the
// tenant's compute_config.
func atPlacement(i int, err error) error {
	prefix := fmt.Sprintf("/placements/%d", i)
	var nf *compute.ProviderNotFoundError
	switch {
	case errors.As(err, &nf):
		at := nf.Pointer()
		if at == "" {
			at = "/compute_config/" + wire.SelectionKey
		}
		if strings.HasPrefix(at, "/compute_config") {
			at = prefix + at
		}
		return reword(err, "", Field{Pointer: at, Message: nf.Error()})
	case errors.Is(err, provider.ErrInvalidSpec):
		var fields []Field
		for _, v := range violation.Of(err) {
			fields = append(fields, Field{Pointer: prefix + "/compute_config" + v.Pointer, Message: v.Message})
		}
		return reword(err, fmt.Sprintf("the compute_config of placement %d is not valid for its provider", i), fields...)
	}
	return err
}
