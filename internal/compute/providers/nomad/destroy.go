package nomad

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// Destroy deregisters the tenant's job with purge, waits until its
// allocations have stopped, and deletes its Variables. It is idempotent,
// and finishes even when ctx is cancelled (within detachedTimeout).
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	defer p.lock(tenantID)()
	ctx, cancel := detached(ctx)
	defer cancel()
	jobID, _, err := p.locate(ctx, tenantID)
	if isTenantNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("nomad: destroy tenant %s: %w", tenantID, err)
	}
	return p.destroy(ctx, tenantID, jobID)
}

// DestroyOf is Destroy for a recorded tenant: no scan, and the Variables
// of a job whose register never finished are found too.
func (p *Provider) DestroyOf(ctx context.Context, t compute.TenantRef) error {
	defer p.lock(t.ID)()
	ctx, cancel := detached(ctx)
	defer cancel()
	jobID := p.jobOfRef(t)
	job, err := p.readJob(ctx, jobID)
	switch {
	case err != nil:
		return fmt.Errorf("nomad: destroy tenant %s: %w", t.ID, err)
	case job != nil && (job.Meta[metaTenantID] != t.ID || job.Meta[metaManagedBy] != managedBy):
		// Someone else's job of the tenant's name: not ours to touch, nor
		// its Variables.
		p.log(t.ID).Warn("the job of the tenant's name belongs to someone else; left alone", "job", jobID, "owner", ownerOf(job))
		return nil
	}
	return p.destroy(ctx, t.ID, jobID)
}

// destroy removes the job (when there is one), waits for its allocations
// to stop, then deletes its Variables.
func (p *Provider) destroy(ctx context.Context, tenantID, jobID string) error {
	log := p.log(tenantID)
	fail := func(err error) error { return fmt.Errorf("nomad: destroy tenant %s: %w", tenantID, err) }
	if _, _, err := p.client.Jobs().Deregister(jobID, true, write(ctx)); err != nil && !isNotFound(err) {
		return fail(apiError("deregister job "+jobID, err))
	} else if err == nil {
		log.Info("job deregistered", "job", jobID)
	}
	if err := p.awaitStopped(ctx, jobID); err != nil {
		return fail(err)
	}
	vars, _, err := p.client.Variables().PrefixList(secretsPrefix(jobID), query(ctx))
	if err != nil {
		return fail(apiError("list the Variables of job "+jobID, err))
	}
	for _, v := range vars {
		if _, err := p.client.Variables().Delete(v.Path, write(ctx)); err != nil && !isNotFound(err) {
			return fail(apiError("delete Variable "+v.Path, err))
		}
	}
	p.jobs.Delete(tenantID)
	return nil
}

// awaitStopped waits, with blocking queries, until none of the job's
// allocations runs any more.
func (p *Provider) awaitStopped(ctx context.Context, jobID string) error {
	var index uint64
	for {
		q := query(ctx)
		q.WaitIndex, q.WaitTime = index, 5*time.Second
		allocs, meta, err := p.client.Jobs().Allocations(jobID, true, q)
		if err != nil {
			return apiError("list the allocations of job "+jobID, err)
		}
		live := 0
		for _, a := range allocs {
			if terminal(a.ClientStatus) {
				p.allocPorts.Delete(a.ID)
				continue
			}
			live++
		}
		if live == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return compute.Retryable(fmt.Errorf("%d allocations of job %s still run: %w", live, jobID, err))
		}
		index = meta.LastIndex
	}
}

// isTenantNotFound reports whether err says the tenant has no job.
func isTenantNotFound(err error) bool { return errors.Is(err, compute.ErrTenantNotFound) }

// terminal reports whether an allocation's client status is final.
func terminal(clientStatus string) bool {
	switch clientStatus {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
		return true
	}
	return false
}
