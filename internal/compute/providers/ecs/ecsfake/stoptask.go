package ecsfake

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// maxStopReason is the longest reason StopTask accepts: "Up to 255
// characters are allowed in this message."
const maxStopReason = 255

// stopTaskCall is the StopTask operation
// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_StopTask.html),
// as `aws ecs stop-task` calls it: the task stops with stop code
// UserInitiated and the caller's reason ("An optional message specified
// when a task is stopped."), and its service's scheduler starts a
// replacement. ECS sends the containers SIGTERM and waits up to 30 seconds
// before SIGKILL; the fake's task stops at once.
func (s *Server) stopTaskCall(now time.Time, in *ecs.StopTaskInput) (*ecs.StopTaskOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	if len(aws.ToString(in.Reason)) > maxStopReason {
		return nil, invalidParameter("Reason must be at most %d characters.", maxStopReason)
	}
	ref := aws.ToString(in.Task)
	arn := ref
	if !strings.HasPrefix(ref, "arn:") {
		arn = s.arn("task/" + c.name + "/" + ref)
	}
	t := s.findTask(arn)
	if t == nil || t.svc.cluster != c {
		return nil, invalidParameter("The referenced task was not found.")
	}
	svc := t.svc
	s.stopTask(t, now, aws.ToString(in.Reason), types.TaskStopCodeUserInitiated)
	svc.steady = false
	s.reconcile(svc, now)
	task := t.describe(false)
	return &ecs.StopTaskOutput{Task: &task}, nil
}
