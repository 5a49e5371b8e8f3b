package ecsfake

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/google/go-cmp/cmp"
)

// t0 is where every manual clock in these tests starts.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ignoreNoSerde skips the SDK's unexported marker field, which cmp would
// otherwise refuse to compare.
var ignoreNoSerde = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "noSmithyDocumentSerde"
}, cmp.Ignore())

// newFake starts a fake on a manual clock and returns it with a client.
func newFake(t *testing.T, opts Options) (*Server, *ecs.Client) {
	t.Helper()
	if opts.Clock == nil && opts.Now == nil {
		opts.Clock = NewManualClock(t0)
	}
	s := Start(t, opts)
	return s, s.Client(context.Background())
}

// taskDefOpt changes a task definition registration.
type taskDefOpt func(*ecs.RegisterTaskDefinitionInput)

func fargate(in *ecs.RegisterTaskDefinitionInput) {
	in.NetworkMode = types.NetworkModeAwsvpc
	in.RequiresCompatibilities = []types.Compatibility{types.CompatibilityFargate}
	in.Cpu, in.Memory = aws.String("256"), aws.String("512")
}

func mustRegister(t *testing.T, c *ecs.Client, family, image string, opts ...taskDefOpt) *types.TaskDefinition {
	t.Helper()
	in := &ecs.RegisterTaskDefinitionInput{
		Family:               aws.String(family),
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String(image)}},
	}
	for _, o := range opts {
		o(in)
	}
	out, err := c.RegisterTaskDefinition(context.Background(), in)
	if err != nil {
		t.Fatalf("RegisterTaskDefinition(%s): %v", family, err)
	}
	return out.TaskDefinition
}

// serviceInput is a CreateService request for a Fargate service in the
// default test cluster.
func serviceInput(name, taskDef string, desired int32) *ecs.CreateServiceInput {
	return &ecs.CreateServiceInput{
		Cluster:        aws.String("landlord"),
		ServiceName:    aws.String(name),
		TaskDefinition: aws.String(taskDef),
		DesiredCount:   aws.Int32(desired),
		LaunchType:     types.LaunchTypeFargate,
		NetworkConfiguration: &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
			Subnets: []string{"subnet-a", "subnet-b"},
		}},
	}
}

func mustCreate(t *testing.T, c *ecs.Client, in *ecs.CreateServiceInput) *types.Service {
	t.Helper()
	out, err := c.CreateService(context.Background(), in)
	if err != nil {
		t.Fatalf("CreateService(%s): %v", aws.ToString(in.ServiceName), err)
	}
	return out.Service
}

// mustDescribe returns the named service, failing if ECS reports it missing.
func mustDescribe(t *testing.T, c *ecs.Client, name string) types.Service {
	t.Helper()
	out, err := c.DescribeServices(context.Background(), &ecs.DescribeServicesInput{
		Cluster:  aws.String("landlord"),
		Services: []string{name},
		Include:  []types.ServiceField{types.ServiceFieldTags},
	})
	if err != nil {
		t.Fatalf("DescribeServices(%s): %v", name, err)
	}
	if len(out.Services) != 1 {
		t.Fatalf("DescribeServices(%s): services %d, failures %+v", name, len(out.Services), out.Failures)
	}
	return out.Services[0]
}

// messages returns a service's event messages, oldest first.
func messages(svc types.Service) []string {
	var out []string
	for i := len(svc.Events) - 1; i >= 0; i-- {
		out = append(out, aws.ToString(svc.Events[i].Message))
	}
	return out
}
