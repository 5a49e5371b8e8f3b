package ecs

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
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

// update is the UpdateService call that puts back, on the live service,
// the fields of d that differ from it, as compare found them in drift (by
// path), and only those: a change of the count sends the count alone, so
// that it starts no deployment and overwrites nothing another tool set in
// between. In an UpdateService a member left out keeps the service's
// value, so a field landlord no longer wants is sent as its empty form: an
// empty list of load balancers or service registries ("You can remove
// existing loadBalancers by passing an empty list", API_UpdateService), an
// empty capacity provider strategy to go back to the launch type, a grace
// period of 0.
func (d desiredService) update(pl placement, drift []provider.Drift) *ecs.UpdateServiceInput {
	changed := func(paths ...string) bool {
		for _, f := range drift {
			for _, p := range paths {
				if f.Path == p || strings.HasPrefix(f.Path, p+"/") {
					return true
				}
			}
		}
		return false
	}
	in := &ecs.UpdateServiceInput{Cluster: aws.String(pl.cluster), Service: aws.String(pl.service)}
	if changed("service/task_definition") {
		in.TaskDefinition = aws.String(d.TaskDefinition)
	}
	if changed("service/desired_count") {
		in.DesiredCount = d.DesiredCount
	}
	if changed("service/launch_type", "service/capacity_provider_strategy") {
		// "Update the Auto Scaling group or Fargate capacity provider back to
		// the launch type. Pass an empty list in the capacityProviderStrategy
		// parameter." (API_UpdateService)
		in.CapacityProviderStrategy = nonNil(d.CapacityProviderStrategy)
	}
	if changed("service/platform_version") {
		in.PlatformVersion = d.PlatformVersion
	}
	if changed("network") {
		in.NetworkConfiguration = d.Network
	}
	if changed("service/deployment") {
		in.DeploymentConfiguration = d.Deployment
	}
	if changed("service/health_check_grace_period") {
		in.HealthCheckGracePeriodSeconds = aws.Int32(aws.ToInt32(d.GracePeriod))
	}
	if changed("service/enable_execute_command") {
		in.EnableExecuteCommand = aws.Bool(d.ExecuteCommand)
	}
	if changed("service/enable_ecs_managed_tags") {
		in.EnableECSManagedTags = aws.Bool(true)
	}
	if changed("service/propagate_tags") {
		in.PropagateTags = types.PropagateTagsService
	}
	if changed("service/load_balancers") {
		in.LoadBalancers = nonNil(d.LoadBalancers)
	}
	if changed("service/service_registries") {
		in.ServiceRegistries = nonNil(d.ServiceRegistries)
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
