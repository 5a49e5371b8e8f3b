package controller

import (
	"context"
	"sync"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// desiredSpec is the tenant's desired state resolved for its provider
// (plan version, defaults, validation), as Provision, Update and Inspect
// take it. The spec of a tenant's current generation is kept in memory, so
// that the drift check of every ready tenant at each resync does not
// resolve its config again; a generation counts every change of the
// desired state, and plan versions never change, so a kept spec is the one
// Resolve would return.
func (c *Controller) desiredSpec(ctx context.Context, t *tenant.Tenant) (*provider.TenantComputeSpec, error) {
	if spec := c.specs.get(t.ID, t.Generation); spec != nil {
		// ResourceIDs are not desired state: they change as the
		// workload is provisioned, without a new generation.
		out := *spec
		out.ResourceIDs = t.ResourceIDs
		return &out, nil
	}
	plan, err := c.planConfig(ctx, t)
	if err != nil {
		return nil, err
	}
	res, err := c.compute.Resolve(ctx, compute.ResolveRequest{
		TenantID: t.ID, TenantName: t.Name, Generation: t.Generation,
		ComputeConfig: t.ComputeConfig, Plan: plan, Labels: t.Labels, Annotations: t.Annotations, Provider: t.Provider,
		ResourceIDs: t.ResourceIDs,
	})
	if err != nil {
		return nil, err
	}
	c.specs.put(t.ID, t.Generation, res.Spec)
	return res.Spec, nil
}

// specCache holds the resolved spec of tenants' current generations, at
// most max of them: past that, an arbitrary one makes room, and costs a
// Resolve when it is needed again. Nothing in it is needed for
// correctness.
type specCache struct {
	mu    sync.Mutex
	max   int
	specs map[string]cachedSpec
}

type cachedSpec struct {
	generation int64
	spec       *provider.TenantComputeSpec
}

func newSpecCache(max int) *specCache {
	return &specCache{max: max, specs: make(map[string]cachedSpec)}
}

// get returns the kept spec of the tenant's generation, or nil.
func (c *specCache) get(id string, generation int64) *provider.TenantComputeSpec {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.specs[id]; ok && e.generation == generation {
		return e.spec
	}
	return nil
}

// put keeps spec as the tenant's, unless a later generation is kept.
func (c *specCache) put(id string, generation int64, spec *provider.TenantComputeSpec) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.specs[id]; ok && e.generation > generation {
		return
	}
	if _, ok := c.specs[id]; !ok && len(c.specs) >= c.max {
		for victim := range c.specs {
			delete(c.specs, victim)
			break
		}
	}
	c.specs[id] = cachedSpec{generation: generation, spec: spec}
}

// forget drops the tenant's spec (it was deleted).
func (c *specCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.specs, id)
}
