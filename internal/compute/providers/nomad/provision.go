package nomad

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Resource id keys of ProvisionResult and UpdateResult.
const (
	resourceJob       = "job"
	resourceNamespace = "namespace"
)

// Provision registers the tenant's job, or converges the job it finds
// under the tenant's ID after a crash or a change behind landlord's back.
// It returns as soon as Nomad has the job; GetStatus follows the
// deployment. On failure it removes what this call created.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.ProvisionResult, error) {
		return nil, fmt.Errorf("nomad: provision tenant %s: %w: %w", spec.TenantID, provider.ErrProvisionFailed, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(spec.TenantID)()
	jobID, err := p.jobOf(spec)
	if err != nil {
		return fail(err)
	}
	changes, registered, err := p.converge(ctx, spec, jobID, false)
	if err != nil {
		return fail(err)
	}
	res := &provider.ProvisionResult{TenantID: spec.TenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess,
		ResourceIDs: p.resourceIDs(jobID), ProvisionedAt: p.now()}
	if changes != nil {
		res.Status, res.Message = provider.ProvisionStatusInProgress, wrote(jobID, registered)
	}
	return res, nil
}

// Update converges the tenant's existing job and its Variables to spec,
// putting back what was changed behind landlord's back (see apply). A
// spec the job was already built from, over a job and Variables that
// match it, writes nothing.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	if spec.TenantID != tenantID {
		return nil, provider.Invalid("/tenant_id", "is %q; the update is for tenant %q", spec.TenantID, tenantID)
	}
	fail := func(err error) (*provider.UpdateResult, error) {
		if errors.Is(err, provider.ErrTenantNotFound) {
			return nil, fmt.Errorf("nomad: update tenant %s: %w", tenantID, err)
		}
		return nil, fmt.Errorf("nomad: update tenant %s: %w: %w", tenantID, provider.ErrUpdateFailed, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(tenantID)()
	jobID, err := p.jobOf(spec)
	if err != nil {
		return fail(err)
	}
	changes, registered, err := p.converge(ctx, spec, jobID, true)
	if err != nil {
		return fail(err)
	}
	res := &provider.UpdateResult{TenantID: tenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess, Changes: changes,
		ResourceIDs: p.resourceIDs(jobID), UpdatedAt: p.now()}
	if changes != nil {
		res.Status, res.Message = provider.ProvisionStatusInProgress, wrote(jobID, registered)
	}
	return res, nil
}

// wrote is the result's message once converge wrote something.
func wrote(jobID string, registered bool) string {
	if registered {
		return "job " + jobID + " registered; its deployment is rolling out"
	}
	return "the Variables of job " + jobID + " written again"
}

// jobOf is the ID of the tenant's job: where its recorded resource ids
// say, else the one its name makes. A tenant never moves: a job recorded
// in another namespace than the block's is refused.
func (p *Provider) jobOf(spec *provider.TenantComputeSpec) (string, error) {
	ids := spec.ResourceIDs
	if ids[resourceJob] == "" {
		return p.jobID(spec.TenantName), nil
	}
	if ns := ids[resourceNamespace]; ns != "" && ns != p.settings.Namespace {
		return "", provider.Terminal(fmt.Errorf("the tenant's job %s is in namespace %s and landlord's nomad block now names %s: jobs cannot move; "+
			"put the namespace back, or delete the tenant and create it again: %w", ids[resourceJob], ns, p.settings.Namespace, provider.ErrInvalidSpec))
	}
	return ids[resourceJob], nil
}

func (p *Provider) resourceIDs(jobID string) map[string]string {
	return map[string]string{resourceJob: jobID, resourceNamespace: p.settings.Namespace}
}

// maxIndexRaces bounds the retries of a register that lost an EnforceIndex
// race to another writer.
const maxIndexRaces = 3

// converge makes the job and its Variables what spec asks for. It
// returns nil changes when it wrote nothing, and a non-nil list (perhaps
// empty) when it wrote something; registered says whether that was the
// job.
func (p *Provider) converge(ctx context.Context, spec *provider.TenantComputeSpec, jobID string, mustExist bool) (changes []provider.Change, registered bool, err error) {
	for race := 1; ; race++ {
		cur, err := readJob(ctx, p.client, jobID)
		if err != nil {
			return nil, false, err
		}
		if cur != nil {
			if owner := cur.Meta[metaTenantID]; owner != spec.TenantID || cur.Meta[metaManagedBy] != managedBy {
				return nil, false, provider.Terminal(fmt.Errorf("job %s belongs to %s, not to this tenant: landlord never takes over a job it did not make for the tenant; rename or remove that job: %w",
					jobID, ownerOf(cur), provider.ErrProviderConflict))
			}
		} else if mustExist {
			return nil, false, fmt.Errorf("no job %s: %w", jobID, provider.ErrTenantNotFound)
		}
		d := p.desiredOf(spec, jobID)
		p.keepCount(d, cur, optionsOf(spec).count())
		changes, registered, err = p.apply(ctx, spec.TenantID, d, cur)
		if errors.Is(err, errIndexConflict) && race < maxIndexRaces {
			continue
		}
		if err == nil {
			p.jobs.Store(spec.TenantID, jobID)
		}
		return changes, registered, err
	}
}

// apply registers d's job when the live one was built from another spec
// (or is stopped, or missing). When it was built from this spec, it
// compares them as Inspect does, since a change made behind landlord's
// back leaves the spec's fingerprint in the meta (nomad job scale, a job
// edited and run again, nomad var purge): it registers the job again when
// the job differs, and writes the Variables again when only they do. An
// unchanged spec over an unchanged job writes nothing, and at rest costs
// reads only (see jobDrift).
func (p *Provider) apply(ctx context.Context, tenantID string, d *desired, cur *api.Job) ([]provider.Change, bool, error) {
	if cur == nil || stopped(cur) || cur.Meta[metaConfigHash] != d.hash {
		changes, err := p.register(ctx, tenantID, d, cur)
		return changes, changes != nil, err
	}
	jobDrift, varDrift, err := p.compare(ctx, p.client, d, cur)
	if err != nil {
		return nil, false, err
	}
	log := p.log(tenantID)
	switch {
	case len(jobDrift) > 0:
		log.Info("the job differs from its spec; registering it again", "job", d.id, "drift", provider.Summarize(jobDrift))
		changes, err := p.register(ctx, tenantID, d, cur)
		return changes, changes != nil, err
	case len(varDrift) > 0:
		// The job is as it should be: no new version, no rollout. A task
		// waiting for its template renders once the Variable is back.
		if err := p.writeSecrets(ctx, d); err != nil {
			return nil, false, err
		}
		p.removeStaleSecrets(ctx, tenantID, d)
		log.Info("the job's Variables differ from its spec; written again", "job", d.id, "drift", provider.Summarize(varDrift))
		changes := make([]provider.Change, 0, len(varDrift))
		for _, dr := range varDrift {
			changes = append(changes, provider.Change{Field: dr.Path, From: dr.Found, To: dr.Expected})
		}
		return changes, false, nil
	}
	return nil, false, nil
}

// register writes the secrets, plans the job and registers it unless the
// plan shows nothing to change, enforcing the modify index it read: a
// writer that changed the job in between makes this one fail and read
// again. When the job did not exist and registering it fails, the
// secrets written for it are removed, and the job too should the failed
// call have registered it after all.
func (p *Provider) register(ctx context.Context, tenantID string, d *desired, cur *api.Job) (changes []provider.Change, err error) {
	log := p.log(tenantID)
	if cur == nil {
		defer func() {
			if err != nil && !errors.Is(err, errIndexConflict) {
				p.undoCreate(ctx, tenantID, d)
			}
		}()
	}
	if err := p.writeSecrets(ctx, d); err != nil {
		return nil, err
	}
	plan, _, err := p.client.Jobs().Plan(d.job, true, write(ctx))
	if err != nil {
		return nil, apiError("plan job "+d.id, err)
	}
	if cur != nil && !stopped(cur) && plan.Diff != nil && plan.Diff.Type == "None" {
		return nil, nil
	}
	var index uint64
	if cur != nil {
		index = deref(cur.JobModifyIndex)
		changes = changesOf(plan.Diff)
	}
	if _, _, err := p.client.Jobs().RegisterOpts(d.job, &api.RegisterOptions{EnforceIndex: true, ModifyIndex: index}, write(ctx)); err != nil {
		return nil, apiError("register job "+d.id, err)
	}
	attrs := []any{"job", d.id, "generation", d.job.Meta[metaGeneration]}
	if cur == nil {
		log.Info("job registered", attrs...)
	} else {
		log.Info("job updated", append(attrs, "changed", changeList(changes))...)
	}
	if len(plan.FailedTGAllocs) > 0 {
		log.Warn("Nomad cannot place the job yet; it waits for capacity", "job", d.id, "reason", placementFailure(plan.FailedTGAllocs))
	}
	if cur != nil {
		p.removeStaleSecrets(ctx, tenantID, d)
	}
	return changes, nil
}

// undoCreate removes, after a failed first register, the secrets written
// for the job, and the job itself should the failed call have registered
// it (Nomad may have committed it before the context ended).
func (p *Provider) undoCreate(ctx context.Context, tenantID string, d *desired) {
	ctx, cancel := detached(ctx)
	defer cancel()
	job, err := readJob(ctx, p.client, d.id)
	switch {
	case err != nil:
		p.log(tenantID).Warn("cleanup after a failed register: cannot read the job", "job", d.id, "error", err)
		return
	case job != nil && job.Meta[metaConfigHash] != d.hash:
		return // another writer's, left alone
	case job != nil:
		if _, _, err := p.client.Jobs().Deregister(d.id, true, write(ctx)); err != nil {
			p.log(tenantID).Warn("cleanup after a failed register: cannot deregister the job", "job", d.id, "error", err)
			return
		}
	}
	for path := range d.secrets {
		if _, err := p.client.Variables().Delete(path, write(ctx)); err != nil && !isNotFound(err) {
			p.log(tenantID).Warn("cleanup after a failed register: cannot delete a Variable", "path", path, "error", err)
		}
	}
}

// removeStaleSecrets deletes the Variables of tasks that no longer have
// secret values. A failure is logged, not returned: a stale Variable
// holds values the tenant once gave and is removed with the job.
func (p *Provider) removeStaleSecrets(ctx context.Context, tenantID string, d *desired) {
	vars, _, err := p.client.Variables().PrefixList(secretsPrefix(d.id), query(ctx))
	if err != nil {
		p.log(tenantID).Warn("cannot list the job's Variables to remove stale ones", "job", d.id, "error", err)
		return
	}
	for _, v := range vars {
		if _, keep := d.secrets[v.Path]; keep {
			continue
		}
		if _, err := p.client.Variables().Delete(v.Path, write(ctx)); err != nil && !isNotFound(err) {
			p.log(tenantID).Warn("cannot delete a stale Variable", "path", v.Path, "error", err)
		}
	}
}

// readJob reads a job through c (whose namespace it is in); nil when there
// is none.
func readJob(ctx context.Context, c *api.Client, jobID string) (*api.Job, error) {
	job, _, err := c.Jobs().Info(jobID, query(ctx))
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiError("read job "+jobID, err)
	}
	return job, nil
}

// stopped reports whether the job was stopped (nomad job stop).
func stopped(job *api.Job) bool { return job.Stop != nil && *job.Stop }

// ownerOf names the owner of a job that is not the tenant's, for the
// conflict message.
func ownerOf(job *api.Job) string {
	if id := job.Meta[metaTenantID]; id != "" && job.Meta[metaManagedBy] == managedBy {
		return "tenant " + id
	}
	return "no landlord tenant"
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// changesOf lists the fields a plan's diff changes, by path: job fields,
// then group/<name>/… and task/<name>/…. Values are the job's as Nomad
// shows them, which hold no secret: secret values live in Variables.
func changesOf(d *api.JobDiff) []provider.Change {
	changes := []provider.Change{}
	if d == nil {
		return changes
	}
	var fields func(prefix string, fs []*api.FieldDiff, os []*api.ObjectDiff)
	fields = func(prefix string, fs []*api.FieldDiff, os []*api.ObjectDiff) {
		for _, f := range fs {
			if f.Type != "None" {
				changes = append(changes, provider.Change{Field: prefix + f.Name, From: f.Old, To: f.New})
			}
		}
		for _, o := range os {
			if o.Type != "None" {
				fields(prefix+o.Name+"/", o.Fields, o.Objects)
			}
		}
	}
	fields("", d.Fields, d.Objects)
	for _, g := range d.TaskGroups {
		fields("group/"+g.Name+"/", g.Fields, g.Objects)
		for _, t := range g.Tasks {
			fields("task/"+t.Name+"/", t.Fields, t.Objects)
		}
	}
	return changes
}

// changeList is changes for a log line.
func changeList(changes []provider.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Field
	}
	return out
}

// placementFailure words why Nomad cannot place a group.
func placementFailure(failed map[string]*api.AllocationMetric) string {
	var out []string
	for _, g := range slices.Sorted(maps.Keys(failed)) {
		m := failed[g]
		var why []string
		for _, k := range slices.Sorted(maps.Keys(m.DimensionExhausted)) {
			why = append(why, fmt.Sprintf("%s exhausted on %d nodes", k, m.DimensionExhausted[k]))
		}
		for _, k := range slices.Sorted(maps.Keys(m.ConstraintFiltered)) {
			why = append(why, fmt.Sprintf("constraint %s filtered %d nodes", k, m.ConstraintFiltered[k]))
		}
		if m.NodesEvaluated == 0 {
			why = append(why, "no node is eligible (check datacenters and node_pool)")
		}
		out = append(out, "group "+g+": "+strings.Join(why, ", "))
	}
	return strings.Join(out, "; ")
}
