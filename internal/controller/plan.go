package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// PlanVersions gives the versions of plans (fleet.Store does).
type PlanVersions interface {
	// GetVersion returns a plan's version, or an error wrapping
	// fleet.ErrNotFound.
	GetVersion(ctx context.Context, plan string, version int64) (*fleet.Version, error)
}

// planConfig returns the plan layer of the tenant's placement (t is a
// placement's view, or a tenant of one): the config of the plan version
// the tenant follows, with that placement's fragment (fleet.Layer); nil
// when it follows none. A version that does not exist is a permanent
// failure: no retry brings it back.
func (c *Controller) planConfig(ctx context.Context, t *tenant.Tenant) (json.RawMessage, error) {
	ref := t.Plan
	if ref == nil {
		return nil, nil
	}
	if c.opts.Plans == nil {
		return nil, fmt.Errorf("%w: the tenant follows plan %s, and this controller has no plans", provider.ErrInvalidSpec, ref)
	}
	// Versions never change, but a read per generation is one primary-key
	// lookup beside the provider's calls; a cache would also have to know
	// of a plan deleted and made again under its name.
	v, err := c.opts.Plans.GetVersion(ctx, ref.Name, ref.Version)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, fmt.Errorf("%w: plan %s has no version %d", provider.ErrInvalidSpec, ref.Name, ref.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("controller: read plan %s version %d: %w", ref.Name, ref.Version, err)
	}
	name := tenant.DefaultPlacement
	if len(t.Placements) == 1 {
		name = t.Placements[0].Name
	}
	layer, err := fleet.Layer(v.Config, name)
	if err != nil {
		return nil, fmt.Errorf("%w: plan %s version %d: %w", provider.ErrInvalidSpec, ref.Name, ref.Version, err)
	}
	return layer, nil
}
