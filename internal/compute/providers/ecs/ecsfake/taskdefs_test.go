package ecsfake

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/go-cmp/cmp"
)

func TestFargateTaskDefinitions(t *testing.T) {
	tests := []struct {
		name        string
		cpu, memory string
		mode        types.NetworkMode
		wantErr     string
		wantCPU     string
		wantMemory  string
	}{
		{name: "smallest", cpu: "256", memory: "512", wantCPU: "256", wantMemory: "512"},
		{name: "256 with 2 GB", cpu: "256", memory: "2048", wantCPU: "256", wantMemory: "2048"},
		{name: "units", cpu: "1 vCPU", memory: "2 GB", wantCPU: "1024", wantMemory: "2048"},
		{name: "quarter vCPU", cpu: ".25 vCPU", memory: "0.5 GB", wantCPU: "256", wantMemory: "512"},
		{name: "4096 top", cpu: "4096", memory: "30720", wantCPU: "4096", wantMemory: "30720"},
		{name: "8192 in 4 GB steps", cpu: "8192", memory: "20480", wantCPU: "8192", wantMemory: "20480"},
		{name: "16384 in 8 GB steps", cpu: "16384", memory: "40960", wantCPU: "16384", wantMemory: "40960"},
		{name: "256 with 1536", cpu: "256", memory: "1536", wantErr: "No Fargate configuration exists for given values: 256 CPU, 1536 memory."},
		{name: "512 with 512", cpu: "512", memory: "512", wantErr: "No Fargate configuration exists for given values: 512 CPU, 512 memory."},
		{name: "8192 off step", cpu: "8192", memory: "17408", wantErr: "No Fargate configuration exists"},
		{name: "cpu not offered", cpu: "384", memory: "1024", wantErr: "No Fargate configuration exists"},
		{name: "bridge", cpu: "256", memory: "512", mode: types.NetworkModeBridge, wantErr: "Fargate only supports network mode 'awsvpc'."},
		{name: "no task cpu", memory: "512", wantErr: "Fargate requires that 'cpu' be defined at the task level."},
		{name: "garbage cpu", cpu: "lots", memory: "512", wantErr: "Invalid 'cpu' setting for task: lots."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newFake(t, Options{})
			in := &ecs.RegisterTaskDefinitionInput{
				Family:                  aws.String("app"),
				ContainerDefinitions:    []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String("nginx")}},
				RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
				NetworkMode:             types.NetworkModeAwsvpc,
			}
			if tt.mode != "" {
				in.NetworkMode = tt.mode
			}
			if tt.cpu != "" {
				in.Cpu = aws.String(tt.cpu)
			}
			if tt.memory != "" {
				in.Memory = aws.String(tt.memory)
			}
			out, err := c.RegisterTaskDefinition(context.Background(), in)
			if tt.wantErr != "" {
				var ce *types.ClientException
				if !errors.As(err, &ce) || !strings.Contains(ce.ErrorMessage(), tt.wantErr) {
					t.Fatalf("RegisterTaskDefinition: %v, want ClientException %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]string{aws.ToString(out.TaskDefinition.Cpu), aws.ToString(out.TaskDefinition.Memory)}; got != [2]string{tt.wantCPU, tt.wantMemory} {
				t.Errorf("cpu, memory = %v, want %s %s", got, tt.wantCPU, tt.wantMemory)
			}
		})
	}
}

func TestTaskDefinitionRevisions(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	tagged := func(in *ecs.RegisterTaskDefinitionInput) {
		in.Tags = []types.Tag{{Key: aws.String("owner"), Value: aws.String("landlord")}}
	}
	mustRegister(t, c, "app", "nginx:1", fargate)
	v2 := mustRegister(t, c, "app", "nginx:2", fargate, tagged)
	if v2.Revision != 2 || aws.ToString(v2.TaskDefinitionArn) != "arn:aws:ecs:us-west-2:123456789012:task-definition/app:2" || v2.Status != types.TaskDefinitionStatusActive || v2.RegisteredAt == nil {
		t.Fatalf("second revision %+v", v2)
	}
	describe := func(ref string, include ...types.TaskDefinitionField) (*ecs.DescribeTaskDefinitionOutput, error) {
		return c.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(ref), Include: include})
	}
	for _, ref := range []string{"app", "app:2", aws.ToString(v2.TaskDefinitionArn)} {
		out, err := describe(ref, types.TaskDefinitionFieldTags)
		if err != nil || out.TaskDefinition.Revision != 2 || len(out.Tags) != 1 {
			t.Errorf("describe %s: %+v %v", ref, out, err)
		}
	}

	// A service keeps its revision after deregistration; new ones cannot use it.
	mustCreate(t, c, serviceInput("svc", "app:2", 1))
	for range 2 {
		out, err := c.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String("app:2")})
		if err != nil || out.TaskDefinition.Status != types.TaskDefinitionStatusInactive || out.TaskDefinition.DeregisteredAt == nil {
			t.Fatalf("deregister: %+v %v", out, err)
		}
	}
	if out, err := describe("app"); err != nil || out.TaskDefinition.Revision != 1 {
		t.Errorf("family alone after deregistering 2: %+v %v", out, err)
	}
	if out, err := describe("app:2"); err != nil || out.TaskDefinition.Status != types.TaskDefinitionStatusInactive {
		t.Errorf("an INACTIVE revision is still describable: %+v %v", out, err)
	}
	if _, err := c.CreateService(ctx, serviceInput("svc2", "app:2", 1)); err == nil || !strings.Contains(err.Error(), "TaskDefinition is inactive") {
		t.Errorf("CreateService with INACTIVE revision: %v", err)
	}
	if svc := mustDescribe(t, c, "svc"); aws.ToString(svc.TaskDefinition) != aws.ToString(v2.TaskDefinitionArn) {
		t.Errorf("service task definition %s", aws.ToString(svc.TaskDefinition))
	}
	if _, err := c.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String("app:7")}); !isClientException(err) {
		t.Errorf("deregister missing: %v", err)
	}
	if _, err := describe("nothing"); !isClientException(err) {
		t.Errorf("describe missing family: %v", err)
	}
	if got := len(s.TaskDefinitions("app")); got != 2 {
		t.Errorf("TaskDefinitions() = %d revisions", got)
	}
}

func isClientException(err error) bool {
	var e *types.ClientException
	return errors.As(err, &e)
}

func TestTagResource(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	td := mustRegister(t, c, "app", "nginx", fargate)
	svc := mustCreate(t, c, serviceInput("svc", "app", 0))
	tag := func(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	tests := []struct {
		name    string
		arn     string
		tags    []types.Tag
		wantErr string
	}{
		{name: "service", arn: aws.ToString(svc.ServiceArn), tags: []types.Tag{tag("a", "1"), tag("b", "2")}},
		{name: "service overwrite", arn: aws.ToString(svc.ServiceArn), tags: []types.Tag{tag("a", "3")}},
		{name: "task definition", arn: aws.ToString(td.TaskDefinitionArn), tags: []types.Tag{tag("a", "1")}},
		{name: "unknown service", arn: s.arn("service/landlord/ghost"), tags: []types.Tag{tag("a", "1")}, wantErr: "ServiceNotFoundException"},
		{name: "unknown task definition", arn: s.arn("task-definition/ghost:1"), tags: []types.Tag{tag("a", "1")}, wantErr: "InvalidParameterException"},
		{name: "another account", arn: "arn:aws:ecs:us-west-2:999999999999:service/landlord/svc", tags: []types.Tag{tag("a", "1")}, wantErr: "InvalidParameterException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.TagResource(ctx, &ecs.TagResourceInput{ResourceArn: aws.String(tt.arn), Tags: tt.tags})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("TagResource: %v, want %q", err, tt.wantErr)
			}
		})
	}
	want := []types.Tag{tag("a", "3"), tag("b", "2")}
	if diff := cmp.Diff(want, mustDescribe(t, c, "svc").Tags, ignoreNoSerde); diff != "" {
		t.Errorf("service tags (-want +got):\n%s", diff)
	}
}
