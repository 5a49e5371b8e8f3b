package ecs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// handUpdate is `aws ecs update-service` on the tenant's service.
func (e *env) handUpdate(t *testing.T, spec *provider.TenantComputeSpec, in awsecs.UpdateServiceInput) {
	t.Helper()
	in.Cluster, in.Service = aws.String(e.srv.ClusterARN("landlord")), aws.String("landlord-"+spec.TenantName)
	if _, err := e.srv.Client(context.Background()).UpdateService(context.Background(), &in); err != nil {
		t.Fatalf("update-service: %v", err)
	}
}

// service is the tenant's service as the fake holds it.
func (e *env) service(t *testing.T, spec *provider.TenantComputeSpec) types.Service {
	t.Helper()
	svcs := tenantServices(e.srv, spec.TenantID)
	if len(svcs) != 1 {
		t.Fatalf("tenant %s has %d live services, want 1", spec.TenantName, len(svcs))
	}
	return svcs[0]
}

// inspect returns the paths Inspect reports for spec.
func (e *env) inspect(t *testing.T, spec *provider.TenantComputeSpec) []provider.Drift {
	t.Helper()
	in, err := e.p.Inspect(context.Background(), spec)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	return in.Drift
}

func paths(drift []provider.Drift) []string {
	out := make([]string, len(drift))
	for i, d := range drift {
		out[i] = d.Path
	}
	return out
}

// TestUpdateRemovesOmittedLists: a config that drops load_balancers and
// service_registries takes them off the service (UpdateService with empty
// lists), and the service is not merely re-tagged as the new generation.
func TestUpdateRemovesOmittedLists(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	with := fmt.Sprintf(`{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}],
		"load_balancers": [{"target_group_arn": %q, "container_name": "app", "container_port": 8080}],
		"service_registries": [{"registry_arn": "arn:aws:servicediscovery:us-west-2:123456789012:service/srv-0123456789abcdef"}]}`, targetGroup("tg"))
	spec := e.spec(t, "lists", with)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if s := e.service(t, spec); len(s.LoadBalancers) != 1 || len(s.ServiceRegistries) != 1 {
		t.Fatalf("created with load balancers %v and registries %v, want one of each", s.LoadBalancers, s.ServiceRegistries)
	}
	without := e.next(t, spec, `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}]}`)
	res, err := e.p.Update(context.Background(), spec.TenantID, without)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeFields(res.Changes); !slices.Contains(got, "service/load_balancers") || !slices.Contains(got, "service/service_registries") {
		t.Errorf("Update's changes %v; want the load balancers and registries removed", got)
	}
	if s := e.service(t, spec); len(s.LoadBalancers) != 0 || len(s.ServiceRegistries) != 0 {
		t.Errorf("after a set without them the service keeps load balancers %v and registries %v", s.LoadBalancers, s.ServiceRegistries)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if d := e.inspect(t, without); len(d) != 0 {
		t.Errorf("Inspect after the update: %v", d)
	}
}

func changeFields(cs []provider.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Field
	}
	return out
}

// TestUpdateConvergesWhatTheHashTagHides: a change made by hand leaves the
// config hash tag as landlord set it; Update compares the live service and
// puts it back all the same.
func TestUpdateConvergesWhatTheHashTagHides(t *testing.T) {
	tests := []struct {
		name   string
		config string
		tamper awsecs.UpdateServiceInput
		path   string
		check  func(t *testing.T, s types.Service)
	}{
		{
			name:   "a target group attached by hand",
			config: `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}]}`,
			tamper: awsecs.UpdateServiceInput{LoadBalancers: []types.LoadBalancer{{TargetGroupArn: aws.String(targetGroup("hand")), ContainerName: aws.String("app"), ContainerPort: aws.Int32(8080)}}},
			path:   "service/load_balancers",
			check: func(t *testing.T, s types.Service) {
				if len(s.LoadBalancers) != 0 {
					t.Errorf("load balancers %v, want none", s.LoadBalancers)
				}
			},
		},
		{
			name:   "a grace period set by hand",
			config: `{"image": "ghcr.io/example/app:1"}`,
			tamper: awsecs.UpdateServiceInput{HealthCheckGracePeriodSeconds: aws.Int32(600)},
			path:   "service/health_check_grace_period",
			check: func(t *testing.T, s types.Service) {
				if aws.ToInt32(s.HealthCheckGracePeriodSeconds) != 0 {
					t.Errorf("grace period %d, want 0", aws.ToInt32(s.HealthCheckGracePeriodSeconds))
				}
			},
		},
		{
			name:   "Fargate Spot in place of the launch type",
			config: `{"image": "ghcr.io/example/app:1"}`,
			tamper: awsecs.UpdateServiceInput{CapacityProviderStrategy: []types.CapacityProviderStrategyItem{{CapacityProvider: aws.String("FARGATE_SPOT"), Weight: 1}}},
			path:   "service/capacity_provider_strategy",
			check: func(t *testing.T, s types.Service) {
				if s.LaunchType != types.LaunchTypeFargate || len(s.CapacityProviderStrategy) != 0 {
					t.Errorf("launch type %q, strategy %v; want FARGATE and no strategy", s.LaunchType, s.CapacityProviderStrategy)
				}
			},
		},
		{
			name:   "another platform version",
			config: `{"image": "ghcr.io/example/app:1", "platform_version": "1.4.0"}`,
			tamper: awsecs.UpdateServiceInput{PlatformVersion: aws.String("LATEST")},
			path:   "service/platform_version",
			check: func(t *testing.T, s types.Service) {
				if aws.ToString(s.PlatformVersion) != "1.4.0" {
					t.Errorf("platform version %q, want 1.4.0", aws.ToString(s.PlatformVersion))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, ecsfake.Options{}, "")
			spec := e.spec(t, "hidden", tt.config)
			if _, err := e.p.Provision(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
			e.waitState(t, spec.TenantID, provider.StateRunning)
			if d := e.inspect(t, spec); len(d) != 0 {
				t.Fatalf("Inspect after Provision: %v", d)
			}
			e.handUpdate(t, spec, tt.tamper)
			if got := paths(e.inspect(t, spec)); !slices.Contains(got, tt.path) {
				t.Fatalf("Inspect after the change reports %v, want %s", got, tt.path)
			}
			res, err := e.p.Update(context.Background(), spec.TenantID, spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(changeFields(res.Changes), tt.path) {
				t.Errorf("Update's changes %v, want %s", changeFields(res.Changes), tt.path)
			}
			tt.check(t, e.service(t, spec))
			e.waitState(t, spec.TenantID, provider.StateRunning)
			if d := e.inspect(t, spec); len(d) != 0 {
				t.Errorf("Inspect after the repair: %v", d)
			}
		})
	}
}

// TestScalingRange: with desired_count a range, the service starts at min
// and landlord leaves the count to auto scaling: a count set by the scaler
// is not drift, and an Update of another field keeps it.
func TestScalingRange(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "scaled", `{"image": "ghcr.io/example/app:1", "desired_count": {"min": 2, "max": 6}}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if got := e.service(t, spec).DesiredCount; got != 2 {
		t.Fatalf("created with %d tasks, want min 2", got)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	e.handUpdate(t, spec, awsecs.UpdateServiceInput{DesiredCount: aws.Int32(5)}) // as Application Auto Scaling does
	if d := e.inspect(t, spec); len(d) != 0 {
		t.Errorf("Inspect after the scaler's change reports %v; the count is the scaler's", d)
	}
	next := e.next(t, spec, `{"image": "ghcr.io/example/app:2", "desired_count": {"min": 2, "max": 6}}`)
	if _, err := e.p.Update(context.Background(), spec.TenantID, next); err != nil {
		t.Fatal(err)
	}
	if got := e.service(t, spec).DesiredCount; got != 5 {
		t.Errorf("after an Update of the image the service runs %d tasks, want the scaler's 5", got)
	}
	fixed := e.next(t, next, `{"image": "ghcr.io/example/app:2", "desired_count": 3}`)
	if got := paths(e.inspect(t, fixed)); !slices.Equal(got, []string{"service/desired_count"}) {
		t.Errorf("Inspect against a fixed count of 3 reports %v, want service/desired_count", got)
	}
	if _, err := e.p.Update(context.Background(), spec.TenantID, fixed); err != nil {
		t.Fatal(err)
	}
	if got := e.service(t, spec).DesiredCount; got != 3 {
		t.Errorf("after an Update to a fixed count the service runs %d tasks, want 3", got)
	}
}

// TestInspectGivenTaskDefinition: a config that runs task_definition_arn
// as it is is compared by ARN.
func TestInspectGivenTaskDefinition(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	register := func(image string) string {
		out, err := e.srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{
			Family: aws.String("given"), NetworkMode: types.NetworkModeAwsvpc, RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
			Cpu: aws.String("256"), Memory: aws.String("512"),
			ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("web"), Image: aws.String(image)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.TaskDefinition.TaskDefinitionArn)
	}
	arn := register("ghcr.io/example/web:1")
	spec := e.spec(t, "given", fmt.Sprintf(`{"task_definition_arn": %q}`, arn))
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if d := e.inspect(t, spec); len(d) != 0 {
		t.Fatalf("Inspect after Provision: %v", d)
	}
	other := register("ghcr.io/example/web:hacked")
	e.handUpdate(t, spec, awsecs.UpdateServiceInput{TaskDefinition: aws.String(other)})
	d := e.inspect(t, spec)
	if len(d) != 1 || d[0].Path != "service/task_definition" || d[0].Expected != arn || d[0].Found != other {
		t.Errorf("Inspect after the task definition was changed by hand: %v", d)
	}
}

// TestInspectNamesNoSecret: a secret reference changed by hand is drift at
// its key, with neither reference in the report.
func TestInspectNamesNoSecret(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	const ref = "arn:aws:ssm:us-west-2:123456789012:parameter/tenant/token"
	spec := e.spec(t, "secretive", fmt.Sprintf(`{"image": "ghcr.io/example/app:1", "secrets": {"TOKEN": %q}}`, ref))
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	s := e.service(t, spec)
	const other = "arn:aws:ssm:us-west-2:123456789012:parameter/someone/else"
	out, err := e.srv.Client(context.Background()).DescribeTaskDefinition(context.Background(), &awsecs.DescribeTaskDefinitionInput{TaskDefinition: s.TaskDefinition})
	if err != nil {
		t.Fatal(err)
	}
	td := out.TaskDefinition
	td.ContainerDefinitions[0].Secrets = []types.Secret{{Name: aws.String("TOKEN"), ValueFrom: aws.String(other)}}
	reg, err := e.srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{Family: td.Family,
		ContainerDefinitions: td.ContainerDefinitions, NetworkMode: td.NetworkMode, RequiresCompatibilities: td.RequiresCompatibilities, Cpu: td.Cpu, Memory: td.Memory,
		ExecutionRoleArn: td.ExecutionRoleArn})
	if err != nil {
		t.Fatal(err)
	}
	e.handUpdate(t, spec, awsecs.UpdateServiceInput{TaskDefinition: reg.TaskDefinition.TaskDefinitionArn})
	d := e.inspect(t, spec)
	if !slices.Equal(paths(d), []string{"containers/app/secrets/TOKEN"}) {
		t.Fatalf("Inspect after the secret was changed by hand: %v", d)
	}
	if text := fmt.Sprint(d); strings.Contains(text, "parameter/") {
		t.Errorf("the drift names a secret reference: %s", text)
	}
}

// TestInspectReadsOnly: Inspect writes nothing, and once the revision a
// service runs and its tasks are known it costs two reads:
// DescribeServices, DescribeTasks.
func TestInspectReadsOnly(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "reader", `{"image": "ghcr.io/example/app:1", "ports": [{"container_port": 8080}], "desired_count": 2}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	e.inspect(t, spec)
	e.srv.ResetCalls()
	if d := e.inspect(t, spec); len(d) != 0 {
		t.Fatalf("Inspect: %v", d)
	}
	want := map[string]int{"DescribeServices": 1, "DescribeTasks": 1}
	if got := e.srv.Calls(); !maps.Equal(got, want) {
		t.Errorf("Inspect called %v, want %v", got, want)
	}
}
