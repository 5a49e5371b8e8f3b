package ecs

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Provision creates the tenant's service, or converges the one that exists
// (adopting it after a crash: it is found by name and tag). It returns as
// soon as ECS has the request; GetStatus follows the rollout.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.ProvisionResult, error) {
		return nil, fmt.Errorf("ecs: provision tenant %s: %w: %w", spec.TenantID, provider.ErrProvisionFailed, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(spec.TenantID)()
	o := optionsOf(spec)
	f, err := p.find(ctx, spec, o)
	if err != nil {
		return fail(err)
	}
	if f.draining {
		if f, err = p.waitDrained(ctx, f, spec.TenantID); err != nil {
			return fail(err)
		}
	}
	var taskARN string
	if f.live() {
		if _, taskARN, err = p.converge(ctx, f, spec, o); err != nil {
			return fail(err)
		}
	} else if taskARN, err = p.create(ctx, f, spec, o); err != nil {
		return fail(err)
	}
	p.hints.Store(spec.TenantID, f.pl)
	return &provider.ProvisionResult{
		TenantID: spec.TenantID, ProviderType: Name, Status: provider.ProvisionStatusInProgress,
		ResourceIDs: resourceIDs(f.pl, taskARN), Message: "ECS is rolling out service " + f.pl.service, ProvisionedAt: p.now(),
	}, nil
}

// Update converges the tenant's service to spec: a new task definition
// revision only when the task definition changes, then one UpdateService.
// A spec the service already matches makes no call that writes.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.UpdateResult, error) {
		return nil, fmt.Errorf("ecs: update tenant %s: %w: %w", tenantID, provider.ErrUpdateFailed, err)
	}
	if spec.TenantID != tenantID {
		return nil, provider.Invalid("/tenant_id", "is %q; the update is for tenant %q", spec.TenantID, tenantID)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(tenantID)()
	o := optionsOf(spec)
	f, err := p.find(ctx, spec, o)
	if err != nil {
		return fail(err)
	}
	if !f.live() {
		return nil, fmt.Errorf("ecs: update tenant %s: no service %s in %s: %w", tenantID, f.pl.service, f.pl.cluster, provider.ErrTenantNotFound)
	}
	changes, taskARN, err := p.converge(ctx, f, spec, o)
	if err != nil {
		return fail(err)
	}
	p.hints.Store(tenantID, f.pl)
	res := &provider.UpdateResult{TenantID: tenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess,
		Changes: changes, ResourceIDs: resourceIDs(f.pl, taskARN), UpdatedAt: p.now()}
	if len(changes) > 0 {
		res.Status, res.Message = provider.ProvisionStatusInProgress, "ECS is rolling out service "+f.pl.service
	}
	return res, nil
}

// find describes the tenant's service where spec places it, refusing a
// placement that is not where the tenant's recorded service runs and a
// service of the name that is someone else's.
func (p *Provider) find(ctx context.Context, spec *provider.TenantComputeSpec, o tenantOptions) (*found, error) {
	pl, err := p.placementOf(o, spec.TenantName)
	if err != nil {
		return nil, provider.Terminal(err)
	}
	if recorded := spec.ResourceIDs[resourceService]; recorded != "" && recorded != pl.serviceARN() {
		return nil, provider.Terminal(fmt.Errorf("the tenant's service is %s, and its config now places it at %s: an ECS service cannot move between clusters, regions or names; "+
			"put cluster_arn, region and service_name_prefix back, or delete the tenant and create it again: %w", recorded, pl.serviceARN(), provider.ErrInvalidSpec))
	}
	f, err := p.describe(ctx, pl, spec.TenantID)
	if err != nil {
		return nil, err
	}
	if f.foreign != "" {
		return nil, provider.Terminal(fmt.Errorf("a service named %s already exists in %s and is not this tenant's (its %s tag: %s); landlord never takes over a service: remove or rename it, or choose another service_name_prefix: %w",
			pl.service, pl.cluster, tagTenantID, f.foreign, provider.ErrProviderConflict))
	}
	return f, nil
}

// waitDrained waits, at most Settings.DrainWait, for an earlier service of
// the name to finish draining after a delete, so that a new one can be
// created.
func (p *Provider) waitDrained(ctx context.Context, f *found, tenantID string) (*found, error) {
	deadline := p.now().Add(time.Duration(p.settings.DrainWait))
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		if p.now().After(deadline) {
			return nil, provider.Retryable(fmt.Errorf("an earlier service named %s is still draining after %s; it is retried", f.pl.service, time.Duration(p.settings.DrainWait)))
		}
		select {
		case <-ctx.Done():
			return nil, provider.Retryable(ctx.Err())
		case <-time.After(wait):
		}
		next, err := p.describe(ctx, f.pl, tenantID)
		if err != nil {
			return nil, err
		}
		if !next.draining {
			return next, nil
		}
	}
}

// create registers the tenant's task definition when it has a workload and
// creates its service. On failure it deregisters the revision it
// registered.
func (p *Provider) create(ctx context.Context, f *found, spec *provider.TenantComputeSpec, o tenantOptions) (string, error) {
	taskARN, registered, err := p.taskDefinitionFor(ctx, f, spec, o)
	if err != nil {
		return "", err
	}
	d := newDesiredService(o, taskARN)
	hash := p.fingerprint(d)
	tags := serviceTags(o, spec.TenantID, spec.TenantName, spec.Generation, hash)
	out, err := f.client.CreateService(ctx, d.create(f.pl, p.createToken(spec, f), tags))
	if err != nil {
		// Another process may have created it first (ECS refuses a second
		// create of a name): take what is there.
		if isCode(err, "InvalidParameterException") && ctx.Err() == nil {
			if again, derr := p.describe(ctx, f.pl, spec.TenantID); derr == nil && again.live() {
				*f = *again
				_, taskARN, err = p.converge(ctx, f, spec, o)
				return taskARN, err
			}
		}
		if registered {
			p.undoRegister(ctx, f, spec.TenantID, taskARN)
		}
		return "", awsError("create service "+f.pl.service, err)
	}
	if status := aws.ToString(out.Service.Status); status != "ACTIVE" {
		// An answer to an earlier create with the same token, whose service
		// has since been deleted: not a service to run the tenant on.
		return "", provider.Retryable(fmt.Errorf("ECS answered the create of service %s with a service that is %s (an earlier create's client token?); it is retried with a new one", f.pl.service, status))
	}
	f.service = out.Service
	p.log(spec.TenantID).Info("service created", "service", aws.ToString(out.Service.ServiceArn), "task_definition", taskARN, "generation", spec.Generation)
	return taskARN, nil
}

// createToken is the client token of the create of the tenant's service:
// the same for every retry of one create, so that a create retried after
// a crash is answered with the service the first one made, and new for
// each service of the name. An earlier service still described as
// INACTIVE makes it new; once ECS has forgotten that service (about an
// hour after its delete), a tenant that has had a service (its recorded
// ARN says so) takes a token new every ten minutes, far shorter than that
// hour: a retry that lands in the next window is refused as a second
// service of the name, and the service is found and adopted instead.
func (p *Provider) createToken(spec *provider.TenantComputeSpec, f *found) string {
	previous := f.inactive
	if previous == "" && spec.ResourceIDs[resourceService] != "" {
		previous = "re-created " + p.now().UTC().Truncate(recreateWindow).Format(time.RFC3339)
	}
	return clientToken(spec.TenantID, spec.Generation, previous)
}

// recreateWindow is how long the client token of a re-create stays the
// same (see createToken).
const recreateWindow = 10 * time.Minute

// converge updates a live service to spec, when it differs, and returns
// what changed. It compares the service as ECS describes it now, field by
// field, with what landlord sets (not the config hash landlord tagged it
// with, which a change made by hand leaves in place): UpdateService when a
// field differs, TagResource when only tags do.
func (p *Provider) converge(ctx context.Context, f *found, spec *provider.TenantComputeSpec, o tenantOptions) ([]provider.Change, string, error) {
	s := f.service
	if o.LaunchType != "" && s.LaunchType != "" && string(s.LaunchType) != o.LaunchType {
		return nil, "", provider.Terminal(fmt.Errorf("service %s runs on %s and cannot change to launch_type %s: ECS cannot change an existing service's launch type; delete the tenant and create it again: %w",
			f.pl.service, s.LaunchType, o.LaunchType, provider.ErrInvalidSpec))
	}
	taskARN, registered, err := p.taskDefinitionFor(ctx, f, spec, o)
	if err != nil {
		return nil, "", err
	}
	d := newDesiredService(o, taskARN)
	hash := p.fingerprint(d)
	tags := serviceTags(o, spec.TenantID, spec.TenantName, spec.Generation, hash)
	var fields, tagged provider.DriftCollector
	fields.Compare("service/task_definition", provider.DriftImage, taskARN, aws.ToString(s.TaskDefinition))
	d.compare(&fields, s)
	compareTags(&tagged, tags, s.Tags)
	fieldDrift := fields.Drift()
	diff := append(fieldDrift, tagged.Drift()...)
	stale := tagMap(s.Tags)[tagConfigHash] != hash
	if len(diff) == 0 && !stale {
		return nil, taskARN, nil
	}
	if len(fieldDrift) > 0 {
		out, err := f.client.UpdateService(ctx, d.update(f.pl, fieldDrift))
		if err != nil {
			if registered {
				p.undoRegister(ctx, f, spec.TenantID, taskARN)
			}
			return nil, "", awsError("update service "+f.pl.service, err)
		}
		f.service = out.Service
	}
	if _, err := f.client.TagResource(ctx, &ecs.TagResourceInput{ResourceArn: s.ServiceArn, Tags: tagsOf(tags)}); err != nil {
		// The service already runs the new spec; the next converge finds the
		// old hash and sets the tags again.
		return nil, "", awsError("tag service "+f.pl.service, err)
	}
	if len(spec.Containers) > 0 && aws.ToString(s.TaskDefinition) != taskARN {
		// Deregister the revisions the service no longer uses: the new one and
		// those of its deployments before this update stay, since the
		// deployment circuit breaker rolls back to the last completed
		// deployment's revision (a rollout in progress still needs it); they
		// go at the next change of the task definition, and at Destroy. So a
		// tenant keeps two revisions at rest: the one it runs and the one
		// before. What fails here is retried by the next update.
		keep := []string{taskARN}
		for _, d := range s.Deployments {
			keep = append(keep, aws.ToString(d.TaskDefinition))
		}
		if err := p.deregister(ctx, f, spec.TenantID, keep...); err != nil {
			p.log(spec.TenantID).Warn("cannot deregister the tenant's earlier task definitions", "error", err)
		}
	}
	changes := make([]provider.Change, 0, len(diff)+1)
	for _, d := range diff {
		changes = append(changes, provider.Change{Field: d.Path, From: d.Found, To: d.Expected})
	}
	if len(changes) == 0 {
		changes = append(changes, provider.Change{Field: "service/tags"})
	}
	p.log(spec.TenantID).Info("service updated", "service", aws.ToString(s.ServiceArn), "changes", len(changes), "generation", spec.Generation)
	return changes, taskARN, nil
}

// taskDefinitionFor is the task definition the tenant's service runs: its
// own revision built from the workload, or task_definition_arn as it is.
func (p *Provider) taskDefinitionFor(ctx context.Context, f *found, spec *provider.TenantComputeSpec, o tenantOptions) (string, bool, error) {
	if len(spec.Containers) == 0 {
		return o.TaskDefinitionARN, false, nil
	}
	base, err := p.baseTaskDefinition(ctx, f, o)
	if err != nil {
		return "", false, err
	}
	in := taskDefinition(spec, o, f.pl.family(), base)
	if base != nil {
		// The rules that needed the base's roles and log configuration,
		// which the config check could not read.
		var errs violation.List
		checkRegistration(in, workloadPointers(spec), false, &errs)
		if in.NetworkMode == types.NetworkModeAwsvpc && !o.awsvpc() {
			// API_CreateService, networkConfiguration: "This parameter is
			// required for task definitions that use the awsvpc network mode".
			errs.Add("/subnets", "are required: the base task definition uses the awsvpc network mode, and ECS refuses a service without a network configuration for it: %q",
				"Network Configuration must be provided when networkMode 'awsvpc' is specified.")
		}
		if err := refusal(errs, o.TaskDefinitionARN); err != nil {
			return "", false, provider.Terminal(err)
		}
	}
	tags := map[string]string{tagTenantID: spec.TenantID, tagManagedBy: managedBy}
	maps.Copy(tags, o.Tags)
	return p.ensureTaskDefinition(ctx, f, spec.TenantID, in, tags)
}

// undoRegister deregisters a revision this call registered and could not
// use, even when ctx is cancelled.
func (p *Provider) undoRegister(ctx context.Context, f *found, tenantID, taskARN string) {
	ctx, cancel := detached(ctx)
	defer cancel()
	if _, err := f.client.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String(taskARN)}); err != nil {
		p.log(tenantID).Warn("cannot deregister a task definition this provision registered; Destroy removes it", "task_definition", taskARN, "error", err)
	}
}

// resourceIDs are the ids a result records for the tenant.
func resourceIDs(pl placement, taskARN string) map[string]string {
	ids := map[string]string{resourceService: pl.serviceARN(), resourceCluster: pl.cluster}
	if taskARN != "" {
		ids[resourceTaskDefinition] = taskARN
	}
	return ids
}
