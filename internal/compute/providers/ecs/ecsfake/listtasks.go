package ecsfake

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

func (s *Server) listTasks(_ time.Time, in *ecs.ListTasksInput) (*ecs.ListTasksOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	limit, after, err := paging(in.MaxResults, 100, in.NextToken)
	if err != nil {
		return nil, err
	}
	services := c.services
	if in.ServiceName != nil {
		name := serviceName(*in.ServiceName)
		services = nil
		for _, svc := range c.services {
			if svc.name() == name {
				services = append(services, svc)
			}
		}
		if len(services) == 0 {
			return nil, errServiceNotFound
		}
	}
	var found []*task
	for _, svc := range services {
		var candidates []*task
		switch in.DesiredStatus {
		case "", types.DesiredStatusRunning:
			candidates = svc.tasks
		case types.DesiredStatusStopped:
			candidates = svc.stopped
		case types.DesiredStatusPending:
			// ECS accepts PENDING but never sets a task's desired status to
			// it, so nothing matches.
		default:
			return nil, invalidParameter("Invalid desiredStatus %q.", in.DesiredStatus)
		}
		for _, t := range candidates {
			if in.Family != nil && aws.ToString(t.def.def.Family) != *in.Family {
				continue
			}
			if in.StartedBy != nil && t.dep.id != *in.StartedBy {
				continue
			}
			if in.LaunchType != "" && t.dep.launchType != in.LaunchType {
				continue
			}
			found = append(found, t)
		}
	}
	slices.SortFunc(found, func(a, b *task) int { return strings.Compare(taskKey(a), taskKey(b)) })
	page, next := pageAfter(found, after, limit, taskKey)
	arns := make([]string, len(page))
	for i, t := range page {
		arns[i] = t.arn
	}
	return &ecs.ListTasksOutput{TaskArns: arns, NextToken: next}, nil
}

// taskKey orders tasks oldest first, and is what a ListTasks page token
// remembers.
func taskKey(t *task) string {
	return fmt.Sprintf("%020d/%s", t.createdAt.UnixNano(), t.arn)
}

func (s *Server) describeTasks(_ time.Time, in *ecs.DescribeTasksInput) (*ecs.DescribeTasksOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	if len(in.Tasks) == 0 || len(in.Tasks) > 100 {
		return nil, invalidParameter("tasks must contain between 1 and 100 items.")
	}
	withTags := slices.Contains(in.Include, types.TaskFieldTags)
	out := &ecs.DescribeTasksOutput{Tasks: []types.Task{}, Failures: []types.Failure{}}
	for _, ref := range in.Tasks {
		arn := ref
		if !strings.HasPrefix(ref, "arn:") {
			arn = s.arn("task/" + c.name + "/" + ref)
		}
		t := s.findTask(arn)
		if t == nil || t.svc.cluster != c {
			out.Failures = append(out.Failures, types.Failure{Arn: aws.String(arn), Reason: aws.String("MISSING")})
			continue
		}
		out.Tasks = append(out.Tasks, t.describe(withTags))
	}
	return out, nil
}

// findTask returns the running or recently stopped task with this ARN.
func (s *Server) findTask(arn string) *task {
	for _, c := range s.clusters {
		for _, svc := range c.services {
			for _, list := range [][]*task{svc.tasks, svc.stopped} {
				for _, t := range list {
					if t.arn == arn {
						return t
					}
				}
			}
		}
	}
	return nil
}
