package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

var hashKey = []byte("0123456789abcdef0123456789abcdef")

// The seed's provider block: compute-providers-doc.md.
const seedBlock = `{
  "cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord",
  "task_definition_arn": "arn:aws:ecs:us-west-2:123456789012:task-definition/tenant-app:12",
  "service_name_prefix": "landlord-tenant-"
}`

// The seed's ECS compute_config example, as written.
const seedTenantConfig = `{
  "cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord",
  "task_definition_arn": "arn:aws:ecs:us-west-2:123456789012:task-definition/tenant-app:12",
  "desired_count": 1,
  "launch_type": "FARGATE",
  "subnets": ["subnet-123", "subnet-456"],
  "security_groups": ["sg-123"],
  "assign_public_ip": true,
  "service_name_prefix": "landlord-tenant-"
}`

func resolver(t testing.TB, block string) *compute.Manager {
	t.Helper()
	p, err := ecs.New(context.Background(), ecs.Options{Block: json.RawMessage(block), HashKey: hashKey})
	if err != nil {
		t.Fatalf("ecs.New: %v", err)
	}
	return computetest.Manager(t, p, compute.ManagerOptions{DefaultProvider: ecs.Name})
}

func resolve(m *compute.Manager, config string) (*compute.Resolution, error) {
	return m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "0190d3c2-1111-7000-8000-000000000001", TenantName: "acme", Generation: 1, ComputeConfig: json.RawMessage(config)})
}

func TestSeedConfigs(t *testing.T) {
	m := resolver(t, seedBlock)
	for name, config := range map[string]string{"the seed's example": seedTenantConfig, "nothing but the block": `{}`} {
		if _, err := resolve(m, config); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestConfigViolations(t *testing.T) {
	m := resolver(t, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "launch_type": "FARGATE", "subnets": ["subnet-0a1b2c3d"]}`)
	for _, tc := range []struct {
		name, config, pointer, says string
	}{
		{"no image and no task definition", `{}`, "/task_definition_arn", "required when the config has no image"},
		{"plain secret", `{"image": "app:1", "secrets": {"DB_PASSWORD": "hunter2"}}`, "/secrets/DB_PASSWORD", "SSM Parameter Store"},
		{"sidecar secret", `{"image": "app:1", "sidecars": [{"name": "s", "image": "s:1", "secrets": {"K": "v"}}]}`, "/sidecars/0/secrets/K", "reference"},
		{"http probe", `{"image": "app:1", "health_check": {"http": {"port": 8080}}}`, "/health_check/http", "health_check.command"},
		{"probe interval", `{"image": "app:1", "health_check": {"command": ["true"], "interval": "1s"}}`, "/health_check/interval", "5 to 300"},
		{"fargate size", `{"image": "app:1", "resources": {"cpu_millicores": 250, "memory_mib": 4096}}`, "/resources", "Fargate has no task size"},
		{"launch type and capacity providers", `{"image": "app:1", "capacity_provider_strategy": [{"capacity_provider": "FARGATE_SPOT"}]}`, "/capacity_provider_strategy", "choose one"},
		{"fargate without subnets", `{"image": "app:1", "subnets": null}`, "/subnets", "required on Fargate"},
		{"subnet shape", `{"image": "app:1", "subnets": ["subnet-xyz"]}`, "/subnets/0", ""},
		{"region", `{"image": "app:1", "region": "eu-west-1"}`, "/region", "not the region of cluster_arn"},
		{"task definition region", `{"task_definition_arn": "arn:aws:ecs:eu-west-1:123456789012:task-definition/app:3"}`, "/task_definition_arn", "cluster's region"},
		{"cluster ARN", `{"image": "app:1", "cluster_arn": "arn:aws:ecs:us-west-2:123456789012:service/landlord"}`, "/cluster_arn", ""},
		{"host port", `{"image": "app:1", "ports": [{"container_port": 8080, "host_port": 80}]}`, "/ports/0/host_port", "awsvpc"},
		{"load balancer container", `{"image": "app:1", "load_balancers": [{"target_group_arn": "arn:aws:elasticloadbalancing:us-west-2:123456789012:targetgroup/tg/1", "container_name": "web", "container_port": 80}]}`, "/load_balancers/0/container_name", "names no container"},
		{"landlord's tags", `{"image": "app:1", "tags": {"landlord:tenant-id": "x"}}`, "/tags", ""},
		{"deployment percents", `{"image": "app:1", "deployment": {"minimum_healthy_percent": 100, "maximum_percent": 100}}`, "", ""},
		{"scaling range", `{"image": "app:1", "desired_count": {"min": 1, "max": 10}}`, "", ""},
		{"scaling range upside down", `{"image": "app:1", "desired_count": {"min": 5, "max": 2}}`, "/desired_count", "min 5 is above max 2"},
		{"scaling range without max", `{"image": "app:1", "desired_count": {"min": 5}}`, "/desired_count", ""},
		{"scaling range past ECS's limit", `{"image": "app:1", "desired_count": {"min": 1, "max": 5001}}`, "/desired_count", ""},
		{"scaling range with more", `{"image": "app:1", "desired_count": {"min": 1, "max": 2, "step": 1}}`, "/desired_count", ""},
		{"platform version", `{"image": "app:1", "platform_version": "1.4.0"}`, "", ""},
		{"platform version shape", `{"image": "app:1", "platform_version": "newest"}`, "/platform_version", ""},
		{"platform version off Fargate", `{"image": "app:1", "launch_type": "EC2", "subnets": null, "platform_version": "1.4.0"}`, "/platform_version", "Fargate only"},
		// What AWS refuses at RegisterTaskDefinition, refused first (rules.go).
		{"ECR on Fargate without an execution role", `{"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1"}`, "/execution_role_arn", "Fargate requires task definition to have execution role ARN to support ECR images."},
		{"ECR on Fargate with an execution role", `{"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1", "execution_role_arn": "arn:aws:iam::123456789012:role/exec"}`, "", ""},
		{"ECR on Fargate over a base task definition", `{"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1", "task_definition_arn": "arn:aws:ecs:us-west-2:123456789012:task-definition/base:1"}`, "", ""},
		{"ECR Public needs no role", `{"image": "public.ecr.aws/nginx/nginx:1"}`, "", ""},
		{"secrets without an execution role", `{"image": "app:1", "secrets": {"DB": "arn:aws:ssm:us-west-2:123456789012:parameter/db"}}`, "/execution_role_arn", "you must also specify a value for 'executionRoleArn'"},
		{"secrets with an execution role", `{"image": "app:1", "secrets": {"DB": "arn:aws:ssm:us-west-2:123456789012:parameter/db"}, "execution_role_arn": "arn:aws:iam::123456789012:role/exec"}`, "", ""},
		{"awslogs on Fargate without an execution role", `{"image": "app:1", "log_configuration": {"driver": "awslogs"}}`, "/execution_role_arn", "to support log driver awslogs"},
		{"awslogs on EC2 without an execution role", `{"image": "app:1", "launch_type": "EC2", "subnets": null, "log_configuration": {"driver": "awslogs"}}`, "", ""},
		{"log secret options without an execution role", `{"image": "app:1", "launch_type": "EC2", "subnets": null, "log_configuration": {"driver": "splunk", "secret_options": {"splunk-token": "arn:aws:ssm:us-west-2:123456789012:parameter/t"}}}`, "/execution_role_arn", "secret_options"},
		{"log secret option given as a value", `{"image": "app:1", "execution_role_arn": "arn:aws:iam::123456789012:role/exec", "log_configuration": {"driver": "splunk", "secret_options": {"splunk-token": "abc"}}}`, "/log_configuration/secret_options/splunk-token", "ARN"},
		{"log group name", `{"image": "app:1", "execution_role_arn": "arn:aws:iam::123456789012:role/exec", "log_configuration": {"driver": "awslogs", "options": {"awslogs-group": "my group"}}}`, "/log_configuration/options/awslogs-group", "not a CloudWatch Logs group name"},
		{"log stream prefix", `{"image": "app:1", "execution_role_arn": "arn:aws:iam::123456789012:role/exec", "log_configuration": {"driver": "awslogs", "options": {"awslogs-stream-prefix": "a:b"}}}`, "/log_configuration/options/awslogs-stream-prefix", ""},
		{"log driver", `{"image": "app:1", "log_configuration": {"driver": "none"}}`, "/log_configuration/driver", ""},
		{"execution role shape", `{"image": "app:1", "execution_role_arn": "arn:aws:iam::123456789012:user/exec"}`, "/execution_role_arn", ""},
		{"task role shape", `{"image": "app:1", "task_role_arn": "exec"}`, "/task_role_arn", ""},
		{"tag value characters", `{"image": "app:1", "tags": {"team": "a,b"}}`, "/tags/team", "+ - = . _ : / @"},
		{"tag key characters", `{"image": "app:1", "tags": {"team!": "a"}}`, "/tags/team!", "tag key"},
		{"tag key in another script", `{"image": "app:1", "tags": {"équipe": "café 1"}}`, "", ""},
		{"tag key reserved in capitals", `{"image": "app:1", "tags": {"AWS:team": "a"}}`, "/tags/AWS:team", "reserved for AWS"},
		{"tag value length", `{"image": "app:1", "tags": {"team": "` + strings.Repeat("a", 257) + `"}}`, "/tags/team", "256"},
		{"tags past AWS's 50", `{"image": "app:1", "tags": ` + manyTags(46) + `}`, "/tags", "ECS allows 50"},
		{"tags up to AWS's 50", `{"image": "app:1", "tags": ` + manyTags(45) + `}`, "", ""},
		{"image past ECS's 255", `{"image": "registry.example.com/` + strings.Repeat("a", 240) + `:1"}`, "/image", "at most 255"},
		{"task definition past 64 KiB", `{"image": "app:1", "env": ` + bigEnv(70<<10) + `}`, "", "64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolve(m, tc.config)
			if tc.pointer == "" && tc.says == "" {
				if err != nil {
					t.Fatalf("Resolve = %v, want it accepted", err)
				}
				return
			}
			if !errors.Is(err, provider.ErrInvalidSpec) {
				t.Fatalf("Resolve = %v, want ErrInvalidSpec", err)
			}
			for _, v := range violation.Of(err) {
				if strings.HasPrefix(v.Pointer, tc.pointer) && strings.Contains(v.Message, tc.says) {
					return
				}
			}
			t.Errorf("no violation at %s saying %q: %v", tc.pointer, tc.says, err)
		})
	}
}

// manyTags is a JSON object of n tags.
func manyTags(n int) string {
	tags := map[string]string{}
	for i := range n {
		tags[fmt.Sprintf("k%d", i)] = "v"
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

// bigEnv is a JSON object of environment variables of about size bytes.
func bigEnv(size int) string {
	env := map[string]string{}
	for i := 0; i*1024 < size; i++ {
		env[fmt.Sprintf("V%d", i)] = strings.Repeat("x", 1000)
	}
	b, _ := json.Marshal(env)
	return string(b)
}

func TestBlockRefusesUnknownKeys(t *testing.T) {
	_, err := ecs.New(context.Background(), ecs.Options{Block: json.RawMessage(`{"cluster": "x"}`), HashKey: hashKey})
	if err == nil || !strings.Contains(err.Error(), "/cluster") {
		t.Errorf("ecs.New with an unknown key = %v, want an error naming /cluster", err)
	}
}

func TestPublicNetworking(t *testing.T) {
	m := resolver(t, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "subnets": ["subnet-0a1b2c3d"]}`)
	res, err := resolve(m, `{"image": "app:1", "networking": {"public": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprintf("%+v", res.Spec.Options), "AssignPublicIP:true") {
		t.Errorf("networking.public did not ask for a public IP: %+v", res.Spec.Options)
	}
	m = resolver(t, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord"}`)
	if _, err := resolve(m, `{"image": "app:1", "networking": {"public": true}}`); err == nil || !strings.Contains(err.Error(), "/subnets") {
		t.Errorf("networking.public without subnets = %v, want a violation at /subnets", err)
	}
}
