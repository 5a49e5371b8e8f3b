package nomad

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
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
	return p.destroy(ctx, p.client, tenantID, jobID)
}

// DestroyOf is Destroy for a recorded tenant: no scan, and the Variables
// of a job whose register never finished are found too.
func (p *Provider) DestroyOf(ctx context.Context, t provider.TenantRef) error {
	defer p.lock(t.ID)()
	ctx, cancel := detached(ctx)
	defer cancel()
	c, jobID, err := p.jobOfRef(t)
	if err != nil {
		return err
	}
	job, err := readJob(ctx, c, jobID)
	switch {
	case err != nil:
		return fmt.Errorf("nomad: destroy tenant %s: %w", t.ID, err)
	case job != nil && (job.Meta[metaTenantID] != t.ID || job.Meta[metaManagedBy] != managedBy):
		// Someone else's job of the tenant's name: not ours to touch, nor
		// its Variables.
		p.log(t.ID).Warn("the job of the tenant's name belongs to someone else; left alone", "job", jobID, "owner", ownerOf(job))
		return nil
	}
	return p.destroy(ctx, c, t.ID, jobID)
}

// destroy stops the job (when there is one), waits for its allocations
// to stop, has their containers removed, purges the job, then deletes its
// Variables. Each step finds the state the last one left, so a destroy cut
// short by a crash is finished by the next.
func (p *Provider) destroy(ctx context.Context, c *api.Client, tenantID, jobID string) error {
	log := p.log(tenantID)
	fail := func(err error) error { return fmt.Errorf("nomad: destroy tenant %s: %w", tenantID, err) }
	job, err := readJob(ctx, c, jobID)
	if err != nil {
		return fail(err)
	}
	if job != nil {
		if !stopped(job) {
			if _, _, err := c.Jobs().Deregister(jobID, false, write(ctx)); err != nil && !isNotFound(err) {
				return fail(apiError("stop job "+jobID, err))
			}
		}
		allocs, err := awaitStopped(ctx, c, jobID)
		if err != nil {
			return fail(err)
		}
		// A stopped task's container stays on its node until the client
		// collects the allocation, which it otherwise does only under disk
		// or count pressure: collect them now, so that no container
		// outlives the tenant.
		for _, id := range allocs {
			// The endpoint answers with an empty body, which the api
			// package's decoder reports as io.EOF: that is success. (Its
			// Allocations().GC takes no context; the raw call does.)
			var none struct{}
			_, err := c.Raw().Query("/v1/client/allocation/"+id+"/gc", &none, query(ctx))
			if err != nil && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "No such allocation") && !isNotFound(err) {
				return fail(apiError("collect allocation "+id+" of job "+jobID, err))
			}
			p.allocPorts.Delete(id)
		}
		if _, _, err := c.Jobs().Deregister(jobID, true, write(ctx)); err != nil && !isNotFound(err) {
			return fail(apiError("purge job "+jobID, err))
		}
		log.Info("job purged", "job", jobID, "allocations", len(allocs))
	}
	vars, _, err := c.Variables().PrefixList(secretsPrefix(jobID), query(ctx))
	if err != nil {
		return fail(apiError("list the Variables of job "+jobID, err))
	}
	for _, v := range vars {
		if _, err := c.Variables().Delete(v.Path, write(ctx)); err != nil && !isNotFound(err) {
			return fail(apiError("delete Variable "+v.Path, err))
		}
	}
	p.jobs.Delete(tenantID)
	p.forget(jobID)
	return nil
}

// awaitStopped waits, with blocking queries, until none of the job's
// allocations runs any more, and returns their IDs.
func awaitStopped(ctx context.Context, c *api.Client, jobID string) ([]string, error) {
	var index uint64
	for {
		q := query(ctx)
		q.WaitIndex, q.WaitTime = index, 5*time.Second
		allocs, meta, err := c.Jobs().Allocations(jobID, true, q)
		if err != nil {
			return nil, apiError("list the allocations of job "+jobID, err)
		}
		live, ids := 0, make([]string, 0, len(allocs))
		for _, a := range allocs {
			ids = append(ids, a.ID)
			if !terminal(a.ClientStatus) {
				live++
			}
		}
		if live == 0 {
			return ids, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, provider.Retryable(fmt.Errorf("%d allocations of job %s still run: %w", live, jobID, err))
		}
		index = meta.LastIndex
	}
}

// isTenantNotFound reports whether err says the tenant has no job.
func isTenantNotFound(err error) bool { return errors.Is(err, provider.ErrTenantNotFound) }

// terminal reports whether an allocation's client status is final.
func terminal(clientStatus string) bool {
	switch clientStatus {
	case api.AllocClientStatusComplete, api.AllocClientStatusFailed, api.AllocClientStatusLost:
		return true
	}
	return false
}
