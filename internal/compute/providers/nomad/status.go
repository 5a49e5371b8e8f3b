package nomad

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// GetStatus reads the tenant's job, its allocations and its latest
// deployment, live from Nomad (and, once per allocation, the host ports
// it was given, which never change).
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	jobID, job, err := p.locate(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("nomad: status of tenant %s: %w", tenantID, err)
	}
	return p.statusOf(ctx, p.client, tenantID, jobID, job)
}

// GetStatusOf is GetStatus for a tenant whose name (and recorded job) is
// known: no scan.
func (p *Provider) GetStatusOf(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	c, jobID, err := p.jobOfRef(t)
	if err != nil {
		return nil, err
	}
	job, err := p.ownJob(ctx, c, t.ID, jobID)
	if err != nil {
		return nil, fmt.Errorf("nomad: status of tenant %s: %w", t.ID, err)
	}
	return p.statusOf(ctx, c, t.ID, jobID, job)
}

// statusOf builds the status of the tenant's job.
func (p *Provider) statusOf(ctx context.Context, c *api.Client, tenantID, jobID string, job *api.Job) (*provider.ComputeStatus, error) {
	fail := func(err error) (*provider.ComputeStatus, error) {
		return nil, fmt.Errorf("nomad: status of tenant %s: %w", tenantID, err)
	}
	allocs, _, err := c.Jobs().Allocations(jobID, false, query(ctx))
	if err != nil {
		return fail(apiError("list the allocations of job "+jobID, err))
	}
	version := deref(job.Version)
	st := &provider.ComputeStatus{TenantID: tenantID, ProviderType: Name, Health: provider.HealthUnknown,
		LastUpdated: time.Unix(0, deref(job.SubmitTime)), Metadata: map[string]string{"job": jobID, "job_version": strconv.FormatUint(version, 10)}}
	st.Generation, _ = strconv.ParseInt(job.Meta[metaGeneration], 10, 64)

	// The allocations of the job's current version that should run, newest
	// first.
	var current []*api.AllocationListStub
	for _, a := range allocs {
		if terminal(a.ClientStatus) {
			p.allocPorts.Delete(a.ID) // what is remembered of it is no longer needed
		}
		if a.JobVersion == version && a.DesiredStatus == api.AllocDesiredStatusRun {
			current = append(current, a)
		}
		st.LastUpdated = latest(st.LastUpdated, time.Unix(0, a.ModifyTime))
	}
	slices.SortFunc(current, func(a, b *api.AllocationListStub) int { return cmp.Compare(b.CreateIndex, a.CreateIndex) })
	tg := job.TaskGroups[0]
	want := deref(tg.Count)
	running, healthy, unhealthy := 0, 0, 0
	for _, a := range current {
		if allRunning(a) {
			running++
		}
		if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
			if *ds.Healthy {
				healthy++
			} else {
				unhealthy++
			}
		}
	}
	if len(current) > 0 {
		st.Containers = containersOf(tg, current[0])
	}
	for _, a := range current {
		if allRunning(a) {
			eps, err := p.endpointsOf(ctx, c, a.ID, job)
			if err != nil {
				return fail(err)
			}
			st.Endpoints = append(st.Endpoints, eps...)
		}
	}

	switch {
	case stopped(job):
		st.State, st.Message = provider.StateStopped, "the job was stopped (nomad job stop); landlord registers it again when it repairs the tenant"
		return st, nil
	case want == 0:
		// Scaled to nothing on purpose: all there is runs.
		st.State, st.Message = provider.StateRunning, "count is 0: no allocation runs"
		return st, nil
	}

	// The latest deployment says whether the version is still rolling out
	// or failed to; the allocations say the rest.
	dep, _, err := c.Jobs().LatestDeployment(jobID, query(ctx))
	if err != nil && !isNotFound(err) {
		return fail(apiError("read the latest deployment of job "+jobID, err))
	}
	ofVersion := dep != nil && dep.JobVersion == version
	cause := failureOf(current, allocs, version)
	switch {
	case ofVersion && dep.Status == api.DeploymentStatusFailed:
		st.State, st.Health = provider.StateFailed, provider.HealthUnhealthy
		st.Message = joinMessage("deployment failed: "+dep.StatusDescription, cause)
	case unhealthy > 0:
		st.State, st.Health = provider.StateFailed, provider.HealthUnhealthy
		st.Message = joinMessage(fmt.Sprintf("%d of %d allocations unhealthy", unhealthy, want), cause)
	case dep != nil && dep.JobVersion > version:
		st.State, st.Message = provider.StatePending, "deployment of job version "+strconv.FormatUint(dep.JobVersion, 10)+" starting"
	case ofVersion && dep.Status != api.DeploymentStatusSuccessful && dep.Status != api.DeploymentStatusCancelled:
		st.State, st.Health = provider.StatePending, provider.HealthStarting
		st.Message = joinMessage(fmt.Sprintf("deployment %s: %d of %d allocations healthy", dep.Status, healthy, want), cause)
	case running >= want:
		// Deployed (or a job without deployments): running is what counts;
		// the allocations' health is their deployment's.
		st.State, st.Health = provider.StateRunning, provider.HealthHealthy
	case failedNow(current):
		st.State, st.Message = provider.StateFailed, cause
	case running > 0:
		st.State, st.Message = provider.StateDegraded, joinMessage(fmt.Sprintf("%d of %d allocations running", running, want), cause)
	default:
		st.State, st.Message = provider.StatePending, joinMessage(fmt.Sprintf("%d of %d allocations running", running, want), cause)
	}
	return st, nil
}

// Task states, as Nomad reports them.
const (
	taskPending = "pending"
	taskRunning = "running"
	taskDead    = "dead"
)

// allRunning reports whether every task of an allocation runs.
func allRunning(a *api.AllocationListStub) bool {
	if a.ClientStatus != api.AllocClientStatusRunning || len(a.TaskStates) == 0 {
		return false
	}
	for _, ts := range a.TaskStates {
		if ts.State != taskRunning {
			return false
		}
	}
	return true
}

// failedNow reports whether an allocation of the current version failed.
func failedNow(current []*api.AllocationListStub) bool {
	return slices.ContainsFunc(current, func(a *api.AllocationListStub) bool { return a.ClientStatus == api.AllocClientStatusFailed })
}

// failureOf words why the current version's allocations (else the
// newest ones of the same version that Nomad replaced) do not run: the
// last telling event of each task that is not running.
func failureOf(current, all []*api.AllocationListStub, version uint64) string {
	candidates := current
	if len(candidates) == 0 {
		for _, a := range all {
			if a.JobVersion == version {
				candidates = append(candidates, a)
			}
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range candidates {
		for _, task := range slices.Sorted(maps.Keys(a.TaskStates)) {
			ts := a.TaskStates[task]
			if ts.State == taskRunning && !ts.Failed {
				continue
			}
			if msg := taskProblem(ts); msg != "" && !seen[task+msg] {
				seen[task+msg] = true
				out = append(out, "task "+task+": "+msg)
			}
		}
	}
	return strings.Join(out, "; ")
}

// taskProblem is the telling events of a task that does not run, newest
// first: why it stopped, and why it is not restarted.
func taskProblem(ts *api.TaskState) string {
	var out []string
	for _, ev := range slices.Backward(ts.Events) {
		var msg string
		switch ev.Type {
		case api.TaskTerminated:
			msg = fmt.Sprintf("exited with code %d", ev.ExitCode)
			if ev.Signal != 0 {
				msg += fmt.Sprintf(" (signal %d)", ev.Signal)
			}
		case api.TaskDriverFailure:
			msg = "driver failure: " + cmp.Or(ev.DriverError, ev.DisplayMessage)
		case api.TaskFailedValidation:
			msg = "failed validation: " + cmp.Or(ev.ValidationError, ev.DisplayMessage)
		case api.TaskSetupFailure:
			msg = "setup failure: " + cmp.Or(ev.SetupError, ev.DisplayMessage)
		case api.TaskNotRestarting:
			msg = "not restarting: " + cmp.Or(ev.RestartReason, ev.DisplayMessage)
		case "Template":
			msg = "template: " + ev.DisplayMessage
		default:
			continue
		}
		msg = strings.Join(strings.Fields(msg), " ")
		if !slices.Contains(out, msg) {
			out = append(out, msg)
		}
		if len(out) == 2 {
			break
		}
	}
	if ts.Restarts > 0 {
		out = append(out, fmt.Sprintf("restarted %d times", ts.Restarts))
	}
	return strings.Join(out, "; ")
}

// containersOf is the state of each task of an allocation.
func containersOf(tg *api.TaskGroup, a *api.AllocationListStub) []provider.ContainerStatus {
	var out []provider.ContainerStatus
	for _, task := range tg.Tasks {
		cs := provider.ContainerStatus{Name: task.Name, State: provider.ContainerCreated, Health: provider.HealthUnknown, ID: a.ID}
		if image, ok := task.Config["image"].(string); ok {
			cs.Image = image
		}
		if ts := a.TaskStates[task.Name]; ts != nil {
			cs.RestartCount = int(ts.Restarts)
			switch ts.State {
			case taskRunning:
				cs.State = provider.ContainerRunning
			case taskDead:
				cs.State = provider.ContainerExited
			case taskPending:
				if ts.Restarts > 0 {
					cs.State = provider.ContainerRestarting
				}
			}
			for _, ev := range slices.Backward(ts.Events) {
				if ev.Type == api.TaskTerminated {
					code := ev.ExitCode
					cs.ExitCode = &code
					break
				}
			}
			cs.Message = taskProblem(ts)
		}
		if ds := a.DeploymentStatus; ds != nil && ds.Healthy != nil {
			cs.Health = provider.HealthUnhealthy
			if *ds.Healthy {
				cs.Health = provider.HealthHealthy
			}
		}
		out = append(out, cs)
	}
	return out
}

// endpointsOf are the host addresses of an allocation's published ports.
// The ports of an allocation never change, so they are read once per
// allocation and remembered.
func (p *Provider) endpointsOf(ctx context.Context, c *api.Client, allocID string, job *api.Job) ([]provider.Endpoint, error) {
	var ports []api.PortMapping
	if v, ok := p.allocPorts.Load(allocID); ok {
		ports = v.([]api.PortMapping)
	} else {
		a, _, err := c.Allocations().Info(allocID, query(ctx))
		if err != nil {
			return nil, apiError("read allocation "+allocID, err)
		}
		if a.AllocatedResources != nil {
			ports = a.AllocatedResources.Shared.Ports
		}
		p.allocPorts.Store(allocID, ports)
	}
	byLabel := map[string]api.PortMapping{}
	for _, pm := range ports {
		byLabel[pm.Label] = pm
	}
	var out []provider.Endpoint
	for _, pt := range portsOfJob(job) {
		pm, ok := byLabel[pt.label]
		if !ok || pm.Value == 0 {
			continue
		}
		out = append(out, provider.Endpoint{Container: pt.container, Name: pt.name, ContainerPort: pt.containerPort, Protocol: pt.protocol,
			Address: net.JoinHostPort(pm.HostIP, strconv.Itoa(pm.Value))})
	}
	return out, nil
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func joinMessage(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ": ")
}
