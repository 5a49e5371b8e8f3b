package ecs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsecs "github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The IAM policy landlord documents is checked here against the requests
// AWS authorizes for each ECS call the provider makes. The calls are not
// listed by hand: a provider lifecycle runs against ecsfake through a
// recording proxy, and each recorded call is turned into its IAM requests
// by the rules in iamAuthorizations, which follow
//
//   - the Service Authorization Reference, "Actions, resources, and
//     condition keys for Amazon Elastic Container Service"
//     (serviceAuthorizationReference): for each action, its resource type
//     (none means the policy must say "*") and its condition keys;
//   - the ECS Developer Guide, "Grant permission to tag resources on
//     creation" (tagOnCreateGuide): a create or register call with tags is
//     also authorized as ecs:TagResource on the new resource, with
//     ecs:CreateAction set to the call's name;
//   - the IAM User Guide, "Grant a user permissions to pass a role to an AWS
//     service" (passRoleGuide): a task definition's executionRoleArn and
//     taskRoleArn are passed roles, iam:PassRole with iam:PassedToService
//     ecs-tasks.amazonaws.com.
//
// A call with no rule fails the test, and so does a rule no call used.
const (
	serviceAuthorizationReference = "https://docs.aws.amazon.com/service-iamAuthorization/latest/reference/list_amazonelasticcontainerservice.html"
	tagOnCreateGuide              = "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/supported-iam-actions-tagging.html"
	passRoleGuide                 = "https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_use_passrole.html"
)

// iamPolicyFile is the policy docs/compute-providers.md documents.
const iamPolicyFile = "../../../../deploy/aws/ecs-iam-policy.json"

// The example ARNs of the policy; ecsfake's defaults (us-west-2,
// 123456789012, cluster landlord) are the same.
const (
	iamRegion        = "us-west-2"
	iamAccount       = "123456789012"
	iamCluster       = "arn:aws:ecs:us-west-2:123456789012:cluster/landlord"
	iamExecutionRole = "arn:aws:iam::123456789012:role/tenant-task-execution"
	iamTaskRole      = "arn:aws:iam::123456789012:role/tenant-task"
)

// documentedBeforeIssue32 is the policy docs/compute-providers.md gave
// before issue 32. It grants ecs:TagResource only under an ecs:cluster
// condition, a key the reference does not list for ecs:TagResource: every
// tagging request, including the one RegisterTaskDefinition makes for its
// tags, is denied.
const documentedBeforeIssue32 = `{
  "Version": "2012-10-17",
  "Statement": [
    {"Sid": "Services", "Effect": "Allow",
     "Action": ["ecs:CreateService", "ecs:UpdateService", "ecs:DeleteService", "ecs:DescribeServices", "ecs:ListServices", "ecs:TagResource"],
     "Resource": "*",
     "Condition": {"ArnEquals": {"ecs:cluster": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord"}}},
    {"Sid": "Tasks", "Effect": "Allow",
     "Action": ["ecs:ListTasks", "ecs:DescribeTasks"],
     "Resource": "*",
     "Condition": {"ArnEquals": {"ecs:cluster": "arn:aws:ecs:us-west-2:123456789012:cluster/landlord"}}},
    {"Sid": "TaskDefinitions", "Effect": "Allow",
     "Action": ["ecs:RegisterTaskDefinition", "ecs:DeregisterTaskDefinition", "ecs:DescribeTaskDefinition", "ecs:ListTaskDefinitions", "ecs:DescribeClusters"],
     "Resource": "*"},
    {"Sid": "PassTaskRoles", "Effect": "Allow", "Action": "iam:PassRole",
     "Resource": ["arn:aws:iam::123456789012:role/tenant-task-execution", "arn:aws:iam::123456789012:role/tenant-task"],
     "Condition": {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}}
  ]
}`

// iamCall is one request the provider sent to ECS, and ECS's answer.
type iamCall struct {
	Op       string
	Request  []byte
	Response []byte
}

// iamCallInput holds the members of ECS requests that decide authorization.
type iamCallInput struct {
	Cluster          string
	Clusters         []string
	Service          string
	Services         []string
	ServiceName      string
	Tasks            []string
	TaskDefinition   string
	Family           string
	ExecutionRoleArn string
	TaskRoleArn      string
	ResourceArn      string
	Tags             []struct{ Key, Value string }
}

type iamCallOutput struct {
	TaskDefinition struct{ TaskDefinitionArn string }
}

// iamProxy is a proxy in front of ecsfake that keeps every call, failed
// ones too: IAM authorizes a request before ECS handles it.
type iamProxy struct {
	next http.Handler
	mu   sync.Mutex
	log  []iamCall
}

func (rec *iamProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	tee := &iamTee{ResponseWriter: w}
	rec.next.ServeHTTP(tee, r)
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonEC2ContainerServiceV20141113.")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.log = append(rec.log, iamCall{Op: op, Request: body, Response: tee.body.Bytes()})
}

func (rec *iamProxy) calls() []iamCall {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.log)
}

type iamTee struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *iamTee) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// iamAuthorization is how AWS authorizes one ECS operation.
type iamAuthorization struct {
	// source is where the rule comes from.
	source string
	// requests are the IAM requests of one call. Where the reference leaves
	// open which form of a resource AWS evaluates, a rule gives each form,
	// and the policy must allow all of them.
	requests func(in iamCallInput, out iamCallOutput) []iamRequest
}

// iamAuthorizations are the rules, by ECS operation. A condition key the
// reference lists for an action but a rule leaves out (ecs:subnet,
// ecs:task-cpu, aws:ResourceTag/…) can only make an Allow with a condition
// on it fail, never pass: the policy conditions on none of them.
var iamAuthorizations = map[string]iamAuthorization{
	// DescribeClusters: resource type cluster.
	"DescribeClusters": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		var out []iamRequest
		for _, c := range in.Clusters {
			out = append(out, iamRequest{Action: "ecs:DescribeClusters", Resource: iamClusterARN(c)})
		}
		return out
	}},
	// ListServices: no resource type; condition key ecs:cluster.
	"ListServices": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:ListServices", Resource: "*", Context: iamInCluster(in.Cluster)}}
	}},
	// DescribeServices: resource type service; condition key ecs:cluster.
	"DescribeServices": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		var out []iamRequest
		for _, s := range in.Services {
			out = append(out, iamRequest{Action: "ecs:DescribeServices", Resource: iamServiceARN(in.Cluster, s), Context: iamInCluster(in.Cluster)})
		}
		return out
	}},
	// CreateService: resource type service with ecs:cluster; condition keys
	// aws:RequestTag/${TagKey}, aws:TagKeys, ecs:task-definition. With tags,
	// also ecs:TagResource with ecs:CreateAction CreateService
	// (tagOnCreateGuide); ecs:TagResource's condition keys are
	// aws:TagKeys, aws:RequestTag/${TagKey}, aws:ResourceTag/${TagKey} and
	// ecs:CreateAction, not ecs:cluster.
	"CreateService": {serviceAuthorizationReference + " " + tagOnCreateGuide, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		arn := iamServiceARN(in.Cluster, in.ServiceName)
		ctx := iamWithTags(iamInCluster(in.Cluster), in)
		ctx["ecs:task-definition"] = []string{in.TaskDefinition}
		out := []iamRequest{{Action: "ecs:CreateService", Resource: arn, Context: ctx}}
		if len(in.Tags) > 0 {
			out = append(out, iamRequest{Action: "ecs:TagResource", Resource: arn,
				Context: iamWithTags(map[string][]string{"ecs:CreateAction": {"CreateService"}}, in)})
		}
		return out
	}},
	// UpdateService: resource type service with ecs:cluster; condition key
	// ecs:task-definition.
	"UpdateService": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		ctx := iamInCluster(in.Cluster)
		if in.TaskDefinition != "" {
			ctx["ecs:task-definition"] = []string{in.TaskDefinition}
		}
		return []iamRequest{{Action: "ecs:UpdateService", Resource: iamServiceARN(in.Cluster, in.Service), Context: ctx}}
	}},
	// DeleteService: resource type service; condition key ecs:cluster.
	"DeleteService": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:DeleteService", Resource: iamServiceARN(in.Cluster, in.Service), Context: iamInCluster(in.Cluster)}}
	}},
	// TagResource: resource types service, task-definition and others;
	// condition keys aws:TagKeys, aws:RequestTag/${TagKey} (and
	// ecs:CreateAction only when a create call tags).
	"TagResource": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:TagResource", Resource: in.ResourceArn, Context: iamWithTags(map[string][]string{}, in)}}
	}},
	// ListTasks: resource type container-instance; condition key
	// ecs:cluster. A list of a service's tasks names no instance, so both
	// "*" and an instance of the cluster are asked.
	"ListTasks": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		name := strings.TrimPrefix(iamClusterARN(in.Cluster), "arn:aws:ecs:"+iamRegion+":"+iamAccount+":cluster/")
		return []iamRequest{
			{Action: "ecs:ListTasks", Resource: "*", Context: iamInCluster(in.Cluster)},
			{Action: "ecs:ListTasks", Resource: "arn:aws:ecs:" + iamRegion + ":" + iamAccount + ":container-instance/" + name + "/0123456789abcdef0123456789abcdef", Context: iamInCluster(in.Cluster)},
		}
	}},
	// DescribeTasks: resource type task; condition key ecs:cluster.
	"DescribeTasks": {serviceAuthorizationReference, func(in iamCallInput, _ iamCallOutput) []iamRequest {
		var out []iamRequest
		for _, task := range in.Tasks {
			out = append(out, iamRequest{Action: "ecs:DescribeTasks", Resource: task, Context: iamInCluster(in.Cluster)})
		}
		return out
	}},
	// RegisterTaskDefinition: resource type task-definition
	// (task-definition/${TaskDefinitionFamilyName}:${TaskDefinitionRevisionNumber});
	// condition keys aws:RequestTag/${TagKey}, aws:TagKeys. The revision
	// does not exist before the call, so the family's ARN without a
	// revision is asked too. With tags, also ecs:TagResource on the new
	// revision with ecs:CreateAction RegisterTaskDefinition
	// (tagOnCreateGuide); each role it names is passed (passRoleGuide).
	"RegisterTaskDefinition": {serviceAuthorizationReference + " " + tagOnCreateGuide + " " + passRoleGuide, func(in iamCallInput, res iamCallOutput) []iamRequest {
		revision := res.TaskDefinition.TaskDefinitionArn
		family := "arn:aws:ecs:" + iamRegion + ":" + iamAccount + ":task-definition/" + in.Family
		var out []iamRequest
		for _, arn := range []string{revision, family} {
			out = append(out, iamRequest{Action: "ecs:RegisterTaskDefinition", Resource: arn, Context: iamWithTags(map[string][]string{}, in)})
			if len(in.Tags) > 0 {
				out = append(out, iamRequest{Action: "ecs:TagResource", Resource: arn,
					Context: iamWithTags(map[string][]string{"ecs:CreateAction": {"RegisterTaskDefinition"}}, in)})
			}
		}
		for _, role := range []string{in.ExecutionRoleArn, in.TaskRoleArn} {
			if role != "" {
				out = append(out, iamRequest{Action: "iam:PassRole", Resource: iamRoleARN(role),
					Context: map[string][]string{"iam:PassedToService": {"ecs-tasks.amazonaws.com"}}})
			}
		}
		return out
	}},
	// DescribeTaskDefinition, ListTaskDefinitions, DeregisterTaskDefinition:
	// no resource type and no condition key.
	"DescribeTaskDefinition": {serviceAuthorizationReference, func(iamCallInput, iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:DescribeTaskDefinition", Resource: "*"}}
	}},
	"ListTaskDefinitions": {serviceAuthorizationReference, func(iamCallInput, iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:ListTaskDefinitions", Resource: "*"}}
	}},
	"DeregisterTaskDefinition": {serviceAuthorizationReference, func(iamCallInput, iamCallOutput) []iamRequest {
		return []iamRequest{{Action: "ecs:DeregisterTaskDefinition", Resource: "*"}}
	}},
}

// iamClusterARN is the ARN of a cluster given by name or ARN; ECS's default
// cluster when none is given.
func iamClusterARN(ref string) string {
	switch {
	case strings.HasPrefix(ref, "arn:"):
		return ref
	case ref == "":
		ref = "default"
	}
	return "arn:aws:ecs:" + iamRegion + ":" + iamAccount + ":cluster/" + ref
}

// iamServiceARN is the ARN (long format) of a service given by name or ARN.
func iamServiceARN(cluster, ref string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref
	}
	name := strings.TrimPrefix(iamClusterARN(cluster), "arn:aws:ecs:"+iamRegion+":"+iamAccount+":cluster/")
	return "arn:aws:ecs:" + iamRegion + ":" + iamAccount + ":service/" + name + "/" + ref
}

// iamRoleARN is the ARN of a role given by name or ARN.
func iamRoleARN(ref string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref
	}
	return "arn:aws:iam::" + iamAccount + ":role/" + ref
}

func iamInCluster(cluster string) map[string][]string {
	return map[string][]string{"ecs:cluster": {iamClusterARN(cluster)}}
}

// iamWithTags adds the request's tags to ctx as aws:TagKeys and
// aws:RequestTag/<key>.
func iamWithTags(ctx map[string][]string, in iamCallInput) map[string][]string {
	for _, t := range in.Tags {
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], t.Key)
		ctx["aws:RequestTag/"+t.Key] = []string{t.Value}
	}
	return ctx
}

// iamRequestsOf turns recorded calls into IAM requests, failing the test for
// an operation without a rule.
func iamRequestsOf(t *testing.T, calls []iamCall) (requests []iamRequest, from []string) {
	t.Helper()
	for _, c := range calls {
		rule, ok := iamAuthorizations[c.Op]
		if !ok {
			t.Errorf("the provider calls %s, which has no iamAuthorization rule: add one from %s", c.Op, serviceAuthorizationReference)
			continue
		}
		var in iamCallInput
		var out iamCallOutput
		if err := json.Unmarshal(c.Request, &in); err != nil {
			t.Fatalf("%s request %s: %v", c.Op, c.Request, err)
		}
		if c.Op == "RegisterTaskDefinition" {
			if err := json.Unmarshal(c.Response, &out); err != nil || out.TaskDefinition.TaskDefinitionArn == "" {
				t.Fatalf("%s answered %s (%v): no task definition ARN", c.Op, c.Response, err)
			}
		}
		for _, r := range rule.requests(in, out) {
			requests = append(requests, r)
			from = append(from, c.Op)
		}
	}
	return requests, from
}

// iamLifecycleCalls runs a tenant through the provider against ecsfake and
// returns every ECS call it made: a health check, a provision on a base
// task definition with an execution and a task role, its rollout, an
// update to a new image (new revision, service update, tags, the old
// revision deregistered), and a destroy by a provider that has to find the
// tenant by scanning the cluster.
func iamLifecycleCalls(t *testing.T) []iamCall {
	t.Helper()
	ctx := context.Background()
	srv := startFake(t, ecsfake.Options{})
	if srv.Region != iamRegion || srv.Account != iamAccount || srv.ClusterARN("landlord") != iamCluster {
		t.Fatalf("ecsfake serves %s in %s/%s; the policy's examples are %s", srv.ClusterARN("landlord"), srv.Region, srv.Account, iamCluster)
	}
	rec := &iamProxy{next: srv.Handler()}
	proxy := httptest.NewServer(rec)
	t.Cleanup(proxy.Close)
	block := strings.ReplaceAll(fargateBlock(srv), srv.URL, proxy.URL)
	p := newProvider(t, block, nil)
	e := &env{srv: srv, p: p, manager: computetest.Manager(t, p, compute.ManagerOptions{DefaultProvider: ecs.Name})}

	base, err := srv.Client(ctx).RegisterTaskDefinition(ctx, &awsecs.RegisterTaskDefinitionInput{
		Family: aws.String("tenant-base"), NetworkMode: types.NetworkModeAwsvpc, RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate},
		Cpu: aws.String("256"), Memory: aws.String("512"), ExecutionRoleArn: aws.String(iamExecutionRole), TaskRoleArn: aws.String(iamTaskRole),
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("app"), Image: aws.String("ghcr.io/example/base:1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	config := func(image string) string {
		return fmt.Sprintf(`{"task_definition_arn": %q, "image": %q, "tags": {"team": "payments"}}`, aws.ToString(base.TaskDefinition.TaskDefinitionArn), image)
	}

	if err := p.CheckHealth(ctx); err != nil {
		t.Fatal(err)
	}
	spec := e.spec(t, "acme", config("ghcr.io/example/app:1"))
	if _, err := p.Provision(ctx, spec); err != nil {
		t.Fatal(err)
	}
	e.waitState(t, spec.TenantID, provider.StateRunning)
	if _, err := p.Update(ctx, spec.TenantID, e.next(t, spec, config("ghcr.io/example/app:2"))); err != nil {
		t.Fatal(err)
	}
	if err := newProvider(t, block, nil).Destroy(ctx, spec.TenantID); err != nil {
		t.Fatal(err)
	}
	return rec.calls()
}

func loadIAMPolicyFile(t *testing.T) *iamPolicy {
	t.Helper()
	b, err := os.ReadFile(iamPolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	return mustIAMPolicy(t, b)
}

// TestIAMPolicyCoversEveryCall evaluates deploy/aws/ecs-iam-policy.json
// against every IAM request of every call of a provider lifecycle, and the
// policy documented before issue 32 against the same requests.
func TestIAMPolicyCoversEveryCall(t *testing.T) {
	calls := iamLifecycleCalls(t)
	requests, from := iamRequestsOf(t, calls)

	t.Run("every rule is used", func(t *testing.T) {
		made := map[string]bool{}
		for _, c := range calls {
			made[c.Op] = true
		}
		for _, op := range slices.Sorted(maps.Keys(iamAuthorizations)) {
			if !made[op] {
				t.Errorf("the lifecycle made no %s call: exercise it, or drop its rule if the provider no longer calls it", op)
			}
		}
		want := []iamRequest{
			{Action: "ecs:TagResource", Context: map[string][]string{"ecs:CreateAction": {"RegisterTaskDefinition"}}},
			{Action: "ecs:TagResource", Context: map[string][]string{"ecs:CreateAction": {"CreateService"}}},
			{Action: "iam:PassRole", Resource: iamExecutionRole},
			{Action: "iam:PassRole", Resource: iamTaskRole},
		}
		for _, w := range want {
			if !slices.ContainsFunc(requests, func(r iamRequest) bool {
				return r.Action == w.Action && (w.Resource == "" || r.Resource == w.Resource) &&
					(w.Context == nil || slices.Equal(r.Context["ecs:CreateAction"], w.Context["ecs:CreateAction"]))
			}) {
				t.Errorf("the lifecycle made no request like %v", w)
			}
		}
	})

	t.Run("the policy allows every request", func(t *testing.T) {
		policy := loadIAMPolicyFile(t)
		for i, r := range requests {
			ok, by, err := policy.allows(r)
			if err != nil {
				t.Fatalf("%s: %v", from[i], err)
			}
			if !ok {
				t.Errorf("%s: %s denies %v (rule from %s)", from[i], iamPolicyFile, r, iamAuthorizations[from[i]].source)
			} else if testing.Verbose() {
				t.Logf("%s: %v allowed by %s", from[i], r, by)
			}
		}
	})

	t.Run("the policy documented before issue 32 denies tagging", func(t *testing.T) {
		old := mustIAMPolicy(t, []byte(documentedBeforeIssue32))
		deniedRegisterTags := false
		for i, r := range requests {
			ok, _, err := old.allows(r)
			if err != nil {
				t.Fatalf("%s: %v", from[i], err)
			}
			tagging := r.Action == "ecs:TagResource"
			if ok == tagging {
				t.Errorf("%s: the old policy allows=%v for %v; want only ecs:TagResource denied", from[i], ok, r)
			}
			if !ok && from[i] == "RegisterTaskDefinition" {
				deniedRegisterTags = true
			}
		}
		if !deniedRegisterTags {
			t.Error("the old policy allowed RegisterTaskDefinition with tags; issue 32 says it cannot")
		}
	})
}

// TestIAMPolicyAllowsNoMore checks requests landlord never makes against
// the policy: other clusters, services and families outside the
// service_name_prefix, tagging an existing task definition, roles passed
// to another service, and actions it does not use.
func TestIAMPolicyAllowsNoMore(t *testing.T) {
	policy := loadIAMPolicyFile(t)
	const (
		other     = "arn:aws:ecs:us-west-2:123456789012:cluster/other"
		otherSvc  = "arn:aws:ecs:us-west-2:123456789012:service/other/landlord-acme"
		foreign   = "arn:aws:ecs:us-west-2:123456789012:service/landlord/billing"
		tenantRev = "arn:aws:ecs:us-west-2:123456789012:task-definition/landlord-acme:1"
		otherRev  = "arn:aws:ecs:us-west-2:123456789012:task-definition/billing:1"
	)
	for _, c := range []struct {
		name string
		r    iamRequest
	}{
		{"describe another cluster", iamRequest{Action: "ecs:DescribeClusters", Resource: other}},
		{"list services of another cluster", iamRequest{Action: "ecs:ListServices", Resource: "*", Context: iamInCluster(other)}},
		{"describe services of another cluster", iamRequest{Action: "ecs:DescribeServices", Resource: otherSvc, Context: iamInCluster(other)}},
		{"list tasks of another cluster", iamRequest{Action: "ecs:ListTasks", Resource: "*", Context: iamInCluster(other)}},
		{"create a service in another cluster", iamRequest{Action: "ecs:CreateService", Resource: otherSvc, Context: iamInCluster(other)}},
		{"update a service outside the prefix", iamRequest{Action: "ecs:UpdateService", Resource: foreign, Context: iamInCluster(iamCluster)}},
		{"delete a service outside the prefix", iamRequest{Action: "ecs:DeleteService", Resource: foreign, Context: iamInCluster(iamCluster)}},
		{"tag a service outside the prefix", iamRequest{Action: "ecs:TagResource", Resource: foreign}},
		{"tag a service in another cluster on create", iamRequest{Action: "ecs:TagResource", Resource: otherSvc, Context: map[string][]string{"ecs:CreateAction": {"CreateService"}}}},
		{"register a family outside the prefix", iamRequest{Action: "ecs:RegisterTaskDefinition", Resource: otherRev}},
		{"tag a family outside the prefix on register", iamRequest{Action: "ecs:TagResource", Resource: otherRev, Context: map[string][]string{"ecs:CreateAction": {"RegisterTaskDefinition"}}}},
		{"tag an existing task definition", iamRequest{Action: "ecs:TagResource", Resource: tenantRev}},
		{"untag a service", iamRequest{Action: "ecs:UntagResource", Resource: "arn:aws:ecs:us-west-2:123456789012:service/landlord/landlord-acme"}},
		{"delete task definitions", iamRequest{Action: "ecs:DeleteTaskDefinitions", Resource: tenantRev}},
		{"run a task", iamRequest{Action: "ecs:RunTask", Resource: tenantRev, Context: iamInCluster(iamCluster)}},
		{"stop a task", iamRequest{Action: "ecs:StopTask", Resource: "arn:aws:ecs:us-west-2:123456789012:task/landlord/0123", Context: iamInCluster(iamCluster)}},
		{"pass a role to another service", iamRequest{Action: "iam:PassRole", Resource: iamTaskRole, Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}},
		{"pass a role without a service", iamRequest{Action: "iam:PassRole", Resource: iamTaskRole}},
		{"pass another role", iamRequest{Action: "iam:PassRole", Resource: "arn:aws:iam::123456789012:role/admin", Context: map[string][]string{"iam:PassedToService": {"ecs-tasks.amazonaws.com"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ok, by, err := policy.allows(c.r)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				t.Errorf("%s allows %v (statement %s)", iamPolicyFile, c.r, by)
			}
		})
	}
}

// TestDocumentedIAMPolicyIsTheFile checks that the IAM section of
// docs/compute-providers.md shows deploy/aws/ecs-iam-policy.json, so that
// the policy the tests check is the one readers copy.
func TestDocumentedIAMPolicyIsTheFile(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/compute-providers.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(iamPolicyFile)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "**IAM.**")
	if !ok {
		t.Fatal("docs/compute-providers.md has no **IAM.** section")
	}
	if end := strings.Index(section, "\n**"); end >= 0 {
		section = section[:end]
	}
	_, block, ok := strings.Cut(section, "```json\n")
	if !ok {
		t.Fatal("the IAM section of docs/compute-providers.md has no ```json block")
	}
	block, _, _ = strings.Cut(block, "```")
	var want, got bytes.Buffer
	if err := json.Compact(&want, file); err != nil {
		t.Fatalf("%s: %v", iamPolicyFile, err)
	}
	if err := json.Compact(&got, []byte(block)); err != nil {
		t.Fatalf("the IAM section's policy: %v", err)
	}
	if got.String() != want.String() {
		t.Errorf("the IAM section of docs/compute-providers.md shows\n%s\nnot %s:\n%s", block, iamPolicyFile, file)
	}
}
