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

	"github.com/jaxxstorm/landlord/internal/poll"
)

const pullError = "CannotPullContainerError: pull image manifest has been retried 5 time(s): not found"

func TestRunningTaskDetails(t *testing.T) {
	ctx := context.Background()
	s, c := newFake(t, Options{})
	td := mustRegister(t, c, "app", "nginx", fargate, func(in *ecs.RegisterTaskDefinitionInput) {
		in.ContainerDefinitions[0].HealthCheck = &types.HealthCheck{Command: []string{"CMD", "true"}}
	})
	in := serviceInput("svc", "app", 1)
	in.Tags = []types.Tag{{Key: aws.String("tenant"), Value: aws.String("a")}}
	in.PropagateTags = types.PropagateTagsService
	mustCreate(t, c, in)

	list, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("svc")})
	if err != nil || len(list.TaskArns) != 1 {
		t.Fatalf("ListTasks: %v %v", list, err)
	}
	states := []string{}
	for range 3 {
		out, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("landlord"), Tasks: list.TaskArns})
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, aws.ToString(out.Tasks[0].LastStatus))
		s.Advance(100 * time.Millisecond)
	}
	if !slices.Equal(states, []string{"PROVISIONING", "PENDING", "RUNNING"}) {
		t.Errorf("states %v", states)
	}

	out, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("landlord"), Tasks: list.TaskArns, Include: []types.TaskField{types.TaskFieldTags}})
	if err != nil {
		t.Fatal(err)
	}
	task := out.Tasks[0]
	id := aws.ToString(task.TaskArn)[strings.LastIndex(aws.ToString(task.TaskArn), "/")+1:]
	if !strings.HasPrefix(aws.ToString(task.TaskArn), "arn:aws:ecs:us-west-2:123456789012:task/landlord/") || len(id) != 32 {
		t.Errorf("task ARN %s", aws.ToString(task.TaskArn))
	}
	svc := mustDescribe(t, c, "svc")
	checks := map[string][2]string{
		"group":             {aws.ToString(task.Group), "service:svc"},
		"startedBy":         {aws.ToString(task.StartedBy), aws.ToString(svc.Deployments[0].Id)},
		"taskDefinitionArn": {aws.ToString(task.TaskDefinitionArn), aws.ToString(td.TaskDefinitionArn)},
		"launchType":        {string(task.LaunchType), "FARGATE"},
		"desiredStatus":     {aws.ToString(task.DesiredStatus), "RUNNING"},
		"healthStatus":      {string(task.HealthStatus), "HEALTHY"},
		"attachment type":   {aws.ToString(task.Attachments[0].Type), "ElasticNetworkInterface"},
		"container image":   {aws.ToString(task.Containers[0].Image), "nginx"},
		"container status":  {aws.ToString(task.Containers[0].LastStatus), "RUNNING"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	details := map[string]string{}
	for _, kv := range task.Attachments[0].Details {
		details[aws.ToString(kv.Name)] = aws.ToString(kv.Value)
	}
	ip := details["privateIPv4Address"]
	if !strings.HasPrefix(ip, "10.0.") || !strings.HasPrefix(details["subnetId"], "subnet-") || !strings.HasPrefix(details["networkInterfaceId"], "eni-") {
		t.Errorf("ENI details %v", details)
	}
	if got := aws.ToString(task.Containers[0].NetworkInterfaces[0].PrivateIpv4Address); got != ip {
		t.Errorf("container IP %s, attachment IP %s", got, ip)
	}
	if diff := cmp.Diff(in.Tags, task.Tags, ignoreNoSerde); diff != "" {
		t.Errorf("propagated tags (-want +got):\n%s", diff)
	}

	// A task that dies out of band is replaced.
	if err := s.StopTask("landlord", id, "Essential container in task exited"); err != nil {
		t.Fatal(err)
	}
	s.Advance(200 * time.Millisecond)
	svc = mustDescribe(t, c, "svc")
	if svc.RunningCount != 1 {
		t.Errorf("running %d after replacement", svc.RunningCount)
	}
	stopped, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("svc"), DesiredStatus: types.DesiredStatusStopped})
	if err != nil || !slices.Equal(stopped.TaskArns, list.TaskArns) {
		t.Errorf("stopped tasks %v (%v), want %v", stopped.TaskArns, err, list.TaskArns)
	}
	pending, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), DesiredStatus: types.DesiredStatusPending})
	if err != nil || len(pending.TaskArns) != 0 {
		t.Errorf("desiredStatus PENDING: %v %v, want none", pending.TaskArns, err)
	}
	missing, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("landlord"), Tasks: []string{"0123"}})
	if err != nil || len(missing.Failures) != 1 || aws.ToString(missing.Failures[0].Reason) != "MISSING" {
		t.Errorf("unknown task: %+v %v", missing, err)
	}
	_, err = c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("ghost")})
	var snf *types.ServiceNotFoundException
	if !errors.As(err, &snf) {
		t.Errorf("ListTasks for an unknown service: %v", err)
	}
}

func TestFailingImage(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		breaker     *types.DeploymentCircuitBreaker
		goodFirst   bool // deploy a working revision first, then the failing one
		wait        time.Duration
		wantDeploys []string
		wantFailed  int32
		wantEvent   string
	}{
		{
			name:        "no circuit breaker retries forever",
			wait:        2 * time.Second, // ten attempts of 200ms
			wantDeploys: []string{"PRIMARY app:1 IN_PROGRESS"},
			wantFailed:  10,
		},
		{
			name:        "circuit breaker fails the deployment after 3",
			breaker:     &types.DeploymentCircuitBreaker{Enable: true},
			wait:        2 * time.Second,
			wantDeploys: []string{"PRIMARY app:1 FAILED"},
			wantFailed:  3,
			wantEvent:   "deployment failed: tasks failed to start.",
		},
		{
			name:        "rollback with nothing to roll back to",
			breaker:     &types.DeploymentCircuitBreaker{Enable: true, Rollback: true},
			wait:        2 * time.Second,
			wantDeploys: []string{"PRIMARY app:1 FAILED"},
			wantFailed:  3,
		},
		{
			name:        "rollback to the last completed deployment",
			breaker:     &types.DeploymentCircuitBreaker{Enable: true, Rollback: true},
			goodFirst:   true,
			wait:        2 * time.Second,
			wantDeploys: []string{"PRIMARY app:1 COMPLETED"},
			wantEvent:   "rolling back to deployment ecs-svc/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := newFake(t, Options{})
			s.FailImage("bad:1", pullError)
			in := serviceInput("svc", "app", 1)
			if tt.breaker != nil {
				in.DeploymentConfiguration = &types.DeploymentConfiguration{DeploymentCircuitBreaker: tt.breaker}
			}
			if tt.goodFirst {
				mustRegister(t, c, "app", "good:1", fargate)
				mustCreate(t, c, in)
				s.Advance(time.Second)
				mustRegister(t, c, "app", "bad:1", fargate)
				if _, err := c.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String("landlord"), Service: aws.String("svc"), TaskDefinition: aws.String("app:2")}); err != nil {
					t.Fatal(err)
				}
			} else {
				mustRegister(t, c, "app", "bad:1", fargate)
				mustCreate(t, c, in)
			}
			s.Advance(tt.wait)

			svc := mustDescribe(t, c, "svc")
			if got := deploymentSummary(&svc); !slices.Equal(got, tt.wantDeploys) {
				t.Errorf("deployments %q, want %q", got, tt.wantDeploys)
			}
			if got := svc.Deployments[0].FailedTasks; got != tt.wantFailed {
				t.Errorf("primary failedTasks %d, want %d", got, tt.wantFailed)
			}
			if tt.breaker != nil && !tt.goodFirst && aws.ToString(svc.Deployments[0].RolloutStateReason) != circuitBreakerReason {
				t.Errorf("rolloutStateReason %q", aws.ToString(svc.Deployments[0].RolloutStateReason))
			}
			if tt.wantEvent != "" && !slices.ContainsFunc(messages(svc), func(m string) bool { return strings.Contains(m, tt.wantEvent) }) {
				t.Errorf("no event containing %q in %q", tt.wantEvent, messages(svc))
			}

			stopped, err := c.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("landlord"), ServiceName: aws.String("svc"), DesiredStatus: types.DesiredStatusStopped})
			if err != nil || len(stopped.TaskArns) == 0 {
				t.Fatalf("stopped tasks: %v %v", stopped, err)
			}
			out, err := c.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("landlord"), Tasks: stopped.TaskArns})
			if err != nil {
				t.Fatal(err)
			}
			// With a rollback, the first deployment's healthy task is
			// among the stopped ones too, drained by the rollback.
			i := slices.IndexFunc(out.Tasks, func(t types.Task) bool { return t.StopCode == types.TaskStopCodeTaskFailedToStart })
			if i < 0 {
				t.Fatalf("no task stopped with TaskFailedToStart among %d", len(out.Tasks))
			}
			task := out.Tasks[i]
			if aws.ToString(task.StoppedReason) != pullError || task.StopCode != types.TaskStopCodeTaskFailedToStart ||
				aws.ToString(task.LastStatus) != "STOPPED" || aws.ToString(task.Containers[0].Reason) != pullError {
				t.Errorf("failed task: %s %s %s container reason %q", aws.ToString(task.LastStatus), task.StopCode, aws.ToString(task.StoppedReason), aws.ToString(task.Containers[0].Reason))
			}
		})
	}
}

// TestFailingImageRecovers checks a failing image stops failing once the
// test says so, and the retrying deployment completes.
func TestFailingImageRecovers(t *testing.T) {
	s, c := newFake(t, Options{})
	s.FailImage("flaky", "CannotPullContainerError: timeout")
	mustRegister(t, c, "app", "flaky", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 2))
	s.Advance(time.Second)
	s.FailImage("flaky", "")
	s.Advance(time.Second)
	svc := mustDescribe(t, c, "svc")
	if svc.RunningCount != 2 || svc.Deployments[0].RolloutState != types.DeploymentRolloutStateCompleted {
		t.Errorf("running %d rollout %s", svc.RunningCount, svc.Deployments[0].RolloutState)
	}
	if got := len(s.Tasks("landlord", "svc")); got != 12 {
		t.Errorf("Tasks() = %d tasks, want 10 stopped and 2 running", got)
	}
}

func TestRealClockAdvancesWithWallTime(t *testing.T) {
	s, c := newFake(t, Options{Now: time.Now, StepTime: time.Millisecond})
	mustRegister(t, c, "app", "nginx", fargate)
	mustCreate(t, c, serviceInput("svc", "app", 1))
	poll.Until(t, "the task reaches RUNNING", 5*time.Second, func() (bool, string) {
		return mustDescribe(t, c, "svc").RunningCount == 1, fmt.Sprintf("%+v", s.Tasks("landlord", "svc"))
	})
}
