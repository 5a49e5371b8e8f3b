package ecs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// bodyRecorder is the provider's HTTP client in tests that look at what it
// sends: every request body, by ECS operation.
type bodyRecorder struct {
	mu   sync.Mutex
	sent map[string][]map[string]any
}

func (r *bodyRecorder) Do(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err == nil {
		op := req.Header.Get("X-Amz-Target")
		op = op[strings.LastIndex(op, ".")+1:]
		r.mu.Lock()
		if r.sent == nil {
			r.sent = map[string][]map[string]any{}
		}
		r.sent[op] = append(r.sent[op], fields)
		r.mu.Unlock()
	}
	return http.DefaultClient.Do(req)
}

// requests returns the bodies sent to op, and forgets all.
func (r *bodyRecorder) requests(op string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent[op]
	r.sent = nil
	return out
}

// newRecordedEnv is newEnv with the provider's requests recorded.
func newRecordedEnv(t *testing.T, opts ecsfake.Options, block string) (*env, *bodyRecorder) {
	t.Helper()
	srv := startFake(t, opts)
	if block == "" {
		block = fargateBlock(srv)
	}
	block = strings.ReplaceAll(block, "FAKE_URL", srv.URL)
	// The SDK adds a CA bundle from the environment to its own HTTP client
	// only; this machine sets one.
	t.Setenv("AWS_CA_BUNDLE", "")
	rec := &bodyRecorder{}
	p, err := ecs.New(context.Background(), ecs.Options{Block: json.RawMessage(block), HashKey: hashKey, Credentials: fakeCredentials, HTTPClient: rec})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, p: p, manager: computetest.Manager(t, p, compute.ManagerOptions{DefaultProvider: ecs.Name})}, rec
}

// A change of the count is an UpdateService of the count alone: nothing
// else is resent, so no deployment starts and nothing set in between by
// another tool is overwritten.
func TestScaleOnlyUpdateSendsTheCount(t *testing.T) {
	e, rec := newRecordedEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "scaled", `{"image": "ghcr.io/example/app:1", "desired_count": 2}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	rec.requests("")
	if _, err := e.p.Update(context.Background(), spec.TenantID, e.next(t, spec, `{"image": "ghcr.io/example/app:1", "desired_count": 3}`)); err != nil {
		t.Fatal(err)
	}
	sent := rec.requests("UpdateService")
	if len(sent) != 1 {
		t.Fatalf("%d UpdateService calls, want 1", len(sent))
	}
	if keys := slices.Sorted(maps.Keys(sent[0])); !slices.Equal(keys, []string{"cluster", "desiredCount", "service"}) {
		t.Errorf("a scale-only update sent %v, want cluster, service and desiredCount alone", keys)
	}
	if svc := tenantServices(e.srv, spec.TenantID)[0]; len(svc.Deployments) != 1 {
		t.Errorf("a scale-only update started a deployment: %d deployments", len(svc.Deployments))
	}
}

// A change of one setting sends that setting and no other.
func TestUpdateSendsWhatDiffers(t *testing.T) {
	e, rec := newRecordedEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "tuned", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	rec.requests("")
	if _, err := e.p.Update(context.Background(), spec.TenantID, e.next(t, spec, `{"image": "ghcr.io/example/app:1", "enable_execute_command": true}`)); err != nil {
		t.Fatal(err)
	}
	sent := rec.requests("UpdateService")
	if len(sent) != 1 {
		t.Fatalf("%d UpdateService calls, want 1", len(sent))
	}
	if keys := slices.Sorted(maps.Keys(sent[0])); !slices.Equal(keys, []string{"cluster", "enableExecuteCommand", "service"}) {
		t.Errorf("turning on ECS Exec sent %v, want cluster, service and enableExecuteCommand alone", keys)
	}
}

// The revision a service ran before an update stays registered while the
// new one rolls out (a circuit breaker's rollback returns to it); it goes at
// the next change of the task definition.
func TestPreviousRevisionOutlivesTheRollout(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "rolling", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	second := e.next(t, spec, `{"image": "ghcr.io/example/app:2"}`)
	if _, err := e.p.Update(context.Background(), spec.TenantID, second); err != nil {
		t.Fatal(err)
	}
	checkStatuses(t, e.srv, "landlord-rolling", types.TaskDefinitionStatusActive, types.TaskDefinitionStatusActive)
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if _, err := e.p.Update(context.Background(), spec.TenantID, e.next(t, second, `{"image": "ghcr.io/example/app:3"}`)); err != nil {
		t.Fatal(err)
	}
	checkStatuses(t, e.srv, "landlord-rolling", types.TaskDefinitionStatusInactive, types.TaskDefinitionStatusActive, types.TaskDefinitionStatusActive)
	if err := e.p.Destroy(context.Background(), spec.TenantID); err != nil {
		t.Fatal(err)
	}
	checkStatuses(t, e.srv, "landlord-rolling", types.TaskDefinitionStatusInactive, types.TaskDefinitionStatusInactive, types.TaskDefinitionStatusInactive)
}

// checkStatuses checks the status of each revision of family, oldest
// first.
func checkStatuses(t *testing.T, srv *ecsfake.Server, family string, want ...types.TaskDefinitionStatus) {
	t.Helper()
	var got []types.TaskDefinitionStatus
	for _, td := range srv.TaskDefinitions(family) {
		got = append(got, td.Status)
	}
	if !slices.Equal(got, want) {
		t.Errorf("revisions of %s are %v, want %v", family, got, want)
	}
}

// Once ECS has forgotten a deleted service, a tenant's service made again
// is created with a client token of its own, never the first create's,
// which ECS could answer with the deleted service.
func TestRecreateAfterPurgeTakesANewToken(t *testing.T) {
	e, rec := newRecordedEnv(t, ecsfake.Options{DrainTime: 20 * time.Millisecond, InactiveRetention: 50 * time.Millisecond}, "")
	spec := e.spec(t, "purged", `{"image": "ghcr.io/example/app:1"}`)
	res, err := e.p.Provision(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	first := rec.requests("CreateService")
	client := e.srv.Client(context.Background())
	if _, err := client.DeleteService(context.Background(), &awsecs.DeleteServiceInput{
		Cluster: aws.String(e.srv.ClusterARN("landlord")), Service: aws.String("landlord-purged"), Force: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the deleted service is forgotten (described as MISSING)", 10*time.Second, func() (bool, string) {
		out, err := client.DescribeServices(context.Background(), &awsecs.DescribeServicesInput{
			Cluster: aws.String(e.srv.ClusterARN("landlord")), Services: []string{"landlord-purged"}})
		return err == nil && len(out.Services) == 0, fmt.Sprintf("%+v, %v", out, err)
	})
	spec.ResourceIDs = res.ResourceIDs
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	again := rec.requests("CreateService")
	if len(first) != 1 || len(again) != 1 {
		t.Fatalf("%d and %d CreateService calls, want 1 each", len(first), len(again))
	}
	if first[0]["clientToken"] == again[0]["clientToken"] {
		t.Errorf("the service made again after a purge reused the first create's client token %v", first[0]["clientToken"])
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
}

// A task execution role in the config reaches the task definition, and with
// it awslogs to a group and stream prefix of the tenant's; Inspect finds
// nothing to repair in what Provision registered.
func TestExecutionRoleAndDefaultLogs(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "logged", `{"image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/app:1",
	  "execution_role_arn": "arn:aws:iam::123456789012:role/exec", "task_role_arn": "arn:aws:iam::123456789012:role/app",
	  "secrets": {"DB": "arn:aws:ssm:us-west-2:123456789012:parameter/db"}}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	revs := e.srv.TaskDefinitions("landlord-logged")
	if len(revs) != 1 {
		t.Fatalf("%d revisions, want 1", len(revs))
	}
	td := revs[0]
	if aws.ToString(td.ExecutionRoleArn) != "arn:aws:iam::123456789012:role/exec" || aws.ToString(td.TaskRoleArn) != "arn:aws:iam::123456789012:role/app" {
		t.Errorf("roles %v and %v, want the config's", aws.ToString(td.ExecutionRoleArn), aws.ToString(td.TaskRoleArn))
	}
	logs := td.ContainerDefinitions[0].LogConfiguration
	want := map[string]string{"awslogs-group": "/ecs/landlord-logged", "awslogs-region": "us-west-2", "awslogs-stream-prefix": "logged", "awslogs-create-group": "true"}
	if logs == nil || logs.LogDriver != types.LogDriverAwslogs || !maps.Equal(logs.Options, want) {
		t.Errorf("log configuration %+v, want awslogs with %v", logs, want)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	in, err := e.p.Inspect(context.Background(), spec)
	if err != nil || len(in.Drift) != 0 {
		t.Errorf("Inspect after Provision = %+v, %v; want no drift", in, err)
	}
}

// Over a base task definition, the rules that need its roles are applied
// once Provision has read it: a base without an execution role and a
// config with secrets is refused before anything is registered.
func TestBaseWithoutExecutionRoleIsRefused(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, `{"cluster_arn": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord", "endpoint": "FAKE_URL", "launch_type": "FARGATE", "subnets": ["subnet-0a1b2c3d"]}`)
	td, err := e.srv.Client(context.Background()).RegisterTaskDefinition(context.Background(), &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("bare"), NetworkMode: types.NetworkModeAwsvpc, RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
		Cpu: aws.String("256"), Memory: aws.String("512"),
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("x"), Image: aws.String("x")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, "based", fmt.Sprintf(`{"task_definition_arn": %q, "image": "ghcr.io/example/app:2", "secrets": {"DB": "arn:aws:ssm:us-west-2:123456789012:parameter/db"}}`,
		aws.ToString(td.TaskDefinition.TaskDefinitionArn)))
	_, err = e.p.Provision(context.Background(), spec)
	if !errors.Is(err, provider.ErrInvalidSpec) || !provider.IsTerminal(err) {
		t.Fatalf("Provision over a base without an execution role = %v, want a terminal ErrInvalidSpec", err)
	}
	var at []string
	for _, v := range violation.Of(err) {
		at = append(at, v.Pointer)
	}
	if !slices.Contains(at, "/execution_role_arn") || !strings.Contains(err.Error(), "executionRoleArn") {
		t.Errorf("the refusal %v does not name /execution_role_arn with AWS's reason", err)
	}
	if n := len(e.srv.TaskDefinitions("landlord-based")); n != 0 {
		t.Errorf("%d revisions registered for a refused config", n)
	}
}

// An answer the SDK cannot read (an emulator that writes a task's cpu as a
// number) is a terminal error that says so, not a status read retried
// for ever.
func TestUnreadableAnswerIsTerminal(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "unread", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	e.srv.MalformNext("DescribeTasks", 1)
	_, err := e.p.GetStatus(context.Background(), spec.TenantID)
	if err == nil || !provider.IsTerminal(err) || !strings.Contains(err.Error(), "cannot read the endpoint's answer") {
		t.Errorf("GetStatus with an answer the SDK cannot read = %v; want a terminal error saying so", err)
	}
	if st, err := e.p.GetStatus(context.Background(), spec.TenantID); err != nil || st.State != provider.StateRunning {
		t.Errorf("GetStatus once the answers are ECS's again = %+v, %v", st, err)
	}
}

// Destroy forgets the deleted service's last task listing, which no status
// read needs again.
func TestDestroyForgetsTheTaskListing(t *testing.T) {
	e := newEnv(t, ecsfake.Options{}, "")
	spec := e.spec(t, "forgotten", `{"image": "ghcr.io/example/app:1"}`)
	if _, err := e.p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if n := ecs.RememberedServices(e.p); n != 1 {
		t.Fatalf("%d task listings kept for a running service, want 1", n)
	}
	if err := e.p.Destroy(context.Background(), spec.TenantID); err != nil {
		t.Fatal(err)
	}
	if n := ecs.RememberedServices(e.p); n != 0 {
		t.Errorf("%d task listings kept after Destroy, want none", n)
	}
}
