package ecsfake

import (
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

func (s *Server) describeServices(_ time.Time, in *ecs.DescribeServicesInput) (*ecs.DescribeServicesOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	if len(in.Services) == 0 || len(in.Services) > 10 {
		return nil, invalidParameter("services must contain between 1 and 10 items.")
	}
	withTags := slices.Contains(in.Include, types.ServiceFieldTags)
	out := &ecs.DescribeServicesOutput{Services: []types.Service{}, Failures: []types.Failure{}}
	for _, ref := range in.Services {
		name := serviceName(ref)
		svc := c.find(name)
		if svc != nil && strings.HasPrefix(ref, "arn:") && ref != svc.arn() {
			svc = nil
		}
		if svc != nil && svc.lag > 0 {
			// ECS is eventually consistent: right after CreateService a
			// describe can miss the service.
			svc.lag--
			svc = nil
		}
		if svc == nil {
			arn := ref
			if !strings.HasPrefix(ref, "arn:") {
				arn = s.arn("service/" + c.name + "/" + name)
			}
			out.Failures = append(out.Failures, types.Failure{Arn: aws.String(arn), Reason: aws.String("MISSING")})
			continue
		}
		out.Services = append(out.Services, *s.describeService(svc, withTags))
	}
	return out, nil
}

// describeService builds the types.Service ECS would return now.
func (s *Server) describeService(svc *service, withTags bool) *types.Service {
	out := svc.spec
	if !withTags {
		out.Tags = nil
	}
	p := svc.primary()
	out.Status = aws.String(svc.status)
	out.DesiredCount = svc.desired
	out.TaskDefinition = aws.String(p.def.arn())
	out.LaunchType = p.launchType
	out.CapacityProviderStrategy = p.capacity
	out.NetworkConfiguration = p.network
	out.Events = nonNil(svc.events)
	for _, t := range svc.tasks {
		if t.status == taskRunning {
			out.RunningCount++
		} else {
			out.PendingCount++
		}
	}
	out.Deployments = make([]types.Deployment, 0, len(svc.deployments))
	for _, d := range svc.deployments {
		out.Deployments = append(out.Deployments, svc.describeDeployment(d))
	}
	return &out
}

func (svc *service) describeDeployment(d *deployment) types.Deployment {
	out := types.Deployment{
		Id:                       aws.String(d.id),
		Status:                   aws.String(d.status),
		TaskDefinition:           aws.String(d.def.arn()),
		DesiredCount:             d.desired,
		FailedTasks:              d.failed,
		CreatedAt:                aws.Time(d.createdAt),
		UpdatedAt:                aws.Time(d.updatedAt),
		LaunchType:               d.launchType,
		CapacityProviderStrategy: d.capacity,
		PlatformVersion:          d.platform,
		NetworkConfiguration:     d.network,
		RolloutState:             d.rollout,
		RolloutStateReason:       aws.String(d.reason),
	}
	for _, t := range svc.tasks {
		if t.dep != d {
			continue
		}
		if t.status == taskRunning {
			out.RunningCount++
		} else {
			out.PendingCount++
		}
	}
	return out
}

func (s *Server) listServices(_ time.Time, in *ecs.ListServicesInput) (*ecs.ListServicesOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	limit, after, err := paging(in.MaxResults, 10, in.NextToken)
	if err != nil {
		return nil, err
	}
	var arns []string
	for _, svc := range c.services {
		if !svc.live() {
			continue
		}
		if in.LaunchType != "" && svc.primary().launchType != in.LaunchType {
			continue
		}
		if in.SchedulingStrategy != "" && svc.spec.SchedulingStrategy != in.SchedulingStrategy {
			continue
		}
		arns = append(arns, svc.arn())
	}
	slices.Sort(arns)
	page, next := pageAfter(arns, after, limit, func(a string) string { return a })
	return &ecs.ListServicesOutput{ServiceArns: nonNil(page), NextToken: next}, nil
}

// paging reads a list call's paging parameters: maxResults (1–100, else
// def) and the nextToken it resumes after. ListServices: "This value can be
// between 1 and 100. If this parameter isn't used, then ListServices returns
// up to 10 results"; ListTasks and ListTaskDefinitions: "This value can be
// between 1 and 100. If this parameter isn't used, then … returns up to 100
// results" (API_ListServices, API_ListTasks, API_ListTaskDefinitions).
func paging(maxResults *int32, def int, nextToken *string) (limit int, after string, err error) {
	limit = def
	if v := maxResults; v != nil {
		if *v < 1 || *v > 100 {
			return 0, "", invalidParameter("maxResults must be between 1 and 100.")
		}
		limit = int(*v)
	}
	after, err = decodeToken(nextToken)
	return limit, after, err
}

// Page tokens carry the sort key of the last item returned, so paging stays
// right when items come and go between pages.

func decodeToken(tok *string) (string, error) {
	if tok == nil {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*tok)
	if err != nil || len(b) == 0 {
		return "", invalidParameter("Invalid nextToken.")
	}
	return string(b), nil
}

// pageAfter returns up to limit items, of a list sorted by key, whose key
// sorts after after, and the token for the next page if there is more.
func pageAfter[T any](items []T, after string, limit int, key func(T) string) ([]T, *string) {
	start := 0
	if after != "" {
		start = len(items)
		for i, it := range items {
			if key(it) > after {
				start = i
				break
			}
		}
	}
	end := min(start+limit, len(items))
	page := items[start:end]
	if end == len(items) {
		return page, nil
	}
	return page, aws.String(base64.RawURLEncoding.EncodeToString([]byte(key(page[len(page)-1]))))
}
