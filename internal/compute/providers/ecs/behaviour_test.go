package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// env is a provider on a fake ECS, with a Manager to resolve configs.
type env struct {
	srv     *ecsfake.Server
	p       *ecs.Provider
	manager *compute.Manager
	n       int
}

func newEnv(t *testing.T, opts ecsfake.Options, block string) *env {
	t.Helper()
	srv := startFake(t, opts)
	if block == "" {
		block = fargateBlock(srv)
	}
	block = strings.ReplaceAll(block, "FAKE_URL", srv.URL)
	p := newProvider(t, block, nil)
	return &env{srv: srv, p: p, manager: computetest.Manager(t, p, compute.ManagerOptions{DefaultProvider: ecs.Name})}
}

// spec resolves config for a new tenant called name.
func (e *env) spec(t *testing.T, name, config string) *provider.TenantComputeSpec {
	t.Helper()
	e.n++
	res, err := e.manager.Resolve(context.Background(), compute.ResolveRequest{
		TenantID: fmt.Sprintf("0190d3c2-0000-7000-8000-%012d", e.n), TenantName: name, Generation: 1, ComputeConfig: json.RawMessage(config)})
	if err != nil {
		t.Fatalf("resolve %s: %v", config, err)
	}
	return res.Spec
}

// next resolves config as the next generation of spec's tenant.
func (e *env) next(t *testing.T, spec *provider.TenantComputeSpec, config string) *provider.TenantComputeSpec {
	t.Helper()
	res, err := e.manager.Resolve(context.Background(), compute.ResolveRequest{
		TenantID: spec.TenantID, TenantName: spec.TenantName, Generation: spec.Generation + 1, ComputeConfig: json.RawMessage(config)})
	if err != nil {
		t.Fatalf("resolve %s: %v", config, err)
	}
	return res.Spec
}

// waitState polls GetStatus until the workload is in state.
func (e *env) waitState(t *testing.T, tenantID string, state provider.ComputeState) *provider.ComputeStatus {
	t.Helper()
	var last *provider.ComputeStatus
	poll.Until(t, fmt.Sprintf("tenant %s reaches %s", tenantID, state), 20*time.Second, func() (bool, string) {
		var err error
		last, err = e.p.GetStatus(context.Background(), tenantID)
		return err == nil && last.State == state, fmt.Sprintf("%+v, %v", last, err)
	})
	return last
}

func TestTaskDefinitionAsGiven(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	td, err := e.srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("tenant-app"), NetworkMode: types.NetworkModeAwsvpc, RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
		Cpu: aws.String("256"), Memory: aws.String("512"),
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("web"), Image: aws.String("ghcr.io/example/web:7"),
			PortMappings: []types.PortMapping{{ContainerPort: aws.Int32(80)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(td.TaskDefinition.TaskDefinitionArn)
	spec := e.spec(t, "given", fmt.Sprintf(`{"task_definition_arn": %q, "desired_count": 2}`, arn))
	res, err := e.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResourceIDs["task_definition"] != arn {
		t.Errorf("resource ids %v, want the given task definition", res.ResourceIDs)
	}
	st := e.waitState(t, spec.TenantID, provider.StateRunning)
	if len(st.Containers) != 1 || st.Containers[0].Name != "web" || st.Containers[0].Image != "ghcr.io/example/web:7" {
		t.Errorf("containers %+v, want the task definition's web", st.Containers)
	}
	if len(st.Endpoints) != 2 || st.Endpoints[0].ContainerPort != 80 {
		t.Errorf("endpoints %+v, want port 80 of each of 2 tasks", st.Endpoints)
	}
	if n := len(e.srv.TaskDefinitions("landlord-given")); n != 0 {
		t.Errorf("%d revisions registered for a tenant that runs a given task definition", n)
	}
}

func TestBaseTaskDefinitionKeepsRolesAndLogs(t *testing.T) {
	// No execution_role_arn in the block: the base's role is the tenant's.
	e := newEnv(t, ecsfake.Options{}, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "endpoint": "FAKE_URL", "launch_type": "FARGATE", "subnets": ["subnet-0a1b2c3d"]}`)
	logs := &types.LogConfiguration{LogDriver: types.LogDriverAwslogs, Options: map[string]string{"awslogs-group": "/landlord", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "app"}}
	td, err := e.srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("base"), NetworkMode: types.NetworkModeAwsvpc, RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
		Cpu: aws.String("256"), Memory: aws.String("512"), ExecutionRoleArn: aws.String("arn:aws:iam::123456789012:role/exec"),
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("x"), Image: aws.String("x"), LogConfiguration: logs}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, "based", fmt.Sprintf(`{"task_definition_arn": %q, "image": "ghcr.io/example/app:2"}`, aws.ToString(td.TaskDefinition.TaskDefinitionArn)))
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	revs := e.srv.TaskDefinitions("landlord-based")
	if len(revs) != 1 {
		t.Fatalf("%d revisions, want 1", len(revs))
	}
	got := revs[0]
	if aws.ToString(got.ExecutionRoleArn) != "arn:aws:iam::123456789012:role/exec" || got.ContainerDefinitions[0].LogConfiguration == nil ||
		got.ContainerDefinitions[0].LogConfiguration.Options["awslogs-group"] != "/landlord" || aws.ToString(got.ContainerDefinitions[0].Image) != "ghcr.io/example/app:2" {
		t.Errorf("revision %+v does not keep the base's role and log configuration with the tenant's image", got)
	}
}

func TestFailingTasks(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	const reason = "CannotPullContainerError: pull image manifest has been retried 5 time(s): ghcr.io/example/missing:1 not found"
	e.srv.FailImage("ghcr.io/example/missing:1", reason)
	spec := e.spec(t, "broken", `{"image": "ghcr.io/example/missing:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	st := e.waitState(t, spec.TenantID, provider.StateFailed)
	if !strings.Contains(st.Message, "circuit breaker") || !strings.Contains(st.Message, reason) {
		t.Errorf("message %q does not say the circuit breaker stopped the rollout and why the task stopped", st.Message)
	}
}

func TestNoOpUpdateWritesNothing(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "quiet", `{"image": "ghcr.io/example/app:1", "desired_count": 2}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	e.srv.ResetCalls()
	again := e.next(t, spec, `{"image": "ghcr.io/example/app:1", "desired_count": 2}`)
	res, err := e.p.Update(context.Background(), spec.TenantID, again)
	if err != nil || !res.NoChanges() {
		t.Fatalf("Update with the same config = %+v, %v; want no changes", res, err)
	}
	for op, n := range e.srv.Calls() {
		if !strings.HasPrefix(op, "Describe") && !strings.HasPrefix(op, "List") {
			t.Errorf("a no-op update called %s %d times", op, n)
		}
	}
	scaled := e.next(t, spec, `{"image": "ghcr.io/example/app:1", "desired_count": 3}`)
	e.srv.ResetCalls()
	res, err = e.p.Update(context.Background(), spec.TenantID, scaled)
	if err != nil || len(res.Changes) != 1 || res.Changes[0].Field != "service/desired_count" {
		t.Fatalf("Update of desired_count = %+v, %v; want one change of desired_count", res, err)
	}
	if calls := e.srv.Calls(); calls["RegisterTaskDefinition"] != 0 || calls["UpdateService"] != 1 {
		t.Errorf("scaling called %v; want one UpdateService and no new revision", calls)
	}
}

func TestForeignServiceIsAConflict(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "taken", `{"image": "ghcr.io/example/app:1"}`)
	other := e.spec(t, "taken", `{"image": "ghcr.io/example/app:1"}`) // same name, another tenant
	if _, err := e.p.Provision(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	_, err := e.p.Provision(context.Background(), spec)
	if !errors.Is(err, provider.ErrProviderConflict) || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "not this tenant's") {
		t.Fatalf("Provision over another tenant's service = %v; want a terminal conflict", err)
	}
	if n := len(tenantServices(e.srv, other.TenantID)); n != 1 {
		t.Errorf("the other tenant has %d services after the refused Provision, want 1", n)
	}
}

func TestPlacementCannotMove(t *testing.T) {
	e := newEnv(t, ecsfake.Options{Clusters: []string{"landlord", "other"}}, "")
	spec := e.spec(t, "mover", `{"image": "ghcr.io/example/app:1"}`)
	res, err := e.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	moved := e.next(t, spec, fmt.Sprintf(`{"image": "ghcr.io/example/app:1", "cluster_arn": %q}`, e.srv.ClusterARN("other")))
	moved.ResourceIDs = res.ResourceIDs
	_, err = e.p.Update(context.Background(), spec.TenantID, moved)
	if !errors.Is(err, provider.ErrInvalidSpec) || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "cannot move") {
		t.Errorf("Update to another cluster = %v; want a terminal ErrInvalidSpec saying the service cannot move", err)
	}
	if svcs := e.srv.Services("other"); len(svcs) != 0 {
		t.Errorf("a service was created in the other cluster: %d", len(svcs))
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	e.srv.FailNext("CreateService", "ThrottlingException", 2)
	spec := e.spec(t, "throttled", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatalf("Provision through two throttled creates = %v; the SDK retries them", err)
	}
	e.srv.FailNext("CreateService", "AccessDeniedException", 1)
	denied := e.spec(t, "denied", `{"image": "ghcr.io/example/app:1"}`)
	_, err := e.p.Provision(context.Background(), denied)
	if !errors.Is(err, provider.ErrProvisionFailed) || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "AccessDeniedException") || !strings.Contains(err.Error(), "request id") {
		t.Errorf("Provision denied = %v; want a terminal ErrProvisionFailed with AWS's code and request id", err)
	}
	if n := e.srv.TaskDefinitions("landlord-denied"); len(n) != 1 || n[0].Status != types.TaskDefinitionStatusInactive {
		t.Errorf("the revision registered for a refused create is not deregistered: %+v", n)
	}
	e.srv.FailNext("*", "ServerException", 50)
	_, err = e.p.Provision(context.Background(), e.spec(t, "down", `{"image": "ghcr.io/example/app:1"}`))
	if err == nil || provider.IsTerminal(err) {
		t.Errorf("Provision while ECS fails = %v; want a retryable error", err)
	}
}

func TestClusterNotFound(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/nowhere", "endpoint": "FAKE_URL"}`)
	_, err := e.p.Provision(context.Background(), e.spec(t, "lost", `{"image": "ghcr.io/example/app:1"}`))
	if !errors.Is(err, provider.ErrInvalidSpec) || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "cluster_arn") {
		t.Errorf("Provision in a missing cluster = %v; want a terminal config error naming cluster_arn", err)
	}
	if err := e.p.CheckHealth(context.Background()); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("CheckHealth = %v; want the missing cluster named", err)
	}
}

func TestEventualConsistencyMakesOneService(t *testing.T) {
	e := newEnv(t, ecsfake.Options{CreateLag: 3}, "")
	spec := e.spec(t, "lagging", `{"image": "ghcr.io/example/app:1"}`)
	for range 3 {
		if _, err := e.p.Provision(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if n := len(tenantServices(e.srv, spec.TenantID)); n != 1 {
		t.Errorf("%d services after Provisions a describe could not yet see, want 1", n)
	}
}

func TestRecreateWhileDraining(t *testing.T) {
	e := newEnv(t, ecsfake.Options{DrainTime: 300 * time.Millisecond}, "")
	spec := e.spec(t, "again", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if err := e.p.Destroy(context.Background(), spec.TenantID); err != nil {
		t.Fatal(err)
	}
	// The same name for a new tenant while the old service drains.
	fresh := e.spec(t, "again", `{"image": "ghcr.io/example/app:2"}`)
	if _, err := e.p.Provision(context.Background(), fresh); err != nil {
		t.Fatalf("Provision while an earlier service of the name drains = %v; want it waited out", err)
	}
	e.waitState(t, fresh.TenantID, provider.StateRunning)
}

func TestLongTenantName(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	prefix := strings.Repeat("p", 200)
	spec := e.spec(t, strings.Repeat("n", 63), fmt.Sprintf(`{"image": "ghcr.io/example/app:1", "service_name_prefix": %q}`, prefix))
	res, err := e.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	name := res.ResourceIDs["service"][strings.LastIndex(res.ResourceIDs["service"], "/")+1:]
	if len(name) != 255 || !strings.HasPrefix(name, prefix) {
		t.Errorf("service name %q (%d characters); want the prefix, shortened to 255 with a hash", name, len(name))
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
}
