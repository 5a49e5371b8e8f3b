package ecs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// fakeCredentials sign requests to the fake; it checks that they are
// signed, not by whom.
var fakeCredentials = credentials.NewStaticCredentialsProvider("AKIDLANDLORDTEST", "landlord-test-secret", "")

// startFake serves a fake ECS whose tasks start in a few tens of
// milliseconds of wall time.
func startFake(t *testing.T, opts ecsfake.Options) *ecsfake.Server {
	t.Helper()
	if opts.StepTime == 0 {
		opts.StepTime = 20 * time.Millisecond
	}
	if opts.DrainTime == 0 {
		opts.DrainTime = 50 * time.Millisecond
	}
	return ecsfake.Start(t, opts)
}

// executionRole is the task execution role of the tests' tenants.
const executionRole = "arn:aws:iam::123456789012:role/tenant-task-execution"

// fargateBlock is a provider block for srv: Fargate in its landlord
// cluster, reached at its URL, with a task execution role (so tenants log
// to CloudWatch and may have secrets).
func fargateBlock(srv *ecsfake.Server) string {
	return fmt.Sprintf(`{"cluster_arn": %q, "endpoint": %q, "launch_type": "FARGATE", "subnets": ["subnet-0a1b2c3d"], "security_groups": ["sg-0a1b2c3d"], "execution_role_arn": %q}`,
		srv.ClusterARN("landlord"), srv.URL, executionRole)
}

func newProvider(t *testing.T, block string, logs *providertest.LogBuffer) *ecs.Provider {
	t.Helper()
	opts := ecs.Options{Block: json.RawMessage(block), HashKey: hashKey, Credentials: fakeCredentials}
	if logs != nil {
		opts.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}
	p, err := ecs.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("ecs.New: %v", err)
	}
	return p
}

// tenantServices are the live services tagged with the tenant's id.
func tenantServices(srv *ecsfake.Server, tenantID string) []types.Service {
	var out []types.Service
	for _, s := range srv.Services("landlord") {
		if aws.ToString(s.Status) == "ACTIVE" && tag(s.Tags, "landlord:tenant-id") == tenantID {
			out = append(out, s)
		}
	}
	return out
}

// tenantTaskDefinitions are the active revisions tagged with the tenant's
// id in family.
func tenantTaskDefinitions(t *testing.T, srv *ecsfake.Server, family, tenantID string) int {
	t.Helper()
	n := 0
	for _, td := range srv.TaskDefinitions(family) {
		if td.Status != types.TaskDefinitionStatusActive {
			continue
		}
		out, err := srv.Client(context.Background()).DescribeTaskDefinition(context.Background(), &awsecs.DescribeTaskDefinitionInput{TaskDefinition: td.TaskDefinitionArn, Include: []types.TaskDefinitionField{types.TaskDefinitionFieldTags}})
		if err != nil {
			t.Fatalf("describe %s: %v", aws.ToString(td.TaskDefinitionArn), err)
		}
		if tag(out.Tags, "landlord:tenant-id") == tenantID {
			n++
		}
	}
	return n
}

func tag(tags []types.Tag, key string) string {
	for _, t := range tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}

// conformanceName is the service name the suite's tenants get: the suite
// names them conf-<last 8 of the id>.
func conformanceName(tenantID string) string {
	return ecs.DefaultServiceNamePrefix + "conf-" + tenantID[len(tenantID)-8:]
}

func TestConformance(t *testing.T) {
	srv := startFake(t, ecsfake.Options{})
	logs := &providertest.LogBuffer{}
	block := fargateBlock(srv)
	providertest.Run(t, providertest.Harness{
		Provider: newProvider(t, block, logs),
		// Variant 0 sends traffic through a target group and variant 1 drops
		// it: Update from 0 to 1 must take it off the service.
		Config: func(v int) json.RawMessage {
			lbs := ""
			if v == 0 {
				lbs = fmt.Sprintf(`, "load_balancers": [{"target_group_arn": %q, "container_name": "app", "container_port": 8080}]`, targetGroup("conformance"))
			}
			return json.RawMessage(fmt.Sprintf(`{"image": "ghcr.io/example/app:1.%d", "ports": [{"container_port": 8080}], "env": {"GREETING": "v%d"},
				"resources": {"cpu_millicores": 250, "memory_mib": 512}%s}`, v, v, lbs))
		},
		SecretValue: func(token string) string { return "arn:aws:ssm:us-west-2:123456789012:parameter/" + token },
		InvalidConfigs: []providertest.InvalidConfig{
			{Name: "plain secret", Config: json.RawMessage(`{"image": "app:1", "secrets": {"TOKEN": "plain"}}`), Pointer: "/secrets/TOKEN"},
			{Name: "http probe", Config: json.RawMessage(`{"image": "app:1", "health_check": {"http": {"port": 80}}}`), Pointer: "/health_check/http"},
			{Name: "Fargate size", Config: json.RawMessage(`{"image": "app:1", "resources": {"cpu_millicores": 250, "memory_mib": 8192}}`), Pointer: "/resources"},
			{Name: "subnet", Config: json.RawMessage(`{"image": "app:1", "subnets": ["net-1"]}`), Pointer: "/subnets/0"},
		},
		Disrupt: func(t *testing.T, tenantID string) {
			if err := srv.DeleteServiceOutOfBand("landlord", conformanceName(tenantID)); err != nil {
				t.Fatal(err)
			}
		},
		Squat: func(t *testing.T, tenantName string) func(t *testing.T) {
			ctx, c := context.Background(), srv.Client(context.Background())
			name := ecs.DefaultServiceNamePrefix + tenantName
			out, err := c.CreateService(ctx, &awsecs.CreateServiceInput{Cluster: aws.String(srv.ClusterARN("landlord")), ServiceName: aws.String(name),
				TaskDefinition: aws.String(squatterTaskDefinition(t, srv)), DesiredCount: aws.Int32(0)})
			if err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				got, err := c.DescribeServices(ctx, &awsecs.DescribeServicesInput{Cluster: aws.String(srv.ClusterARN("landlord")), Services: []string{name}, Include: []types.ServiceField{types.ServiceFieldTags}})
				if err != nil || len(got.Services) != 1 || aws.ToString(got.Services[0].Status) != "ACTIVE" || len(got.Services[0].Tags) != 0 ||
					aws.ToString(got.Services[0].TaskDefinition) != aws.ToString(out.Service.TaskDefinition) {
					t.Errorf("the squatting service %s was changed or removed: %+v, %v", name, got, err)
				}
				if _, err := c.DeleteService(ctx, &awsecs.DeleteServiceInput{Cluster: aws.String(srv.ClusterARN("landlord")), Service: aws.String(name), Force: aws.Bool(true)}); err != nil {
					t.Error(err)
				}
			}
		},
		Tampers: tampers(srv, conformanceName),
		// The revision a service ran before its last change of task
		// definition stays registered, on purpose, for a circuit breaker's
		// rollback (until the next change): it is not counted, and any
		// other is.
		CountResources: func(t *testing.T, tenantID string) int {
			services := tenantServices(srv, tenantID)
			n := len(services) + tenantTaskDefinitions(t, srv, conformanceName(tenantID), tenantID)
			if len(services) == 1 && n > 2 {
				n--
			}
			return n
		},
		Restart:      func(t *testing.T) provider.Provider { return newProvider(t, block, logs) },
		Logs:         logs.Bytes,
		ReadyTimeout: 30 * time.Second,
		Parallel:     20,
	})
}

// squatterTaskDefinition registers a task definition that is no tenant's.
func squatterTaskDefinition(t *testing.T, srv *ecsfake.Server) string {
	t.Helper()
	out, err := srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("someone-else"), ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String("someone/else:1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.TaskDefinition.TaskDefinitionArn)
}
