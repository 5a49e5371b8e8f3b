package nomad

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
)

// watchedTopics are the event topics that concern a tenant's status: its
// job, the job's deployments and its allocations.
var watchedTopics = map[api.Topic][]string{api.TopicJob: {"*"}, api.TopicDeployment: {"*"}, api.TopicAllocation: {"*"}}

// WatchChanges tells changed of every change to a job landlord manages,
// its deployments and its allocations, read from Nomad's event stream in
// the block's namespace, until ctx ends. When the stream breaks it
// reconnects, resuming after the last event it saw. It returns nil: a
// Nomad it cannot reach is the health check's to report, and its tenants
// are polled.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	var index uint64
	backoff := time.Second
	for ctx.Err() == nil {
		events, err := p.client.EventStream().Stream(ctx, watchedTopics, index, query(ctx))
		if err == nil {
			for batch := range events {
				if batch.Err != nil {
					err = batch.Err
					break
				}
				backoff = time.Second
				if batch.Index > index {
					index = batch.Index
				}
				for i := range batch.Events {
					if id := p.tenantOfEvent(ctx, &batch.Events[i]); id != "" {
						changed(id)
					}
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			p.logger.Debug("the event stream broke; reconnecting", "error", err, "after", backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	return nil
}

// tenantOfEvent is the id of the tenant whose job an event concerns, or
// "" when it concerns no job of landlord's.
func (p *Provider) tenantOfEvent(ctx context.Context, ev *api.Event) string {
	var jobID string
	switch ev.Topic {
	case api.TopicJob:
		job, err := ev.Job()
		if err != nil || job == nil {
			return ""
		}
		if job.Meta[metaManagedBy] != managedBy {
			return ""
		}
		id := job.Meta[metaTenantID]
		if id != "" && job.ID != nil {
			p.jobTenants.Store(*job.ID, id)
		}
		return id
	case api.TopicDeployment:
		d, err := ev.Deployment()
		if err != nil || d == nil {
			return ""
		}
		jobID = d.JobID
	case api.TopicAllocation:
		a, err := ev.Allocation()
		if err != nil || a == nil {
			return ""
		}
		jobID = a.JobID
	default:
		return ""
	}
	if !strings.HasPrefix(jobID, p.prefix) {
		return ""
	}
	if v, ok := p.jobTenants.Load(jobID); ok {
		return v.(string)
	}
	// A job of landlord's prefix not seen yet (landlord restarted): its
	// meta says whose it is.
	job, err := readJob(ctx, p.client, jobID)
	if err != nil || job == nil || job.Meta[metaManagedBy] != managedBy {
		return ""
	}
	id := job.Meta[metaTenantID]
	p.jobTenants.Store(jobID, id)
	return id
}
