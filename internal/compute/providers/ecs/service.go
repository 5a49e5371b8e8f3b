package ecs

import (
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// desiredService is what the tenant's service should be: every field
// landlord sets, so that create, update and Inspect agree.
type desiredService struct {
	TaskDefinition string
	// DesiredCount is nil when ECS service auto scaling owns the count (a
	// desired_count range): then only CreateService sets it, to
	// InitialCount.
	DesiredCount             *int32
	InitialCount             int32
	LaunchType               types.LaunchType
	CapacityProviderStrategy []types.CapacityProviderStrategyItem
	PlatformVersion          *string
	Network                  *types.NetworkConfiguration
	Deployment               *types.DeploymentConfiguration
	GracePeriod              *int32
	ExecuteCommand           bool
	LoadBalancers            []types.LoadBalancer
	ServiceRegistries        []types.ServiceRegistry
}

func newDesiredService(o tenantOptions, taskDefinition string) desiredService {
	count := o.desiredCount()
	d := desiredService{
		TaskDefinition: taskDefinition,
		InitialCount:   count.initial(),
		LaunchType:     types.LaunchType(o.LaunchType),
		ExecuteCommand: o.EnableExecuteCommand,
	}
	if !count.scaled {
		d.DesiredCount = aws.Int32(count.fixed)
	}
	if o.PlatformVersion != "" {
		d.PlatformVersion = aws.String(o.PlatformVersion)
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
		DesiredCount:                  aws.Int32(d.InitialCount),
		LaunchType:                    d.LaunchType,
		CapacityProviderStrategy:      d.CapacityProviderStrategy,
		PlatformVersion:               d.PlatformVersion,
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

// update is the UpdateService call that makes the live service d. In an
// UpdateService a member left out keeps the service's value, so what
// landlord does not want is sent as its empty form: an empty list of load
// balancers or service registries ("You can remove existing loadBalancers
// by passing an empty list", API_UpdateService), an empty capacity provider
// strategy to go back to the launch type, a grace period of 0. The count is
// left out when auto scaling owns it.
func (d desiredService) update(pl placement, live *types.Service) *ecs.UpdateServiceInput {
	in := &ecs.UpdateServiceInput{
		Cluster:                       aws.String(pl.cluster),
		Service:                       aws.String(pl.service),
		TaskDefinition:                aws.String(d.TaskDefinition),
		DesiredCount:                  d.DesiredCount,
		CapacityProviderStrategy:      d.CapacityProviderStrategy,
		PlatformVersion:               d.PlatformVersion,
		NetworkConfiguration:          d.Network,
		DeploymentConfiguration:       d.Deployment,
		HealthCheckGracePeriodSeconds: d.GracePeriod,
		EnableExecuteCommand:          aws.Bool(d.ExecuteCommand),
		EnableECSManagedTags:          aws.Bool(true),
		LoadBalancers:                 nonNil(d.LoadBalancers),
		ServiceRegistries:             nonNil(d.ServiceRegistries),
		PropagateTags:                 types.PropagateTagsService,
	}
	if d.LaunchType != "" && len(live.CapacityProviderStrategy) > 0 {
		// "Update the Auto Scaling group or Fargate capacity provider back to
		// the launch type. Pass an empty list in the capacityProviderStrategy
		// parameter." (API_UpdateService)
		in.CapacityProviderStrategy = []types.CapacityProviderStrategyItem{}
	}
	if d.GracePeriod == nil && aws.ToInt32(live.HealthCheckGracePeriodSeconds) != 0 {
		in.HealthCheckGracePeriodSeconds = aws.Int32(0)
	}
	return in
}

// nonNil returns s, or an empty slice for nil: the SDK sends an empty
// slice as [] and leaves a nil one out.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
