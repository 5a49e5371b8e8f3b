package ecsfake

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/go-cmp/cmp"
)

// TestUpdateServiceMembers checks each member of UpdateService a provider
// sends, as API_UpdateService describes it: left out it keeps the
// service's value, an empty list removes, and a change to a member that
// "triggers a new service deployment" starts one.
func TestUpdateServiceMembers(t *testing.T) {
	tg := []types.LoadBalancer{{TargetGroupArn: aws.String("arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/tg/1"), ContainerName: aws.String("app"), ContainerPort: aws.Int32(80)}}
	reg := []types.ServiceRegistry{{RegistryArn: aws.String("arn:aws:servicediscovery:us-west-2:123456789012:service/srv-1")}}
	tests := []struct {
		name       string
		create     func(*ecs.CreateServiceInput)
		update     ecs.UpdateServiceInput
		check      func(t *testing.T, svc types.Service)
		deployment bool // a new deployment is started
	}{
		{
			name:   "desiredCount left out keeps the count",
			update: ecs.UpdateServiceInput{EnableExecuteCommand: aws.Bool(true)},
			check: func(t *testing.T, svc types.Service) {
				if svc.DesiredCount != 2 || !svc.EnableExecuteCommand {
					t.Errorf("desired %d, execute command %v; want 2 and true", svc.DesiredCount, svc.EnableExecuteCommand)
				}
			},
		},
		{
			name:   "desiredCount given changes it in place",
			update: ecs.UpdateServiceInput{DesiredCount: aws.Int32(3)},
			check: func(t *testing.T, svc types.Service) {
				if svc.DesiredCount != 3 {
					t.Errorf("desired %d, want 3", svc.DesiredCount)
				}
			},
		},
		{
			name:   "loadBalancers left out keeps them",
			create: func(in *ecs.CreateServiceInput) { in.LoadBalancers = tg },
			update: ecs.UpdateServiceInput{DesiredCount: aws.Int32(2)},
			check: func(t *testing.T, svc types.Service) {
				if diff := cmp.Diff(tg, svc.LoadBalancers, ignoreNoSerde); diff != "" {
					t.Errorf("load balancers (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:       "loadBalancers empty removes them",
			create:     func(in *ecs.CreateServiceInput) { in.LoadBalancers = tg },
			update:     ecs.UpdateServiceInput{LoadBalancers: []types.LoadBalancer{}},
			deployment: true,
			check: func(t *testing.T, svc types.Service) {
				if len(svc.LoadBalancers) != 0 {
					t.Errorf("load balancers %v, want none", svc.LoadBalancers)
				}
			},
		},
		{
			name:       "loadBalancers given attaches them",
			update:     ecs.UpdateServiceInput{LoadBalancers: tg},
			deployment: true,
			check: func(t *testing.T, svc types.Service) {
				if len(svc.LoadBalancers) != 1 {
					t.Errorf("load balancers %v, want the target group", svc.LoadBalancers)
				}
			},
		},
		{
			name:   "loadBalancers empty on a service without any changes nothing",
			update: ecs.UpdateServiceInput{LoadBalancers: []types.LoadBalancer{}, ServiceRegistries: []types.ServiceRegistry{}},
		},
		{
			name:   "serviceRegistries left out keeps them",
			create: func(in *ecs.CreateServiceInput) { in.ServiceRegistries = reg },
			update: ecs.UpdateServiceInput{LoadBalancers: []types.LoadBalancer{}},
			check: func(t *testing.T, svc types.Service) {
				if len(svc.ServiceRegistries) != 1 {
					t.Errorf("service registries %v, want the registry kept", svc.ServiceRegistries)
				}
			},
		},
		{
			name:       "serviceRegistries empty removes them",
			create:     func(in *ecs.CreateServiceInput) { in.ServiceRegistries = reg },
			update:     ecs.UpdateServiceInput{ServiceRegistries: []types.ServiceRegistry{}},
			deployment: true,
			check: func(t *testing.T, svc types.Service) {
				if len(svc.ServiceRegistries) != 0 {
					t.Errorf("service registries %v, want none", svc.ServiceRegistries)
				}
			},
		},
		{
			name: "networkConfiguration changed starts a deployment",
			update: ecs.UpdateServiceInput{NetworkConfiguration: &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
				Subnets: []string{"subnet-a"}, AssignPublicIp: types.AssignPublicIpEnabled}}},
			deployment: true,
			check: func(t *testing.T, svc types.Service) {
				if svc.NetworkConfiguration.AwsvpcConfiguration.AssignPublicIp != types.AssignPublicIpEnabled {
					t.Errorf("network %+v, want a public IP", svc.NetworkConfiguration.AwsvpcConfiguration)
				}
			},
		},
		{
			name:   "networkConfiguration left out keeps it",
			update: ecs.UpdateServiceInput{DesiredCount: aws.Int32(2)},
			check: func(t *testing.T, svc types.Service) {
				if got := svc.NetworkConfiguration.AwsvpcConfiguration.Subnets; len(got) != 2 {
					t.Errorf("subnets %v, want both kept", got)
				}
			},
		},
		{
			name:       "platformVersion changed starts a deployment",
			update:     ecs.UpdateServiceInput{PlatformVersion: aws.String("1.4.0")},
			deployment: true,
			check: func(t *testing.T, svc types.Service) {
				if aws.ToString(svc.PlatformVersion) != "1.4.0" {
					t.Errorf("platform version %q, want 1.4.0", aws.ToString(svc.PlatformVersion))
				}
			},
		},
		{
			name:   "capacityProviderStrategy changes the service without a deployment",
			update: ecs.UpdateServiceInput{CapacityProviderStrategy: []types.CapacityProviderStrategyItem{{CapacityProvider: aws.String("FARGATE_SPOT"), Weight: 1}}},
			check: func(t *testing.T, svc types.Service) {
				if svc.LaunchType != "" || len(svc.CapacityProviderStrategy) != 1 {
					t.Errorf("launch type %q, strategy %v; want FARGATE_SPOT in place of the launch type", svc.LaunchType, svc.CapacityProviderStrategy)
				}
			},
		},
		{
			name: "healthCheckGracePeriodSeconds, enableExecuteCommand, propagateTags left out keep theirs",
			create: func(in *ecs.CreateServiceInput) {
				in.HealthCheckGracePeriodSeconds, in.EnableExecuteCommand, in.PropagateTags = aws.Int32(30), true, types.PropagateTagsService
			},
			update: ecs.UpdateServiceInput{DesiredCount: aws.Int32(2)},
			check: func(t *testing.T, svc types.Service) {
				if aws.ToInt32(svc.HealthCheckGracePeriodSeconds) != 30 || !svc.EnableExecuteCommand || svc.PropagateTags != types.PropagateTagsService {
					t.Errorf("grace %d, execute command %v, propagate %q; want 30, true, SERVICE kept", aws.ToInt32(svc.HealthCheckGracePeriodSeconds), svc.EnableExecuteCommand, svc.PropagateTags)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newFake(t, Options{})
			mustRegister(t, c, "app", "nginx:1", fargate)
			in := serviceInput("svc", "app", 2)
			if tt.create != nil {
				tt.create(in)
			}
			mustCreate(t, c, in)
			s.Advance(200 * time.Millisecond)
			up := tt.update
			up.Cluster, up.Service = aws.String("landlord"), aws.String("svc")
			out, err := c.UpdateService(context.Background(), &up)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(out.Service.Deployments) > 1; got != tt.deployment {
				t.Errorf("deployments after the update %q; want a new one: %v", deploymentSummary(out.Service), tt.deployment)
			}
			if tt.check != nil {
				tt.check(t, mustDescribe(t, c, "svc"))
			}
		})
	}
}

// TestCapacityProviderStrategyBackToLaunchType: "Update the Auto Scaling
// group or Fargate capacity provider back to the launch type. Pass an empty
// list in the capacityProviderStrategy parameter." (API_UpdateService)
func TestCapacityProviderStrategyBackToLaunchType(t *testing.T) {
	s, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx:1", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 1))
	s.Advance(200 * time.Millisecond)
	for _, strategy := range [][]types.CapacityProviderStrategyItem{{{CapacityProvider: aws.String("FARGATE_SPOT"), Weight: 1}}, {}} {
		if _, err := c.UpdateService(context.Background(), &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("svc"), CapacityProviderStrategy: strategy}); err != nil {
			t.Fatal(err)
		}
	}
	if svc := mustDescribe(t, c, "svc"); svc.LaunchType != types.LaunchTypeFargate || len(svc.CapacityProviderStrategy) != 0 {
		t.Errorf("launch type %q, strategy %v; want FARGATE again", svc.LaunchType, svc.CapacityProviderStrategy)
	}
}

// TestStopTaskOperation: StopTask through the SDK stops the task with
// stop code UserInitiated and the caller's reason, and the service starts a
// replacement.
func TestStopTaskOperation(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx:1", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 1))
	s.Advance(200 * time.Millisecond)
	list, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("svc")})
	if err != nil || len(list.TaskArns) != 1 {
		t.Fatalf("ListTasks: %v %v", list, err)
	}
	out, err := c.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String("landlord"), Task: aws.String(list.TaskArns[0]), Reason: aws.String("stopped by hand")})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Task; aws.ToString(got.LastStatus) != "STOPPED" || got.StopCode != types.TaskStopCodeUserInitiated || aws.ToString(got.StoppedReason) != "stopped by hand" {
		t.Errorf("stopped task: status %s, code %s, reason %q", aws.ToString(got.LastStatus), got.StopCode, aws.ToString(got.StoppedReason))
	}
	if svc := mustDescribe(t, c, "svc"); svc.PendingCount != 1 {
		t.Errorf("pending %d after the stop; want a replacement starting", svc.PendingCount)
	}
	_, err = c.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String("landlord"), Task: aws.String("0123456789abcdef0123456789abcdef")})
	var ipe *types.InvalidParameterException
	if !errors.As(err, &ipe) || !strings.Contains(ipe.ErrorMessage(), "task was not found") {
		t.Errorf("StopTask of an unknown task = %v; want an InvalidParameterException", err)
	}
}

// TestRegisterFillsDefaults: a registered revision reads back with what
// ECS fills in.
func TestRegisterFillsDefaults(t *testing.T) {
	_, c := newFake(t, Options{})
	td := mustRegister(t, c, "app", "nginx:1", fargate, func(in *ecs.RegisterTaskDefinitionInput) {
		in.ContainerDefinitions[0].PortMappings = []types.PortMapping{{ContainerPort: aws.Int32(8080)}}
		in.ContainerDefinitions[0].HealthCheck = &types.HealthCheck{Command: []string{"CMD", "true"}}
	})
	cd := td.ContainerDefinitions[0]
	want := types.ContainerDefinition{
		Name: aws.String("app"), Image: aws.String("nginx:1"), Essential: aws.Bool(true),
		PortMappings: []types.PortMapping{{ContainerPort: aws.Int32(8080), HostPort: aws.Int32(8080), Protocol: types.TransportProtocolTcp}},
		HealthCheck:  &types.HealthCheck{Command: []string{"CMD", "true"}, Interval: aws.Int32(30), Timeout: aws.Int32(5), Retries: aws.Int32(3)},
	}
	if diff := cmp.Diff(want, cd, ignoreNoSerde); diff != "" {
		t.Errorf("registered container (-want +got):\n%s", diff)
	}
	_, err := c.RegisterTaskDefinition(context.Background(), &ecs.RegisterTaskDefinitionInput{Family: aws.String("mismatch"), NetworkMode: types.NetworkModeAwsvpc,
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String("nginx"),
			PortMappings: []types.PortMapping{{ContainerPort: aws.Int32(80), HostPort: aws.Int32(8080)}}}}})
	if !isClientException(err) {
		t.Errorf("awsvpc with another host port = %v; want a ClientException", err)
	}
}
