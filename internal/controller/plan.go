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

// planConfig returns the config of the plan version the tenant follows,
// nil when it follows none. A version that does not exist is a permanent
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
	return v.Config, nil
}
