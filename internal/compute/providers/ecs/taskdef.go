package ecs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// taskDefinition builds the tenant's task definition from its portable
// workload, over base (the task_definition_arn's revision, or nil): the
// base's volumes, platform and network mode stay, and its roles unless the
// config gives its own. Every container logs as logConfigurationOf says.
func taskDefinition(spec *provider.TenantComputeSpec, o tenantOptions, family string, base *types.TaskDefinition) *ecs.RegisterTaskDefinitionInput {
	in := &ecs.RegisterTaskDefinitionInput{Family: aws.String(family)}
	var baseLogs *types.LogConfiguration
	if base != nil {
		in.ExecutionRoleArn, in.TaskRoleArn = base.ExecutionRoleArn, base.TaskRoleArn
		in.NetworkMode, in.Volumes, in.RuntimePlatform = base.NetworkMode, base.Volumes, base.RuntimePlatform
		in.EphemeralStorage, in.PidMode, in.IpcMode = base.EphemeralStorage, base.PidMode, base.IpcMode
		in.RequiresCompatibilities = base.RequiresCompatibilities
		in.Cpu, in.Memory = base.Cpu, base.Memory
		if len(base.ContainerDefinitions) > 0 {
			baseLogs = base.ContainerDefinitions[0].LogConfiguration
		}
	}
	if o.ExecutionRoleARN != "" {
		in.ExecutionRoleArn = aws.String(o.ExecutionRoleARN)
	}
	if o.TaskRoleARN != "" {
		in.TaskRoleArn = aws.String(o.TaskRoleARN)
	}
	logs := logConfigurationOf(o, family, spec.TenantName, baseLogs, aws.ToString(in.ExecutionRoleArn) != "")
	switch {
	case o.awsvpc():
		in.NetworkMode = types.NetworkModeAwsvpc
	case in.NetworkMode == "":
		in.NetworkMode = types.NetworkModeBridge
	}
	switch {
	case o.fargate():
		in.RequiresCompatibilities = []types.Compatibility{types.CompatibilityFargate}
		cpu, memory, _ := fargateSize(spec.Workload)
		in.Cpu, in.Memory = aws.String(strconv.FormatInt(cpu, 10)), aws.String(strconv.FormatInt(memory, 10))
	case o.LaunchType != "":
		in.RequiresCompatibilities = []types.Compatibility{types.Compatibility(o.LaunchType)}
	}
	if !o.fargate() {
		if r := spec.Resources; r.CPUMillicores > 0 {
			in.Cpu = aws.String(strconv.FormatInt(cpuUnits(r.CPUMillicores), 10))
		}
		if r := spec.Resources; r.MemoryMiB > 0 {
			in.Memory = aws.String(strconv.FormatInt(r.MemoryMiB, 10))
		} else if in.Memory == nil && !hasContainerMemory(spec.Workload) {
			in.Memory = aws.String("512") // EC2 needs a memory limit somewhere
		}
	}
	for _, c := range spec.Containers {
		in.ContainerDefinitions = append(in.ContainerDefinitions, containerDefinition(c, spec.Secrets, o, logs))
	}
	return in
}

func hasContainerMemory(w workload.Workload) bool {
	for _, c := range w.Containers {
		if c.Resources.MemoryMiB > 0 {
			return true
		}
	}
	return false
}

// containerDefinition is one container of the workload as ECS runs it. The
// portable command replaces the entrypoint and args the command, as in
// Kubernetes; secrets are references ECS resolves when the task starts.
func containerDefinition(c workload.ContainerSpec, secrets []workload.SecretReference, o tenantOptions, logs *types.LogConfiguration) types.ContainerDefinition {
	d := types.ContainerDefinition{
		Name:             aws.String(c.Name),
		Image:            aws.String(c.Image),
		Essential:        aws.Bool(true),
		EntryPoint:       c.Command,
		Command:          c.Args,
		LogConfiguration: logs,
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		d.Environment = append(d.Environment, types.KeyValuePair{Name: aws.String(k), Value: aws.String(c.Env[k])})
	}
	for _, s := range secrets {
		if s.Container == c.Name {
			d.Secrets = append(d.Secrets, types.Secret{Name: aws.String(s.Name), ValueFrom: aws.String(s.Value.Reveal())})
		}
	}
	for _, p := range c.Ports {
		m := types.PortMapping{ContainerPort: aws.Int32(int32(p.ContainerPort)), Protocol: types.TransportProtocol(p.Protocol)}
		if p.Name != "" {
			m.Name = aws.String(p.Name)
		}
		if p.HostPort != 0 {
			m.HostPort = aws.Int32(int32(p.HostPort))
		} else if o.awsvpc() {
			m.HostPort = m.ContainerPort
		}
		d.PortMappings = append(d.PortMappings, m)
	}
	if c.Resources.CPUMillicores > 0 {
		d.Cpu = int32(cpuUnits(c.Resources.CPUMillicores))
	}
	if c.Resources.MemoryMiB > 0 {
		d.Memory = aws.Int32(int32(c.Resources.MemoryMiB))
	}
	if hc := c.HealthCheck; hc != nil && len(hc.Command) > 0 {
		d.HealthCheck = &types.HealthCheck{
			Command:  append([]string{"CMD"}, hc.Command...),
			Interval: aws.Int32(int32(hc.Interval.Seconds())),
			Timeout:  aws.Int32(int32(hc.Timeout.Seconds())),
			Retries:  aws.Int32(int32(hc.Retries)),
		}
		if s := int32(hc.StartPeriod.Seconds()); s > 0 {
			d.HealthCheck.StartPeriod = aws.Int32(s)
		}
	}
	return d
}

// baseTaskDefinition reads the task_definition_arn revision a workload is
// built over.
func (p *Provider) baseTaskDefinition(ctx context.Context, f *found, o tenantOptions) (*types.TaskDefinition, error) {
	if o.TaskDefinitionARN == "" {
		return nil, nil
	}
	td, err := p.revision(ctx, f, o.TaskDefinitionARN)
	if err != nil {
		return nil, awsError("describe base task definition "+o.TaskDefinitionARN, err)
	}
	return td, nil
}

// revision reads a task definition revision, once: a revision never
// changes. The error is the SDK's.
func (p *Provider) revision(ctx context.Context, f *found, arn string) (*types.TaskDefinition, error) {
	if v, ok := p.revisions.Load(arn); ok {
		return v.(*types.TaskDefinition), nil
	}
	out, err := f.client.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	if out.TaskDefinition == nil {
		return nil, fmt.Errorf("ECS described no task definition %s", arn)
	}
	p.revisions.Store(arn, out.TaskDefinition)
	return out.TaskDefinition, nil
}

// ensureTaskDefinition returns the ARN of a revision of the tenant's family
// registered from in: the latest active one when it was (a register that
// crashed before the service took it), else a new one. The latest revision
// is taken only when its tags say landlord registered it from in and its
// content agrees: a revision registered by hand as a copy of landlord's,
// tags included, is not landlord's. registered reports whether this call
// registered it.
func (p *Provider) ensureTaskDefinition(ctx context.Context, f *found, tenantID string, in *ecs.RegisterTaskDefinitionInput, tags map[string]string) (taskARN string, registered bool, err error) {
	hash := p.fingerprint(in)
	latest, err := f.client.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{
		TaskDefinition: in.Family, Include: []types.TaskDefinitionField{types.TaskDefinitionFieldTags},
	})
	switch {
	case err == nil && latest.TaskDefinition != nil && tagMap(latest.Tags)[tagTaskHash] == hash && tagMap(latest.Tags)[tagTenantID] == tenantID &&
		p.sameTaskDefinition(in, latest.TaskDefinition):
		return aws.ToString(latest.TaskDefinition.TaskDefinitionArn), false, nil
	case err != nil && !isCode(err, "ClientException"): // ClientException: the family has no active revision
		return "", false, awsError("describe task definition "+aws.ToString(in.Family), err)
	}
	withTags := *in
	tags = maps.Clone(tags)
	tags[tagTaskHash] = hash
	withTags.Tags = tagsOf(tags)
	out, err := f.client.RegisterTaskDefinition(ctx, &withTags)
	if err != nil {
		return "", false, awsError("register task definition "+aws.ToString(in.Family), err)
	}
	taskARN = aws.ToString(out.TaskDefinition.TaskDefinitionArn)
	p.log(tenantID).Info("task definition registered", "task_definition", taskARN)
	return taskARN, true, nil
}

// sameTaskDefinition reports whether the revision got is what in
// registers.
func (p *Provider) sameTaskDefinition(in *ecs.RegisterTaskDefinitionInput, got *types.TaskDefinition) bool {
	var c provider.DriftCollector
	p.compareTaskDefinition(&c, in, got)
	return len(c.Drift()) == 0
}

// deregister deregisters the active revisions of the tenant's family that
// carry its tag, except those in keep.
func (p *Provider) deregister(ctx context.Context, f *found, tenantID string, keep ...string) error {
	family := f.pl.family()
	pages := ecs.NewListTaskDefinitionsPaginator(f.client, &ecs.ListTaskDefinitionsInput{
		FamilyPrefix: aws.String(family), Status: types.TaskDefinitionStatusActive,
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return awsError("list task definitions of "+family, err)
		}
		for _, td := range page.TaskDefinitionArns {
			a, err := parseARN(td)
			if name, ok := a.typed("task-definition"); err != nil || !ok || familyOf(name) != family || slices.Contains(keep, td) {
				continue // familyPrefix matches longer families too
			}
			desc, err := f.client.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{
				TaskDefinition: aws.String(td), Include: []types.TaskDefinitionField{types.TaskDefinitionFieldTags},
			})
			if err != nil {
				return awsError("describe task definition "+td, err)
			}
			if tagMap(desc.Tags)[tagTenantID] != tenantID {
				continue
			}
			if _, err := f.client.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String(td)}); err != nil {
				return awsError("deregister task definition "+td, err)
			}
			p.log(tenantID).Info("task definition deregistered", "task_definition", td)
		}
	}
	return nil
}

// familyOf is the family of "family:revision".
func familyOf(s string) string {
	family, _, _ := strings.Cut(s, ":")
	return family
}
