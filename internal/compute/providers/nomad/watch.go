package nomad

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

// watchedTopics are the event topics that concern a tenant's status: its
// job, the job's deployments and its allocations. Nomad's event stream
// has no topic for Variables (v1.10: its topics are ACL tokens, policies,
// roles, auth methods and binding rules, jobs, evaluations, allocations,
// deployments, nodes, node pools, services, host and CSI volumes, CSI
// plugins), so watchVariables follows them with a blocking query.
var watchedTopics = map[api.Topic][]string{api.TopicJob: {"*"}, api.TopicDeployment: {"*"}, api.TopicAllocation: {"*"}}

// WatchChanges tells changed of every change to a job landlord manages,
// its deployments, its allocations (read from Nomad's event stream) and
// its Variables (a blocking query on their list), in the block's
// namespace, until ctx ends. When either breaks it reconnects, the stream
// resuming after the last event it saw. It returns nil: a Nomad it cannot
// reach is the health check's to report, and its tenants are polled.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	var wg sync.WaitGroup
	wg.Go(func() { p.watchVariables(ctx, changed) })
	p.watchEvents(ctx, changed)
	wg.Wait()
	return nil
}

// watchEvents follows the event stream until ctx ends.
func (p *Provider) watchEvents(ctx context.Context, changed func(tenantID string)) {
	var index uint64
	backoff := newBackoff()
	for ctx.Err() == nil {
		events, err := p.client.EventStream().Stream(ctx, watchedTopics, index, query(ctx))
		if err == nil {
			for batch := range events {
				if batch.Err != nil {
					err = batch.Err
					break
				}
				backoff.reset()
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
			p.logger.Debug("the event stream broke; reconnecting", "error", err, "after", backoff.delay)
		}
		backoff.wait(ctx)
	}
}

// variablesWait is how long a blocking query on the Variables waits for a
// change before it is asked again (Nomad's default, at most 10 minutes).
const variablesWait = 5 * time.Minute

// watchVariables follows the Variables of landlord's jobs with blocking
// queries on their list (GET /v1/vars?prefix=…&index=…, which answers
// once the Variables change: Nomad's "Blocking Queries"), and tells
// changed of the tenant of each job whose Variables were written, deleted
// (nomad var purge) or created, until ctx ends. A purge's notice comes in
// milliseconds; at rest it costs one request per variablesWait.
func (p *Provider) watchVariables(ctx context.Context, changed func(tenantID string)) {
	var index uint64
	var known map[string]uint64 // path → modify index, as of the last answer
	backoff := newBackoff()
	for ctx.Err() == nil {
		q := query(ctx)
		q.WaitIndex, q.WaitTime = index, variablesWait
		list, meta, err := p.client.Variables().PrefixList("nomad/jobs/"+p.prefix, q)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			p.logger.Debug("the Variables watch failed; retrying", "error", err, "after", backoff.delay)
			backoff.wait(ctx)
			continue
		}
		backoff.reset()
		// An index that goes backwards (a restored snapshot) starts the
		// watch over, as the blocking query documentation advises.
		index = meta.LastIndex
		if index < q.WaitIndex {
			index = 0
		}
		now := make(map[string]uint64, len(list))
		for _, v := range list {
			now[v.Path] = v.ModifyIndex
		}
		if known != nil {
			jobs := map[string]bool{}
			for path, mi := range now {
				if known[path] != mi {
					jobs[jobOfVariable(path)] = true
				}
			}
			for path := range known {
				if _, ok := now[path]; !ok {
					jobs[jobOfVariable(path)] = true
				}
			}
			for jobID := range jobs {
				if id := p.tenantOfJob(ctx, jobID); id != "" {
					changed(id)
				}
			}
		}
		known = now
	}
}

// jobOfVariable is the job a Variable's path (nomad/jobs/<job>/…) is for.
func jobOfVariable(path string) string {
	rest := strings.TrimPrefix(path, "nomad/jobs/")
	jobID, _, _ := strings.Cut(rest, "/")
	return jobID
}

// backoff is the capped exponential delay between reconnections.
type backoff struct{ delay time.Duration }

func newBackoff() *backoff { return &backoff{delay: time.Second} }

func (b *backoff) reset() { b.delay = time.Second }

// wait waits the delay, or until ctx ends, and doubles it up to 30 s.
func (b *backoff) wait(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(b.delay):
	}
	b.delay = min(2*b.delay, 30*time.Second)
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
	return p.tenantOfJob(ctx, jobID)
}

// tenantOfJob is the id of the tenant whose job jobID is, or "" when it is
// no job of landlord's.
func (p *Provider) tenantOfJob(ctx context.Context, jobID string) string {
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
