package nomad

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// jobOfRef is where a recorded tenant's job is: the job and namespace its
// recorded resource ids name (a client of that namespace, should the
// block name another now), else the job its name makes in the block's
// namespace.
func (p *Provider) jobOfRef(t provider.TenantRef) (*api.Client, string, error) {
	id := t.ResourceIDs[resourceJob]
	if id == "" {
		return p.client, p.jobID(t.Name), nil
	}
	c, err := p.clientIn(t.ResourceIDs[resourceNamespace])
	return c, id, err
}

// clientIn returns a client of namespace ns: landlord's own for the
// block's namespace (or ""), else one made once per namespace, for
// tenants recorded in a namespace the block named before.
func (p *Provider) clientIn(ns string) (*api.Client, error) {
	if ns == "" || ns == p.settings.Namespace {
		return p.client, nil
	}
	if c, ok := p.nsClients.Load(ns); ok {
		return c.(*api.Client), nil
	}
	cfg := p.config
	cfg.Namespace = ns
	c, err := api.NewClient(&cfg)
	if err != nil {
		return nil, fmt.Errorf("nomad: client for namespace %s: %w", ns, err)
	}
	actual, _ := p.nsClients.LoadOrStore(ns, c)
	return actual.(*api.Client), nil
}

// ownJob reads the job and returns it when it is the tenant's; an error
// wrapping ErrTenantNotFound when there is none or it is someone else's.
func (p *Provider) ownJob(ctx context.Context, c *api.Client, tenantID, jobID string) (*api.Job, error) {
	job, err := readJob(ctx, c, jobID)
	switch {
	case err != nil:
		return nil, err
	case job == nil:
		return nil, fmt.Errorf("no job %s: %w", jobID, provider.ErrTenantNotFound)
	case job.Meta[metaTenantID] != tenantID || job.Meta[metaManagedBy] != managedBy:
		return nil, fmt.Errorf("job %s belongs to %s: %w", jobID, ownerOf(job), provider.ErrTenantNotFound)
	}
	p.jobs.Store(tenantID, jobID)
	return job, nil
}

// withMeta asks a job list for the jobs' meta, which its filter reads.
var withMeta = &api.JobListOptions{Fields: &api.JobListFields{Meta: true}}

// locate finds a tenant known only by id: where it was last seen, else by
// its meta among the jobs whose ID has landlord's prefix (one filtered
// list call).
func (p *Provider) locate(ctx context.Context, tenantID string) (string, *api.Job, error) {
	if v, ok := p.jobs.Load(tenantID); ok {
		jobID := v.(string)
		job, err := p.ownJob(ctx, p.client, tenantID, jobID)
		if err == nil {
			return jobID, job, nil
		}
		if !isTenantNotFound(err) {
			return "", nil, err
		}
		p.jobs.Delete(tenantID)
	}
	q := query(ctx)
	q.Prefix = p.prefix
	q.Filter = "Meta." + metaTenantID + " == " + strconv.Quote(tenantID)
	stubs, _, err := p.client.Jobs().ListOptions(withMeta, q)
	if err != nil {
		return "", nil, apiError("list landlord's jobs", err)
	}
	for _, s := range stubs {
		if s.Meta[metaTenantID] != tenantID {
			continue
		}
		job, err := p.ownJob(ctx, p.client, tenantID, s.ID)
		if err == nil {
			return s.ID, job, nil
		}
		if !isTenantNotFound(err) {
			return "", nil, err
		}
	}
	return "", nil, fmt.Errorf("no job with meta %s=%s: %w", metaTenantID, tenantID, provider.ErrTenantNotFound)
}
