package ecs

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// GetStatus reads the tenant's service live, finding it by the tenant id
// alone (see Destroy). The Manager calls GetStatusOf.
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	f, err := p.locate(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("ecs: status of tenant %s: %w", tenantID, err)
	}
	return p.status(ctx, f, tenantID)
}

// GetStatusOf reads the tenant's service live, where it runs: the primary
// deployment's rollout, its running tasks, their containers and addresses,
// and why tasks stopped when they fail to start.
func (p *Provider) GetStatusOf(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	pl, err := p.placementOfRef(t)
	if err != nil {
		return nil, fmt.Errorf("ecs: status of tenant %s: %w: %w", t.ID, provider.ErrTenantNotFound, err)
	}
	f, err := p.describe(ctx, pl, t.ID)
	if err != nil {
		return nil, fmt.Errorf("ecs: status of tenant %s: %w", t.ID, err)
	}
	if f.live() {
		p.hints.Store(t.ID, pl)
	}
	return p.status(ctx, f, t.ID)
}

func (p *Provider) status(ctx context.Context, f *found, tenantID string) (*provider.ComputeStatus, error) {
	if !f.live() {
		if f.client != nil {
			p.reads(f.client, f.pl.cluster).remember(f.pl.service, nil)
		}
		where := "any cluster landlord knows of"
		if f.pl.cluster != "" {
			where = f.pl.cluster
		}
		return nil, fmt.Errorf("ecs: no live service of tenant %s in %s: %w", tenantID, where, provider.ErrTenantNotFound)
	}
	s := f.service
	primary := primaryDeployment(s)
	st := &provider.ComputeStatus{
		TenantID: tenantID, ProviderType: Name, Health: provider.HealthUnknown, LastUpdated: changedAt(primary, p.now()),
		Metadata: map[string]string{"service": aws.ToString(s.ServiceArn), "task_definition": aws.ToString(s.TaskDefinition)},
	}
	st.Generation, _ = strconv.ParseInt(tagMap(s.Tags)[tagGeneration], 10, 64)
	tasks, err := p.tasks(ctx, f, types.DesiredStatusRunning)
	if err != nil {
		return nil, fmt.Errorf("ecs: status of tenant %s: %w", tenantID, err)
	}
	var running []types.Task
	for _, t := range tasks {
		if aws.ToString(t.TaskDefinitionArn) == aws.ToString(primary.TaskDefinition) && aws.ToString(t.LastStatus) == "RUNNING" {
			running = append(running, t)
		}
	}
	if len(tasks) > 0 {
		st.Containers = containerStatuses(pick(tasks, running))
	}
	st.Health = health(running)
	if len(running) > 0 {
		ports := p.ports(ctx, f, aws.ToString(primary.TaskDefinition))
		for _, t := range running {
			st.Endpoints = append(st.Endpoints, endpoints(t, ports)...)
		}
	}
	switch {
	case primary.RolloutState == types.DeploymentRolloutStateFailed:
		st.State = provider.StateFailed
		st.Message = "the rollout failed: " + aws.ToString(primary.RolloutStateReason) + p.stoppedReason(ctx, f)
	case s.DesiredCount == 0:
		st.State = provider.StateStopped
		st.Message = "the service runs no tasks (desired_count 0)"
	case settled(s, primary) && int32(len(running)) >= primary.DesiredCount:
		st.State = provider.StateRunning
	case settled(s, primary) && len(running) > 0:
		st.State = provider.StateDegraded
		st.Message = fmt.Sprintf("%d of %d tasks run", len(running), primary.DesiredCount)
	default:
		st.State = provider.StatePending
		st.Message = fmt.Sprintf("ECS is rolling out %s: %d of %d tasks run", aws.ToString(primary.TaskDefinition), primary.RunningCount, primary.DesiredCount)
		if primary.FailedTasks > 0 {
			st.Message += fmt.Sprintf("; %d failed to start", primary.FailedTasks) + p.stoppedReason(ctx, f)
		}
	}
	return st, nil
}

// primaryDeployment is the deployment ECS rolls out, or an empty one.
func primaryDeployment(s *types.Service) types.Deployment {
	for _, d := range s.Deployments {
		if aws.ToString(d.Status) == "PRIMARY" {
			return d
		}
	}
	return types.Deployment{TaskDefinition: s.TaskDefinition, DesiredCount: s.DesiredCount}
}

// changedAt is when the deployment last changed, which the controller's
// progress deadline counts from: a rollout that stays stuck does not move
// it. now when ECS does not say.
func changedAt(d types.Deployment, now time.Time) time.Time {
	switch {
	case d.UpdatedAt != nil:
		return *d.UpdatedAt
	case d.CreatedAt != nil:
		return *d.CreatedAt
	default:
		return now
	}
}

// settled reports whether the primary deployment has finished rolling out
// and no older one still drains.
func settled(s *types.Service, primary types.Deployment) bool {
	done := primary.RolloutState == types.DeploymentRolloutStateCompleted || primary.RolloutState == ""
	return done && len(s.Deployments) <= 1
}

// tasks lists the service's tasks of one desired status, every page, and
// describes them, the DescribeTasks calls shared with concurrent reads in
// the same cluster (see reads.go). A task that ended between the two is
// left out.
func (p *Provider) tasks(ctx context.Context, f *found, desired types.DesiredStatus) ([]types.Task, error) {
	running := desired == types.DesiredStatusRunning
	if running {
		if tasks, ok, err := p.knownTasks(ctx, f); ok || err != nil {
			return tasks, err
		}
	}
	var arns []string
	pages := ecs.NewListTasksPaginator(f.client, &ecs.ListTasksInput{
		Cluster: aws.String(f.pl.cluster), ServiceName: aws.String(f.pl.service), DesiredStatus: desired, MaxResults: aws.Int32(100),
	})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, awsError("list tasks of "+f.pl.service, err)
		}
		arns = append(arns, page.TaskArns...)
	}
	if running {
		p.reads(f.client, f.pl.cluster).remember(f.pl.service, arns)
	}
	if len(arns) == 0 {
		return nil, nil
	}
	got, err := p.reads(f.client, f.pl.cluster).tasks.get(ctx, arns)
	if err != nil {
		return nil, awsError("describe tasks of "+f.pl.service, err)
	}
	tasks := make([]types.Task, 0, len(arns))
	for _, arn := range arns {
		r, ok := got[arn]
		switch {
		case !ok:
		case r.err != nil:
			return nil, r.err
		default:
			tasks = append(tasks, r.task)
		}
	}
	return tasks, nil
}

// knownTasks describes the tasks meant to run that the service's last
// listing found, when they are still all it has: as many as ECS counts
// running and pending now, each still meant to run. A task ECS starts is
// counted (runningCount, pendingCount) and one it replaces or stops is
// first meant to stop, so the same number of the same tasks, all meant to
// run, are the service's; anything else (a task started, stopped, gone,
// or a count ECS has not caught up with) is listed again. The tasks are
// described live, so a status built from them is as live as one built
// from a listing, and a resync of a fleet that runs as it did costs no
// ListTasks call: ECS refills ListTasks and DescribeTasks together at 20
// calls a second, which a ListTasks for every tenant would use up.
func (p *Provider) knownTasks(ctx context.Context, f *found) ([]types.Task, bool, error) {
	r := p.reads(f.client, f.pl.cluster)
	arns := r.knownOf(f.pl.service)
	if len(arns) == 0 || len(arns) != int(f.service.RunningCount+f.service.PendingCount) {
		return nil, false, nil
	}
	got, err := r.tasks.get(ctx, arns)
	if err != nil {
		return nil, false, awsError("describe tasks of "+f.pl.service, err)
	}
	tasks := make([]types.Task, 0, len(arns))
	for _, arn := range arns {
		t, ok := got[arn]
		switch {
		case ok && t.err != nil:
			return nil, false, t.err
		case !ok || aws.ToString(t.task.DesiredStatus) != string(types.DesiredStatusRunning):
			return nil, false, nil
		}
		tasks = append(tasks, t.task)
	}
	return tasks, true, nil
}

// stoppedReason is why the service's latest task stopped, for a status
// message ("; a task stopped: CannotPullContainerError: …"), or "".
func (p *Provider) stoppedReason(ctx context.Context, f *found) string {
	stopped, err := p.tasks(ctx, f, types.DesiredStatusStopped)
	if err != nil || len(stopped) == 0 {
		return ""
	}
	latest := stopped[0]
	for _, t := range stopped[1:] {
		if t.StoppedAt != nil && (latest.StoppedAt == nil || t.StoppedAt.After(*latest.StoppedAt)) {
			latest = t
		}
	}
	reason := aws.ToString(latest.StoppedReason)
	for _, c := range latest.Containers {
		if r := aws.ToString(c.Reason); r != "" {
			reason += " (container " + aws.ToString(c.Name) + ": " + r + ")"
		}
	}
	if reason == "" {
		return ""
	}
	return "; a task stopped: " + reason
}

// pick is the task whose containers a status shows: a running one of the
// primary deployment, else the newest.
func pick(all, running []types.Task) types.Task {
	if len(running) > 0 {
		return running[0]
	}
	return all[len(all)-1]
}

func containerStatuses(t types.Task) []provider.ContainerStatus {
	var out []provider.ContainerStatus
	for _, c := range t.Containers {
		cs := provider.ContainerStatus{Name: aws.ToString(c.Name), Image: aws.ToString(c.Image), ID: aws.ToString(c.RuntimeId),
			Health: containerHealth(c.HealthStatus), Message: aws.ToString(c.Reason)}
		switch aws.ToString(c.LastStatus) {
		case "RUNNING":
			cs.State = provider.ContainerRunning
		case "STOPPED":
			cs.State = provider.ContainerExited
			if c.ExitCode != nil {
				code := int(*c.ExitCode)
				cs.ExitCode = &code
			}
		case "":
			cs.State = provider.ContainerUnknown
		default:
			cs.State = provider.ContainerCreated
		}
		out = append(out, cs)
	}
	return out
}

func containerHealth(h types.HealthStatus) provider.HealthStatus {
	switch h {
	case types.HealthStatusHealthy:
		return provider.HealthHealthy
	case types.HealthStatusUnhealthy:
		return provider.HealthUnhealthy
	default:
		return provider.HealthUnknown
	}
}

// health is the tasks' health: unhealthy if one is, healthy if all are.
func health(tasks []types.Task) provider.HealthStatus {
	if len(tasks) == 0 {
		return provider.HealthUnknown
	}
	healthy := 0
	for _, t := range tasks {
		switch t.HealthStatus {
		case types.HealthStatusUnhealthy:
			return provider.HealthUnhealthy
		case types.HealthStatusHealthy:
			healthy++
		}
	}
	if healthy == len(tasks) {
		return provider.HealthHealthy
	}
	return provider.HealthUnknown
}

// portMapping is a container port of a task definition.
type portMapping struct {
	container, name string
	port            int
	protocol        workload.Protocol
}

// ports reads the port mappings of a task definition revision.
func (p *Provider) ports(ctx context.Context, f *found, taskARN string) []portMapping {
	if taskARN == "" {
		return nil
	}
	td, err := p.revision(ctx, f, taskARN)
	if err != nil {
		return nil // endpoints are left out until it can be read
	}
	var ports []portMapping
	for _, c := range td.ContainerDefinitions {
		for _, m := range c.PortMappings {
			proto := workload.ProtocolTCP
			if m.Protocol == types.TransportProtocolUdp {
				proto = workload.ProtocolUDP
			}
			ports = append(ports, portMapping{container: aws.ToString(c.Name), name: aws.ToString(m.Name), port: int(aws.ToInt32(m.ContainerPort)), protocol: proto})
		}
	}
	return ports
}

// endpoints are the task's private address with each container port.
func endpoints(t types.Task, ports []portMapping) []provider.Endpoint {
	ip := taskIP(t)
	if ip == "" {
		return nil
	}
	var out []provider.Endpoint
	for _, m := range ports {
		out = append(out, provider.Endpoint{Container: m.container, Name: m.name, ContainerPort: m.port, Protocol: m.protocol,
			Address: net.JoinHostPort(ip, strconv.Itoa(m.port))})
	}
	return out
}

// taskIP is the private IPv4 address of the task's network interface.
func taskIP(t types.Task) string {
	for _, a := range t.Attachments {
		if aws.ToString(a.Type) != "ElasticNetworkInterface" {
			continue
		}
		for _, d := range a.Details {
			if strings.EqualFold(aws.ToString(d.Name), "privateIPv4Address") {
				return aws.ToString(d.Value)
			}
		}
	}
	for _, c := range t.Containers {
		for _, n := range c.NetworkInterfaces {
			if ip := aws.ToString(n.PrivateIpv4Address); ip != "" {
				return ip
			}
		}
	}
	return ""
}
