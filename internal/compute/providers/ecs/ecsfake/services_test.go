package ecsfake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestServiceLifecycle(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	v1 := mustRegister(t, c, "app", "nginx:1", fargate)
	in := serviceInput("tenant-a", "app", 2)
	in.Tags = []types.Tag{{Key: aws.String("tenant"), Value: aws.String("a")}}
	in.PropagateTags = types.PropagateTagsService
	in.EnableECSManagedTags = true
	in.EnableExecuteCommand = true
	in.HealthCheckGracePeriodSeconds = aws.Int32(30)
	in.DeploymentConfiguration = &types.DeploymentConfiguration{
		DeploymentCircuitBreaker: &types.DeploymentCircuitBreaker{Enable: true, Rollback: true},
	}
	in.LoadBalancers = []types.LoadBalancer{{TargetGroupArn: aws.String("arn:tg"), ContainerName: aws.String("app"), ContainerPort: aws.Int32(80)}}
	created := mustCreate(t, c, in)

	want := types.Service{
		ServiceName:                   aws.String("tenant-a"),
		ServiceArn:                    aws.String("arn:aws:ecs:us-west-2:123456789012:service/landlord/tenant-a"),
		ClusterArn:                    aws.String(s.ClusterARN("landlord")),
		Status:                        aws.String("ACTIVE"),
		DesiredCount:                  2,
		PendingCount:                  2,
		TaskDefinition:                v1.TaskDefinitionArn,
		LaunchType:                    types.LaunchTypeFargate,
		NetworkConfiguration:          in.NetworkConfiguration,
		PropagateTags:                 types.PropagateTagsService,
		EnableECSManagedTags:          true,
		EnableExecuteCommand:          true,
		HealthCheckGracePeriodSeconds: aws.Int32(30),
		LoadBalancers:                 in.LoadBalancers,
		ServiceRegistries:             []types.ServiceRegistry{},
		PlacementConstraints:          []types.PlacementConstraint{},
		PlacementStrategy:             []types.PlacementStrategy{},
		SchedulingStrategy:            types.SchedulingStrategyReplica,
		PlatformVersion:               aws.String("LATEST"),
		DeploymentController:          &types.DeploymentController{Type: types.DeploymentControllerTypeEcs},
		DeploymentConfiguration: &types.DeploymentConfiguration{
			MaximumPercent:           aws.Int32(200),
			MinimumHealthyPercent:    aws.Int32(100),
			DeploymentCircuitBreaker: &types.DeploymentCircuitBreaker{Enable: true, Rollback: true},
		},
		CreatedAt: aws.Time(t0),
		CreatedBy: aws.String("arn:aws:iam::123456789012:root"),
	}
	ignore := cmpopts.IgnoreFields(types.Service{}, "Deployments", "Events", "Tags")
	if diff := cmp.Diff(want, *created, ignoreNoSerde, ignore); diff != "" {
		t.Errorf("CreateService (-want +got):\n%s", diff)
	}
	if created.Tags != nil {
		t.Errorf("CreateService returned tags %v; ECS returns them only when asked", created.Tags)
	}

	// Two steps of StepTime take the tasks through PENDING to RUNNING.
	s.Advance(200 * time.Millisecond)
	svc := mustDescribe(t, c, "tenant-a")
	if svc.RunningCount != 2 || svc.PendingCount != 0 {
		t.Fatalf("running %d pending %d, want 2 0", svc.RunningCount, svc.PendingCount)
	}
	if diff := cmp.Diff(in.Tags, svc.Tags, ignoreNoSerde); diff != "" {
		t.Errorf("tags with include TAGS (-want +got):\n%s", diff)
	}
	d := svc.Deployments[0]
	if aws.ToString(d.Status) != "PRIMARY" || d.RolloutState != types.DeploymentRolloutStateCompleted || d.RunningCount != 2 {
		t.Errorf("deployment %s %s running %d, want PRIMARY COMPLETED 2", aws.ToString(d.Status), d.RolloutState, d.RunningCount)
	}
	msgs := messages(svc)
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0], "(service tenant-a) has started 2 tasks: (task ") ||
		msgs[1] != "(service tenant-a) has reached a steady state." {
		t.Errorf("events %q", msgs)
	}

	// A new task definition is a new deployment; the old one drains.
	v2 := mustRegister(t, c, "app", "nginx:2", fargate)
	up, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a"), TaskDefinition: aws.String("app:2")})
	if err != nil {
		t.Fatal(err)
	}
	if got := deploymentSummary(up.Service); !slices.Equal(got, []string{"PRIMARY app:2 IN_PROGRESS", "ACTIVE app:1 COMPLETED"}) {
		t.Errorf("deployments after update %q", got)
	}
	s.Advance(200 * time.Millisecond)
	svc = mustDescribe(t, c, "tenant-a")
	if got := deploymentSummary(&svc); !slices.Equal(got, []string{"PRIMARY app:2 COMPLETED"}) || svc.RunningCount != 2 || aws.ToString(svc.TaskDefinition) != aws.ToString(v2.TaskDefinitionArn) {
		t.Errorf("after rollout: deployments %q running %d", got, svc.RunningCount)
	}

	// desiredCount alone changes the primary in place.
	up, err = c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a"), DesiredCount: aws.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got := deploymentSummary(up.Service); !slices.Equal(got, []string{"PRIMARY app:2 COMPLETED"}) || up.Service.Deployments[0].DesiredCount != 3 {
		t.Errorf("after scale: deployments %q", got)
	}

	// Delete: refused while scaled up, then DRAINING, then INACTIVE.
	_, err = c.DeleteService(ctx, &ecs.DeleteServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a")})
	var ipe *types.InvalidParameterException
	if !errors.As(err, &ipe) || ipe.ErrorMessage() != "The service cannot be stopped while it is scaled above 0." {
		t.Fatalf("DeleteService scaled up: %v", err)
	}
	del, err := c.DeleteService(ctx, &ecs.DeleteServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a"), Force: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(del.Service.Status) != "DRAINING" || del.Service.DesiredCount != 0 || del.Service.RunningCount != 0 {
		t.Errorf("after delete: %s desired %d running %d", aws.ToString(del.Service.Status), del.Service.DesiredCount, del.Service.RunningCount)
	}
	if _, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a"), DesiredCount: aws.Int32(1)}); !isNotActive(err) {
		t.Errorf("UpdateService on DRAINING: %v", err)
	}
	if _, err := c.CreateService(ctx, serviceInput("tenant-a", "app", 1)); !errors.As(err, &ipe) || ipe.ErrorMessage() != "Unable to Start a service that is still Draining." {
		t.Errorf("CreateService while DRAINING: %v", err)
	}
	s.Advance(2 * time.Second)
	if got := aws.ToString(mustDescribe(t, c, "tenant-a").Status); got != "INACTIVE" {
		t.Errorf("status after DrainTime = %s, want INACTIVE", got)
	}
	if _, err := c.DeleteService(ctx, &ecs.DeleteServiceInput{Cluster: aws.String("landlord"), Service: aws.String("tenant-a"), Force: aws.Bool(true)}); !isNotActive(err) {
		t.Errorf("DeleteService on INACTIVE: %v", err)
	}
	list, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord")})
	if err != nil || len(list.ServiceArns) != 0 {
		t.Errorf("ListServices after delete: %v %v", list.ServiceArns, err)
	}

	// The name can be used again: a new service with the same ARN.
	again := mustCreate(t, c, serviceInput("tenant-a", "app", 1))
	if aws.ToString(again.ServiceArn) != aws.ToString(want.ServiceArn) || aws.ToString(again.Status) != "ACTIVE" || len(again.Events) != 1 {
		t.Errorf("recreated: %s %s events %d", aws.ToString(again.ServiceArn), aws.ToString(again.Status), len(again.Events))
	}
	if got := len(s.Services("landlord")); got != 2 {
		t.Errorf("Services() holds %d services, want the INACTIVE one and the new one", got)
	}
	s.Advance(time.Hour + 3*time.Second)
	if got := len(s.Services("landlord")); got != 1 {
		t.Errorf("Services() after InactiveRetention holds %d, want 1", got)
	}
}

func isNotActive(err error) bool {
	var e *types.ServiceNotActiveException
	return errors.As(err, &e)
}

// deploymentSummary renders deployments as "STATUS family:rev ROLLOUT".
func deploymentSummary(svc *types.Service) []string {
	var out []string
	for _, d := range svc.Deployments {
		td := aws.ToString(d.TaskDefinition)
		td = td[strings.LastIndex(td, "/")+1:]
		out = append(out, fmt.Sprintf("%s %s %s", aws.ToString(d.Status), td, d.RolloutState))
	}
	return out
}

func TestCreateServiceIdempotency(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		first   func(*ecs.CreateServiceInput)
		second  func(*ecs.CreateServiceInput)
		wantErr string // "" means the second call returns the first service
	}{
		{
			name:   "same token, same request",
			first:  func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1") },
			second: func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1") },
		},
		{
			name:  "same token, cluster by ARN",
			first: func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1") },
			second: func(in *ecs.CreateServiceInput) {
				in.ClientToken = aws.String("tok-1")
				in.Cluster = aws.String(s0.ClusterARN("landlord"))
			},
		},
		{
			name:    "same token, different request",
			first:   func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1") },
			second:  func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1"); in.DesiredCount = aws.Int32(5) },
			wantErr: "InvalidParameterException: Creation of service was not idempotent.",
		},
		{
			name:    "different token, same name",
			first:   func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-1") },
			second:  func(in *ecs.CreateServiceInput) { in.ClientToken = aws.String("tok-2") },
			wantErr: "InvalidParameterException: Creation of service was not idempotent.",
		},
		{
			name:    "no token, same name",
			first:   func(in *ecs.CreateServiceInput) {},
			second:  func(in *ecs.CreateServiceInput) {},
			wantErr: "InvalidParameterException: Creation of service was not idempotent.",
		},
		{
			name:  "token too long",
			first: func(in *ecs.CreateServiceInput) {},
			second: func(in *ecs.CreateServiceInput) {
				in.ClientToken = aws.String(strings.Repeat("x", 37))
				in.ServiceName = aws.String("other")
			},
			wantErr: "InvalidParameterException: clientToken must be at most 36 characters.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newFake(t, Options{})
			mustRegister(t, c, "app", "nginx", fargate)
			in1 := serviceInput("svc", "app", 1)
			tt.first(in1)
			first := mustCreate(t, c, in1)
			s.Advance(time.Second)
			in2 := serviceInput("svc", "app", 1)
			tt.second(in2)
			out, err := c.CreateService(ctx, in2)
			if tt.wantErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), tt.wantErr) {
					t.Fatalf("second CreateService: %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("second CreateService: %v", err)
			}
			if aws.ToString(out.Service.Deployments[0].Id) != aws.ToString(first.Deployments[0].Id) || !out.Service.CreatedAt.Equal(*first.CreatedAt) {
				t.Errorf("second CreateService made a new service")
			}
			if got := len(s.Services("landlord")); got != 1 {
				t.Errorf("%d services, want 1", got)
			}
		})
	}
}

// s0 is a fake used only for its ARN helpers in test tables.
var s0 = New(Options{})

func TestCreateServiceValidation(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		change  func(*ecs.CreateServiceInput)
		wantErr string
	}{
		{"unknown cluster", func(in *ecs.CreateServiceInput) { in.Cluster = aws.String("nope") }, "ClusterNotFoundException: Cluster not found."},
		{"no cluster means default, which does not exist", func(in *ecs.CreateServiceInput) { in.Cluster = nil }, "ClusterNotFoundException: Cluster not found."},
		{"bad name", func(in *ecs.CreateServiceInput) { in.ServiceName = aws.String("has space") }, "InvalidParameterException: Service name must be"},
		{"missing task definition", func(in *ecs.CreateServiceInput) { in.TaskDefinition = aws.String("nope") }, "ClientException: TaskDefinition not found."},
		{"missing revision", func(in *ecs.CreateServiceInput) { in.TaskDefinition = aws.String("app:9") }, "ClientException: TaskDefinition not found."},
		{"inactive revision", func(in *ecs.CreateServiceInput) { in.TaskDefinition = aws.String("app:1") }, "ClientException: TaskDefinition is inactive"},
		{"launch type and capacity providers", func(in *ecs.CreateServiceInput) {
			in.CapacityProviderStrategy = []types.CapacityProviderStrategyItem{{CapacityProvider: aws.String("FARGATE")}}
		}, "InvalidParameterException: Specifying both a launch type and capacity provider strategy is not supported."},
		{"awsvpc without network configuration", func(in *ecs.CreateServiceInput) { in.NetworkConfiguration = nil },
			"InvalidParameterException: Network Configuration must be provided when networkMode 'awsvpc' is specified."},
		{"awsvpc without subnets", func(in *ecs.CreateServiceInput) {
			in.NetworkConfiguration = &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{Subnets: []string{}}}
		}, "InvalidParameterException: Network Configuration must be provided when networkMode 'awsvpc' is specified."},
		{"17 subnets", func(in *ecs.CreateServiceInput) {
			in.NetworkConfiguration.AwsvpcConfiguration.Subnets = numbered("subnet-", 17)
		}, "InvalidParameterException: There's a limit of 16 subnets"},
		{"6 security groups", func(in *ecs.CreateServiceInput) {
			in.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups = numbered("sg-", 6)
		}, "InvalidParameterException: There's a limit of 5 security groups"},
		{"FARGATE with a bridge task definition", func(in *ecs.CreateServiceInput) {
			in.TaskDefinition = aws.String("bridge")
			in.NetworkConfiguration = nil
		},
			"InvalidParameterException: Task definition does not support launch_type FARGATE."},
		{"unknown capacity provider", func(in *ecs.CreateServiceInput) {
			in.LaunchType = ""
			in.CapacityProviderStrategy = []types.CapacityProviderStrategyItem{{CapacityProvider: aws.String("mine")}}
		}, "InvalidParameterException: The specified capacity provider strategy cannot contain"},
		{"reserved tag", func(in *ecs.CreateServiceInput) {
			in.Tags = []types.Tag{{Key: aws.String("aws:x"), Value: aws.String("y")}}
		},
			"InvalidParameterException: Tag keys starting with 'aws:' are reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newFake(t, Options{})
			mustRegister(t, c, "app", "nginx", fargate)
			mustRegister(t, c, "app", "nginx", fargate)
			mustRegister(t, c, "bridge", "nginx")
			if _, err := c.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String("app:1")}); err != nil {
				t.Fatal(err)
			}
			in := serviceInput("svc", "app", 1)
			tt.change(in)
			_, err := c.CreateService(ctx, in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CreateService: %v, want %s", err, tt.wantErr)
			}
		})
	}
}

// TestNetworkLimits: 16 subnets and 5 security groups are accepted, by
// CreateService and by UpdateService, and one more is refused by both.
func TestNetworkLimits(t *testing.T) {
	ctx := context.Background()
	_, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx", fargate)
	network := func(subnets, groups int) *types.NetworkConfiguration {
		return &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
			Subnets: numbered("subnet-", subnets), SecurityGroups: numbered("sg-", groups),
		}}
	}
	in := serviceInput("svc", "app", 0)
	in.NetworkConfiguration = network(16, 5)
	mustCreate(t, c, in)
	for _, tt := range []struct {
		subnets, groups int
		ok              bool
	}{{16, 5, true}, {17, 1, false}, {1, 6, false}} {
		_, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("svc"), NetworkConfiguration: network(tt.subnets, tt.groups)})
		if tt.ok != (err == nil) {
			t.Errorf("UpdateService with %d subnets, %d security groups: %v", tt.subnets, tt.groups, err)
		}
	}
}

// numbered returns n ids with prefix.
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func TestCreateLag(t *testing.T) {
	ctx := context.Background()
	_, c := newFake(t, Options{CreateLag: 2})
	mustRegister(t, c, "app", "nginx", fargate)
	created := mustCreate(t, c, serviceInput("svc", "app", 1))
	for i := range 2 {
		out, err := c.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String("landlord"), Services: []string{"svc"}})
		if err != nil {
			t.Fatal(err)
		}
		want := []types.Failure{{Arn: created.ServiceArn, Reason: aws.String("MISSING")}}
		if diff := cmp.Diff(want, out.Failures, ignoreNoSerde); diff != "" || len(out.Services) != 0 {
			t.Errorf("describe %d: services %d, failures (-want +got):\n%s", i, len(out.Services), diff)
		}
	}
	mustDescribe(t, c, "svc")
}

func TestListServicesPaging(t *testing.T) {
	ctx := context.Background()
	_, c := newFake(t, Options{Clusters: []string{"landlord", "other"}})
	mustRegister(t, c, "app", "nginx", fargate)
	var want []string
	for i := range 25 {
		svc := mustCreate(t, c, serviceInput(fmt.Sprintf("svc-%02d", 24-i), "app", 0))
		want = append(want, aws.ToString(svc.ServiceArn))
	}
	slices.Sort(want)
	var got []string
	var pages []int
	var token *string
	for {
		out, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord"), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, out.ServiceArns...)
		pages = append(pages, len(out.ServiceArns))
		if token = out.NextToken; token == nil {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ARNs (-want +got):\n%s", diff)
	}
	if !slices.Equal(pages, []int{10, 10, 5}) {
		t.Errorf("page sizes %v, want [10 10 5]", pages)
	}
	if _, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("landlord"), MaxResults: aws.Int32(101)}); err == nil {
		t.Error("maxResults 101 accepted")
	}
	other, err := c.ListServices(ctx, &ecs.ListServicesInput{Cluster: aws.String("other"), MaxResults: aws.Int32(100)})
	if err != nil || len(other.ServiceArns) != 0 {
		t.Errorf("other cluster: %v %v", other.ServiceArns, err)
	}
}

func TestDescribeClusters(t *testing.T) {
	_, c := newFake(t, Options{})
	mustRegister(t, c, "app", "nginx", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 2))
	out, err := c.DescribeClusters(context.Background(), &ecs.DescribeClustersInput{Clusters: []string{"landlord", "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &ecs.DescribeClustersOutput{
		Clusters: []types.Cluster{{
			ClusterArn:          aws.String("arn:aws:ecs:us-west-2:123456789012:cluster/landlord"),
			ClusterName:         aws.String("landlord"),
			Status:              aws.String("ACTIVE"),
			ActiveServicesCount: 1,
			PendingTasksCount:   2,
		}},
		Failures: []types.Failure{{Arn: aws.String("arn:aws:ecs:us-west-2:123456789012:cluster/missing"), Reason: aws.String("MISSING")}},
	}
	if diff := cmp.Diff(want, out, ignoreNoSerde, cmpopts.IgnoreFields(ecs.DescribeClustersOutput{}, "ResultMetadata")); diff != "" {
		t.Errorf("DescribeClusters (-want +got):\n%s", diff)
	}
}
