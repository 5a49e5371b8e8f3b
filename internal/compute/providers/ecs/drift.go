package ecs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The provider is not a provider.ChangeNotifier: ECS offers no change
// stream on its own API, so drift is found when the controller resyncs a
// tenant and calls Inspect. A notifier would fit ECS's events on Amazon
// EventBridge: "ECS Service Action" events (SERVICE_STEADY_STATE,
// SERVICE_TASK_PLACEMENT_FAILURE, …), "ECS Deployment State Change" events
// (SERVICE_DEPLOYMENT_IN_PROGRESS, _COMPLETED, _FAILED: a deployment started
// by hand, an UpdateService or a new task definition) and "ECS Task State
// Change" events (a task stopped), each carrying the service's ARN, which
// names the tenant. It would need an EventBridge rule matching source
// aws.ecs for the tenants' clusters with an SQS queue as its target (and
// landlord's IAM identity allowed to create or read both: sqs:ReceiveMessage,
// sqs:DeleteMessage), landlord long-polling the queue and calling back with
// the tenant of each service ARN. Tag and UpdateService calls themselves
// reach EventBridge only through CloudTrail ("AWS API Call via CloudTrail"),
// minutes late.

// Inspect reads the tenant's service live, as GetStatus does, and compares
// with spec every field landlord sets: the task definition (by content when
// landlord builds it from the workload, by ARN when the config gives one),
// the desired count (unless a range leaves it to auto scaling), launch type
// or capacity provider strategy, platform version, network configuration,
// deployment configuration, health check grace period, execute command,
// tag propagation, load balancers, service registries and landlord's tags.
// It changes nothing. It returns an error wrapping ErrTenantNotFound when
// the tenant has no live service, and ErrProviderConflict when the
// service of its name is someone else's.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.Inspection, error) {
		return nil, fmt.Errorf("ecs: inspect tenant %s: %w", spec.TenantID, err)
	}
	o := optionsOf(spec)
	f, err := p.find(ctx, spec, o)
	if err != nil {
		return fail(err)
	}
	if !f.live() {
		return fail(fmt.Errorf("no live service %s in %s: %w", f.pl.service, f.pl.cluster, provider.ErrTenantNotFound))
	}
	p.hints.Store(spec.TenantID, f.pl)
	st, err := p.status(ctx, f, spec.TenantID)
	if err != nil {
		return nil, err
	}
	s := f.service
	var c provider.DriftCollector
	if len(spec.Containers) > 0 {
		base, err := p.baseTaskDefinition(ctx, f, o)
		if err != nil {
			return fail(err)
		}
		running := aws.ToString(s.TaskDefinition)
		live, err := p.revision(ctx, f, running)
		if err != nil {
			return fail(awsError("describe task definition "+running, err))
		}
		p.compareTaskDefinition(&c, taskDefinition(spec, o, f.pl.family(), base), live)
	} else {
		c.Compare("service/task_definition", provider.DriftImage, o.TaskDefinitionARN, aws.ToString(s.TaskDefinition))
	}
	newDesiredService(o, "").compare(&c, s)
	compareTags(&c, serviceTags(o, spec.TenantID, spec.TenantName, spec.Generation, ""), s.Tags)
	return &provider.Inspection{Status: st, Drift: c.Drift()}, nil
}
