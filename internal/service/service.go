package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// Compute is what the use cases need of compute.Manager.
type Compute interface {
	Resolve(ctx context.Context, req compute.ResolveRequest) (*compute.Resolution, error)
	CheckPlanConfig(provider string, config json.RawMessage) error
	Registry() *compute.Registry
	DefaultProvider() string
}

var _ Compute = (*compute.Manager)(nil)

// Options configure the use cases.
type Options struct {
	Tenants tenant.Store
	// Fleet stores plans and rollouts. Without it, the use cases of plans
	// and rollouts, and a tenant that names a plan, are refused
	// (KindUnsupported, fleet_unavailable).
	Fleet   fleet.Store
	Compute Compute
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service holds the use cases: Tenants, Plans and Rollouts.
type Service struct {
	tenants   tenant.Store
	idem      tenant.IdempotencyStore
	fleet     fleet.Store
	fleetIdem fleet.IdempotencyStore
	compute   Compute
	now       func() time.Time
}

// New returns the use cases over opts' stores.
func New(opts Options) (*Service, error) {
	if opts.Tenants == nil || opts.Compute == nil {
		return nil, errors.New("service: the use cases need a tenant store and compute")
	}
	s := &Service{tenants: opts.Tenants, fleet: opts.Fleet, compute: opts.Compute, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	var ok bool
	if s.idem, ok = opts.Tenants.(tenant.IdempotencyStore); !ok {
		return nil, fmt.Errorf("service: the store %T cannot keep idempotent responses", opts.Tenants)
	}
	if opts.Fleet != nil {
		if s.fleetIdem, ok = opts.Fleet.(fleet.IdempotencyStore); !ok {
			return nil, fmt.Errorf("service: the fleet store %T cannot keep idempotent responses", opts.Fleet)
		}
	}
	return s, nil
}

// Keep makes a write idempotent: the store keeps the response Respond
// makes of what it wrote for the reservation Reservation of an
// Idempotency-Key, in the write's transaction, so that the write and the
// answer a retry gets are both stored or neither is. A write with a nil
// Keep keeps nothing.
type Keep[T any] struct {
	Reservation tenant.IdempotentResponse
	Respond     func(T) (tenant.IdempotentResponse, error)
}

// NeedFleet refuses a use case that needs plans on a server without them.
func (s *Service) NeedFleet() error {
	if s.fleet == nil {
		return refuse(KindUnsupported, wire.CodeFleetUnavailable,
			"this server keeps no plans or rollouts (it was started without a fleet store); use a landlord built and configured with one")
	}
	return nil
}
