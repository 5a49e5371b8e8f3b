package ecs

import (
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// desiredService is what the tenant's service should be: every field
// landlord sets, so that create and update send the same.
type desiredService struct {
	TaskDefinition           string
	DesiredCount             int32
	LaunchType               types.LaunchType
	CapacityProviderStrategy []types.CapacityProviderStrategyItem
	Network                  *types.NetworkConfiguration
	Deployment               *types.DeploymentConfiguration
	GracePeriod              *int32
	ExecuteCommand           bool
	LoadBalancers            []types.LoadBalancer
	ServiceRegistries        []types.ServiceRegistry
}

func newDesiredService(o tenantOptions, taskDefinition string) desiredService {
	d := desiredService{
		TaskDefinition: taskDefinition,
		DesiredCount:   o.desiredCount(),
		LaunchType:     types.LaunchType(o.LaunchType),
		ExecuteCommand: o.EnableExecuteCommand,
	}
	for _, c := range o.CapacityProviderStrategy {
		d.CapacityProviderStrategy = append(d.CapacityProviderStrategy, types.CapacityProviderStrategyItem{
			CapacityProvider: aws.String(c.CapacityProvider), Weight: c.Weight, Base: c.Base})
	}
	if o.awsvpc() {
		public := types.AssignPublicIpDisabled
		if o.AssignPublicIP {
			public = types.AssignPublicIpEnabled
		}
		d.Network = &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
			Subnets: slices.Sorted(slices.Values(o.Subnets)), SecurityGroups: slices.Sorted(slices.Values(o.SecurityGroups)), AssignPublicIp: public,
		}}
	}
	dep := o.Deployment
	d.Deployment = &types.DeploymentConfiguration{
		MinimumHealthyPercent: aws.Int32(orDefault(dep.MinimumHealthyPercent, DefaultMinimumHealthyPercent)),
		MaximumPercent:        aws.Int32(orDefault(dep.MaximumPercent, DefaultMaximumPercent)),
		DeploymentCircuitBreaker: &types.DeploymentCircuitBreaker{
			Enable: dep.CircuitBreaker == nil || *dep.CircuitBreaker, Rollback: dep.Rollback == nil || *dep.Rollback},
	}
	if g := time.Duration(o.HealthCheckGracePeriod); g > 0 {
		d.GracePeriod = aws.Int32(int32(g / time.Second))
	}
	for _, lb := range o.LoadBalancers {
		l := types.LoadBalancer{ContainerName: aws.String(lb.ContainerName), ContainerPort: aws.Int32(lb.ContainerPort)}
		if lb.TargetGroupARN != "" {
			l.TargetGroupArn = aws.String(lb.TargetGroupARN)
		}
		if lb.LoadBalancerName != "" {
			l.LoadBalancerName = aws.String(lb.LoadBalancerName)
		}
		d.LoadBalancers = append(d.LoadBalancers, l)
	}
	for _, r := range o.ServiceRegistries {
		s := types.ServiceRegistry{RegistryArn: aws.String(r.RegistryARN)}
		if r.Port != 0 {
			s.Port = aws.Int32(r.Port)
		}
		if r.ContainerName != "" {
			s.ContainerName, s.ContainerPort = aws.String(r.ContainerName), aws.Int32(r.ContainerPort)
		}
		d.ServiceRegistries = append(d.ServiceRegistries, s)
	}
	return d
}

func orDefault(v *int32, def int32) int32 {
	if v == nil {
		return def
	}
	return *v
}

// create is the CreateService call for d.
func (d desiredService) create(pl placement, token string, tags map[string]string) *ecs.CreateServiceInput {
	return &ecs.CreateServiceInput{
		Cluster:                       aws.String(pl.cluster),
		ServiceName:                   aws.String(pl.service),
		ClientToken:                   aws.String(token),
		TaskDefinition:                aws.String(d.TaskDefinition),
		DesiredCount:                  aws.Int32(d.DesiredCount),
		LaunchType:                    d.LaunchType,
		CapacityProviderStrategy:      d.CapacityProviderStrategy,
		NetworkConfiguration:          d.Network,
		DeploymentConfiguration:       d.Deployment,
		HealthCheckGracePeriodSeconds: d.GracePeriod,
		EnableExecuteCommand:          d.ExecuteCommand,
		LoadBalancers:                 d.LoadBalancers,
		ServiceRegistries:             d.ServiceRegistries,
		PropagateTags:                 types.PropagateTagsService,
		EnableECSManagedTags:          true,
		Tags:                          tagsOf(tags),
	}
}

// update is the UpdateService call that makes a service d.
func (d desiredService) update(pl placement) *ecs.UpdateServiceInput {
	return &ecs.UpdateServiceInput{
		Cluster:                       aws.String(pl.cluster),
		Service:                       aws.String(pl.service),
		TaskDefinition:                aws.String(d.TaskDefinition),
		DesiredCount:                  aws.Int32(d.DesiredCount),
		CapacityProviderStrategy:      d.CapacityProviderStrategy,
		NetworkConfiguration:          d.Network,
		DeploymentConfiguration:       d.Deployment,
		HealthCheckGracePeriodSeconds: d.GracePeriod,
		EnableExecuteCommand:          aws.Bool(d.ExecuteCommand),
		LoadBalancers:                 d.LoadBalancers,
		ServiceRegistries:             d.ServiceRegistries,
		PropagateTags:                 types.PropagateTagsService,
	}
}

// changes lists how the service s differs from d, as landlord last set it
// (hash is d's fingerprint; the service's tag holds the one it was set
// from) and as it runs now (task definition, count, network). Nothing
// secret is in a task definition ARN or a count.
func (d desiredService) changes(s *types.Service, hash string) []compute.Change {
	var out []compute.Change
	if cur := aws.ToString(s.TaskDefinition); cur != d.TaskDefinition {
		out = append(out, compute.Change{Field: "task_definition", From: cur, To: d.TaskDefinition})
	}
	if s.DesiredCount != d.DesiredCount {
		out = append(out, compute.Change{Field: "desired_count", From: itoa(s.DesiredCount), To: itoa(d.DesiredCount)})
	}
	if !sameNetwork(s.NetworkConfiguration, d.Network) {
		out = append(out, compute.Change{Field: "network"})
	}
	if len(out) == 0 && tagMap(s.Tags)[tagConfigHash] != hash {
		out = append(out, compute.Change{Field: "service"})
	}
	return out
}

func sameNetwork(a, b *types.NetworkConfiguration) bool {
	if a == nil || a.AwsvpcConfiguration == nil || b == nil || b.AwsvpcConfiguration == nil {
		return (a == nil || a.AwsvpcConfiguration == nil) == (b == nil || b.AwsvpcConfiguration == nil)
	}
	x, y := a.AwsvpcConfiguration, b.AwsvpcConfiguration
	return slices.Equal(slices.Sorted(slices.Values(x.Subnets)), y.Subnets) &&
		slices.Equal(slices.Sorted(slices.Values(x.SecurityGroups)), y.SecurityGroups) &&
		(x.AssignPublicIp == y.AssignPublicIp || (x.AssignPublicIp == "" && y.AssignPublicIp == types.AssignPublicIpDisabled))
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
