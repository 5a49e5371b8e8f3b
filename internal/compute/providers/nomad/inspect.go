package nomad

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Inspect reads the tenant's job, its allocations and its Variables live,
// and compares the job with the one landlord would register for spec (by
// Nomad's own plan, so that what Nomad fills in is never drift) and the
// Variables with spec's secret values (by keyed digests: no value is kept
// or shown). A stopped job is drift at job/status. With a count range the
// count is not compared while it stays within the range. It writes
// nothing: a plan changes no state.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.Inspection, error) {
		return nil, fmt.Errorf("nomad: inspect tenant %s: %w", spec.TenantID, err)
	}
	c, jobID, err := p.jobOfRef(provider.TenantRef{ID: spec.TenantID, Name: spec.TenantName, Provider: Name, ResourceIDs: spec.ResourceIDs})
	if err != nil {
		return fail(err)
	}
	job, err := p.ownJob(ctx, c, spec.TenantID, jobID)
	if err != nil {
		return fail(err)
	}
	st, err := p.statusOf(ctx, c, spec.TenantID, jobID, job)
	if err != nil {
		return nil, err
	}
	d := p.desiredOf(spec, jobID)
	p.keepCount(d, job, optionsOf(spec).count())
	jobDrift, varDrift, err := p.compare(ctx, c, d, job)
	if err != nil {
		return fail(err)
	}
	var all provider.DriftCollector
	for _, dr := range append(jobDrift, varDrift...) {
		all.Add(dr)
	}
	return &provider.Inspection{Status: st, Drift: all.Drift()}, nil
}

// compare returns the differences between the live job and d's (a stopped
// job among them), and between the job's Variables and d's secret values.
func (p *Provider) compare(ctx context.Context, c *api.Client, d *desired, live *api.Job) (job, vars []provider.Drift, err error) {
	if stopped(live) {
		job = append(job, provider.Drift{Path: "job/status", Kind: provider.DriftState, Expected: "running", Found: "stopped"})
	}
	planned, err := p.jobDrift(ctx, c, d, live)
	if err != nil {
		return nil, nil, err
	}
	job = append(job, planned...)
	if vars, err = p.variablesDrift(ctx, c, d); err != nil {
		return nil, nil, err
	}
	return job, vars, nil
}

// keepCount gives d, when the spec's count is a range, the live job's
// count brought within the range: the count is the scaler's.
func (p *Provider) keepCount(d *desired, live *api.Job, count groupCount) {
	if !count.ranged || live == nil {
		return
	}
	want, got := groupOf(d.job, group), groupOf(live, group)
	if want == nil || got == nil || got.Count == nil {
		return
	}
	want.Count = new(count.keep(*got.Count))
}

// planned is the drift a plan found, and what it was computed from: the
// live job as of its JobModifyIndex, and the spec's fingerprint. The same
// two give the same diff, so Inspect at rest plans nothing.
type planned struct {
	jobIndex uint64
	hash     string
	drift    []provider.Drift
}

// jobDrift plans d's job over the live one and turns the plan's diff into
// drift. Both sides of a plan's diff are canonicalised by Nomad, so that
// defaults are not drift. The generation is bookkeeping, not drift: the
// job planned carries the live one.
func (p *Provider) jobDrift(ctx context.Context, c *api.Client, d *desired, live *api.Job) ([]provider.Drift, error) {
	key := deref(live.Namespace) + "/" + d.id
	index := deref(live.JobModifyIndex)
	if v, ok := p.plans.Load(key); ok {
		if pl := v.(planned); pl.jobIndex == index && pl.hash == d.hash {
			return pl.drift, nil
		}
	}
	job := *d.job
	job.Meta = maps.Clone(d.job.Meta)
	job.Meta[metaGeneration] = live.Meta[metaGeneration]
	job.Namespace = live.Namespace
	plan, _, err := c.Jobs().Plan(&job, true, write(ctx))
	if err != nil {
		return nil, apiError("plan job "+d.id+" to compare it with the spec", err)
	}
	drift := p.driftOfPlan(plan.Diff, d, live)
	p.plans.Store(key, planned{jobIndex: index, hash: d.hash, drift: drift})
	return drift, nil
}
