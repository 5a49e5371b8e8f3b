package ecsfake

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// clusterName returns the cluster a cluster parameter names: a name, an ARN,
// or nothing, which ECS reads as the cluster called "default".
func clusterName(ref *string) string {
	name := aws.ToString(ref)
	if name == "" {
		return "default"
	}
	if rest, ok := strings.CutPrefix(name, "arn:"); ok {
		if i := strings.LastIndex(rest, ":cluster/"); i >= 0 {
			return rest[i+len(":cluster/"):]
		}
	}
	return name
}

// findCluster resolves a cluster parameter or fails as ECS does.
func (s *Server) findCluster(ref *string) (*cluster, error) {
	name := clusterName(ref)
	if strings.HasPrefix(name, "arn:") {
		return nil, invalidParameter("Invalid cluster identifier %q.", name)
	}
	c, ok := s.clusters[name]
	if !ok {
		return nil, errClusterNotFound
	}
	if ref != nil && strings.HasPrefix(*ref, "arn:") && *ref != c.arn {
		// An ARN for another region or account names a cluster this
		// endpoint does not have.
		return nil, errClusterNotFound
	}
	return c, nil
}

func (s *Server) describeClusters(_ time.Time, in *ecs.DescribeClustersInput) (*ecs.DescribeClustersOutput, error) {
	refs := in.Clusters
	if len(refs) == 0 {
		refs = []string{"default"}
	}
	if len(refs) > 100 {
		return nil, invalidParameter("clusters can have at most 100 items.")
	}
	out := &ecs.DescribeClustersOutput{Clusters: []types.Cluster{}, Failures: []types.Failure{}}
	for _, ref := range refs {
		c, err := s.findCluster(aws.String(ref))
		if err != nil {
			out.Failures = append(out.Failures, types.Failure{
				Arn:    aws.String(s.ClusterARN(clusterName(aws.String(ref)))),
				Reason: aws.String("MISSING"),
			})
			continue
		}
		out.Clusters = append(out.Clusters, c.describe())
	}
	return out, nil
}

func (c *cluster) describe() types.Cluster {
	var active, running, pending int32
	for _, svc := range c.services {
		if svc.status == statusActive {
			active++
		}
		for _, t := range svc.tasks {
			if t.status == taskRunning {
				running++
			} else {
				pending++
			}
		}
	}
	return types.Cluster{
		ClusterArn:          aws.String(c.arn),
		ClusterName:         aws.String(c.name),
		Status:              aws.String(statusActive),
		ActiveServicesCount: active,
		RunningTasksCount:   running,
		PendingTasksCount:   pending,
	}
}
