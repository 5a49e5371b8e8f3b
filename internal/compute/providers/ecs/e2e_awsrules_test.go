package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
)

// refusedWithoutRole is AWS's refusal of a task definition with secrets
// and no execution role.
const refusedWithoutRole = "When you are specifying container secrets, you must also specify a value for 'executionRoleArn'."

// TestEndToEndECRSecretsAndLogs runs, through `landlord serve` on a fake ECS
// with ECS's throttling on, the tenant the docs describe: an ECR image on
// Fargate with a Secrets Manager secret and CloudWatch logs, its execution
// role in its config. The same config without the role is refused at the
// API with AWS's reason, and the fake refuses the task definition without
// the role with AWS's message.
func TestEndToEndECRSecretsAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	srv := ecsfake.Start(t, ecsfake.Options{StepTime: 20 * time.Millisecond, DrainTime: 50 * time.Millisecond, Throttling: ecsfake.DocumentedRates()})
	l := startServeECSBlock(t, srv, "", `controller:
  workers: 4
  resync: 1s
  lease_ttl: 2s
`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tenants := l.Client().Tenants()

	const secret = "arn:aws:secretsmanager:us-west-2:123456789012:secret:acme/db-AbCdEf"
	config := func(role string) json.RawMessage {
		c := fmt.Sprintf(`{"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1.4", "ports": [{"container_port": 8080}],
		  "secrets": {"DATABASE_URL": %q}, "resources": {"cpu_millicores": 500, "memory_mib": 1024}`, secret)
		if role != "" {
			c += fmt.Sprintf(`, "execution_role_arn": %q`, role)
		}
		return json.RawMessage(c + "}")
	}

	// Without the role: a 422 at the field, with AWS's words.
	_, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: "e2e-norole", ComputeConfig: config("")}, llclient.CreateOptions{})
	var apiErr *llclient.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "/compute_config/execution_role_arn") ||
		!strings.Contains(err.Error(), refusedWithoutRole) {
		t.Errorf("create without an execution role = %v; want a 422 at /compute_config/execution_role_arn with AWS's reason", err)
	}

	tn, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: "e2e-ecr", ComputeConfig: config(executionRole)}, llclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tn, err = tenants.Wait(ctx, tn.ID, llclient.UntilReady, nil); err != nil {
		t.Fatalf("wait ready: %v", err)
	}
	if b, _ := json.Marshal(tn); strings.Contains(string(b), "acme/db") {
		t.Errorf("the API returns the secret's reference: %s", b)
	}
	checkServes(t, srv, tn)

	revs := srv.TaskDefinitions("landlord-e2e-ecr")
	if len(revs) != 1 {
		t.Fatalf("%d revisions, want 1", len(revs))
	}
	td := revs[0]
	c := td.ContainerDefinitions[0]
	if aws.ToString(td.ExecutionRoleArn) != executionRole || len(c.Secrets) != 1 || aws.ToString(c.Secrets[0].ValueFrom) != secret {
		t.Errorf("the task definition has role %q and secrets %+v; want the config's", aws.ToString(td.ExecutionRoleArn), c.Secrets)
	}
	wantLogs := map[string]string{"awslogs-group": "/ecs/landlord-e2e-ecr", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "e2e-ecr", "awslogs-create-group": "true"}
	if c.LogConfiguration == nil || c.LogConfiguration.LogDriver != types.LogDriverAwslogs || !maps.Equal(c.LogConfiguration.Options, wantLogs) {
		t.Errorf("log configuration %+v, want awslogs with %v", c.LogConfiguration, wantLogs)
	}

	// The fake refuses the same task definition without the role, as ECS does.
	_, err = srv.Client(ctx).RegisterTaskDefinition(ctx, &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("landlord-e2e-norole"), ContainerDefinitions: td.ContainerDefinitions, NetworkMode: td.NetworkMode,
		RequiresCompatibilities: td.RequiresCompatibilities, Cpu: td.Cpu, Memory: td.Memory,
	})
	var refused *types.ClientException
	if !errors.As(err, &refused) || !strings.Contains(aws.ToString(refused.Message), refusedWithoutRole) && !strings.Contains(aws.ToString(refused.Message), "execution role ARN") {
		t.Errorf("registering the task definition without its role = %v; want ECS's ClientException", err)
	}
	if n := srv.Throttled(); len(n) > 0 {
		t.Logf("calls throttled on the way: %v", n)
	}

	if _, err := tenants.Delete(ctx, tn.ID, llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.Wait(ctx, tn.ID, llclient.UntilDeleted, nil); err != nil {
		t.Fatalf("wait deleted: %v", err)
	}
}
