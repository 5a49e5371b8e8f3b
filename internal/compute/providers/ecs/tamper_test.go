package ecs_test

import (
	"context"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// targetGroup is the ARN of an ELB target group called name.
func targetGroup(name string) string {
	return "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/" + name + "/0123456789abcdef"
}

// tampers change a tenant's service behind landlord's back, each through
// the real SDK against the fake, as `aws ecs update-service`,
// `register-task-definition`, `stop-task` and `delete-service` would. The
// tenant's config is the conformance suite's variant 0: Fargate, one
// container "app" on port 8080, a target group. service names a tenant's
// service.
func tampers(srv *ecsfake.Server, service func(tenantID string) string) []providertest.Tamper {
	cluster := aws.String(srv.ClusterARN("landlord"))
	update := func(t *testing.T, tenantID string, in awsecs.UpdateServiceInput) {
		t.Helper()
		in.Cluster, in.Service = cluster, aws.String(service(tenantID))
		if _, err := srv.Client(context.Background()).UpdateService(context.Background(), &in); err != nil {
			t.Fatalf("update-service: %v", err)
		}
	}
	return []providertest.Tamper{
		{Name: "scale", Path: "service/desired_count", Do: func(t *testing.T, id string) {
			update(t, id, awsecs.UpdateServiceInput{DesiredCount: aws.Int32(3)})
		}},
		{Name: "task-definition", Path: "containers/app", Do: func(t *testing.T, id string) {
			arn := registerHacked(t, srv, describeService(t, srv, service(id)))
			update(t, id, awsecs.UpdateServiceInput{TaskDefinition: aws.String(arn)})
		}},
		{Name: "task-role", Path: "task_definition/task_role", Do: func(t *testing.T, id string) {
			arn := registerChanged(t, srv, describeService(t, srv, service(id)), func(in *awsecs.RegisterTaskDefinitionInput) {
				in.TaskRoleArn = aws.String("arn:aws:iam::123456789012:role/by-hand")
			})
			update(t, id, awsecs.UpdateServiceInput{TaskDefinition: aws.String(arn)})
		}},
		{Name: "log-configuration", Path: "containers/app/log_configuration", Do: func(t *testing.T, id string) {
			arn := registerChanged(t, srv, describeService(t, srv, service(id)), func(in *awsecs.RegisterTaskDefinitionInput) {
				for i, cd := range in.ContainerDefinitions {
					logs := *cd.LogConfiguration
					logs.Options = maps.Clone(logs.Options)
					logs.Options["awslogs-group"] = "/by-hand"
					delete(logs.Options, "awslogs-create-group")
					in.ContainerDefinitions[i].LogConfiguration = &logs
				}
			})
			update(t, id, awsecs.UpdateServiceInput{TaskDefinition: aws.String(arn)})
		}},
		{Name: "load-balancers", Path: "service/load_balancers", Do: func(t *testing.T, id string) {
			lbs := describeService(t, srv, service(id)).LoadBalancers
			lbs = append(lbs, types.LoadBalancer{TargetGroupArn: aws.String(targetGroup("by-hand")), ContainerName: aws.String("app"), ContainerPort: aws.Int32(8080)})
			update(t, id, awsecs.UpdateServiceInput{LoadBalancers: lbs})
		}},
		{Name: "load-balancers-removed", Path: "service/load_balancers", Do: func(t *testing.T, id string) {
			update(t, id, awsecs.UpdateServiceInput{LoadBalancers: []types.LoadBalancer{}})
		}},
		{Name: "network", Path: "network", Do: func(t *testing.T, id string) {
			net := describeService(t, srv, service(id)).NetworkConfiguration.AwsvpcConfiguration
			update(t, id, awsecs.UpdateServiceInput{NetworkConfiguration: &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
				Subnets: net.Subnets, SecurityGroups: []string{"sg-0bad0bad"}, AssignPublicIp: types.AssignPublicIpEnabled}}})
		}},
		{Name: "settings", Path: "service", Do: func(t *testing.T, id string) {
			update(t, id, awsecs.UpdateServiceInput{EnableExecuteCommand: aws.Bool(true), PropagateTags: types.PropagateTagsTaskDefinition,
				DeploymentConfiguration: &types.DeploymentConfiguration{MinimumHealthyPercent: aws.Int32(50), MaximumPercent: aws.Int32(100),
					DeploymentCircuitBreaker: &types.DeploymentCircuitBreaker{Enable: false}}})
		}},
		{Name: "stop-task", Do: func(t *testing.T, id string) {
			ctx, c := context.Background(), srv.Client(context.Background())
			list, err := c.ListTasks(ctx, &awsecs.ListTasksInput{Cluster: cluster, ServiceName: aws.String(service(id))})
			if err != nil || len(list.TaskArns) == 0 {
				t.Fatalf("list-tasks: %v, %v", list, err)
			}
			if _, err := c.StopTask(ctx, &awsecs.StopTaskInput{Cluster: cluster, Task: aws.String(list.TaskArns[0]), Reason: aws.String("stopped by hand")}); err != nil {
				t.Fatalf("stop-task: %v", err)
			}
		}},
		{Name: "delete-service", Path: "workload", Do: func(t *testing.T, id string) {
			_, err := srv.Client(context.Background()).DeleteService(context.Background(), &awsecs.DeleteServiceInput{Cluster: cluster, Service: aws.String(service(id)), Force: aws.Bool(true)})
			if err != nil {
				t.Fatalf("delete-service: %v", err)
			}
		}},
	}
}

// describeService describes the named service in the landlord cluster.
func describeService(t *testing.T, srv *ecsfake.Server, name string) types.Service {
	t.Helper()
	out, err := srv.Client(context.Background()).DescribeServices(context.Background(), &awsecs.DescribeServicesInput{
		Cluster: aws.String(srv.ClusterARN("landlord")), Services: []string{name}})
	if err != nil || len(out.Services) != 1 {
		t.Fatalf("describe-services %s: %v, %v", name, out, err)
	}
	return out.Services[0]
}

// registerHacked registers, in the family of the service's task definition,
// a revision with another image and environment for container app, with
// the revision's tags copied as the console's "create new revision" does,
// and returns its ARN.
func registerHacked(t *testing.T, srv *ecsfake.Server, svc types.Service) string {
	t.Helper()
	return registerChanged(t, srv, svc, func(in *awsecs.RegisterTaskDefinitionInput) {
		for i := range in.ContainerDefinitions {
			if aws.ToString(in.ContainerDefinitions[i].Name) == "app" {
				in.ContainerDefinitions[i].Image = aws.String("ghcr.io/example/app:hacked")
				in.ContainerDefinitions[i].Environment = []types.KeyValuePair{{Name: aws.String("GREETING"), Value: aws.String("hacked")}}
			}
		}
	})
}

// registerChanged registers, in the family of the service's task
// definition, a copy of its revision (tags included) that change alters,
// and returns its ARN.
func registerChanged(t *testing.T, srv *ecsfake.Server, svc types.Service, change func(*awsecs.RegisterTaskDefinitionInput)) string {
	t.Helper()
	ctx, c := context.Background(), srv.Client(context.Background())
	cur, err := c.DescribeTaskDefinition(ctx, &awsecs.DescribeTaskDefinitionInput{TaskDefinition: svc.TaskDefinition, Include: []types.TaskDefinitionField{types.TaskDefinitionFieldTags}})
	if err != nil {
		t.Fatalf("describe-task-definition: %v", err)
	}
	td := cur.TaskDefinition
	in := &awsecs.RegisterTaskDefinitionInput{
		Family: td.Family, ContainerDefinitions: append([]types.ContainerDefinition(nil), td.ContainerDefinitions...), NetworkMode: td.NetworkMode,
		RequiresCompatibilities: td.RequiresCompatibilities, Cpu: td.Cpu, Memory: td.Memory, ExecutionRoleArn: td.ExecutionRoleArn, TaskRoleArn: td.TaskRoleArn, Tags: cur.Tags,
	}
	change(in)
	out, err := c.RegisterTaskDefinition(ctx, in)
	if err != nil {
		t.Fatalf("register-task-definition: %v", err)
	}
	return aws.ToString(out.TaskDefinition.TaskDefinitionArn)
}
