package ecs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// compare records, in c, every field of the live service s that differs
// from d: the fields UpdateService sets, each read as ECS describes it, with
// ECS's defaults standing in for what it leaves out (so that a default ECS
// fills in is never drift). The task definition is compared by the caller:
// by content when landlord builds it, by ARN when the config gives it.
func (d desiredService) compare(c *provider.DriftCollector, s *types.Service) {
	if d.DesiredCount != nil {
		c.Compare("service/desired_count", provider.DriftScale, itoa(*d.DesiredCount), itoa(s.DesiredCount))
	}
	if d.LaunchType != "" && s.LaunchType != "" {
		c.Compare("service/launch_type", provider.DriftPlacement, string(d.LaunchType), string(s.LaunchType))
	}
	// With neither a launch type nor a strategy, the service takes the
	// cluster's default strategy: ECS's to fill in, not landlord's.
	if d.LaunchType != "" || len(d.CapacityProviderStrategy) > 0 {
		c.Compare("service/capacity_provider_strategy", provider.DriftPlacement, strategyString(d.CapacityProviderStrategy), strategyString(s.CapacityProviderStrategy))
	}
	if d.PlatformVersion != nil {
		// "If a platform version is not specified, the LATEST platform
		// version is used." (API_CreateService)
		c.Compare("service/platform_version", provider.DriftSettings, *d.PlatformVersion, cmp.Or(aws.ToString(s.PlatformVersion), "LATEST"))
	}
	compareNetwork(c, d.Network, s.NetworkConfiguration)
	compareDeployment(c, d.Deployment, s.DeploymentConfiguration)
	c.Compare("service/health_check_grace_period", provider.DriftHealth, seconds(d.GracePeriod), seconds(s.HealthCheckGracePeriodSeconds))
	c.Compare("service/enable_execute_command", provider.DriftSettings, fmt.Sprint(d.ExecuteCommand), fmt.Sprint(s.EnableExecuteCommand))
	c.Compare("service/propagate_tags", provider.DriftSettings, string(types.PropagateTagsService), cmp.Or(string(s.PropagateTags), string(types.PropagateTagsNone)))
	c.Compare("service/enable_ecs_managed_tags", provider.DriftSettings, "true", fmt.Sprint(s.EnableECSManagedTags))
	c.Compare("service/load_balancers", provider.DriftPorts, loadBalancersString(d.LoadBalancers), loadBalancersString(s.LoadBalancers))
	c.Compare("service/service_registries", provider.DriftNetwork, registriesString(d.ServiceRegistries), registriesString(s.ServiceRegistries))
}

// compareNetwork compares the awsvpc configuration. Security groups are
// compared only when the config gives them: without, ECS uses the VPC's
// default group, which is not landlord's to name.
func compareNetwork(c *provider.DriftCollector, want, got *types.NetworkConfiguration) {
	if want == nil || want.AwsvpcConfiguration == nil {
		return
	}
	w := want.AwsvpcConfiguration
	var g types.AwsVpcConfiguration
	if got != nil && got.AwsvpcConfiguration != nil {
		g = *got.AwsvpcConfiguration
	}
	c.Compare("network/subnets", provider.DriftNetwork, sortedList(w.Subnets), sortedList(g.Subnets))
	if len(w.SecurityGroups) > 0 {
		c.Compare("network/security_groups", provider.DriftNetwork, sortedList(w.SecurityGroups), sortedList(g.SecurityGroups))
	}
	// assignPublicIp: "The default value is DISABLED." (API_AwsVpcConfiguration)
	c.Compare("network/assign_public_ip", provider.DriftNetwork, string(w.AssignPublicIp), cmp.Or(string(g.AssignPublicIp), string(types.AssignPublicIpDisabled)))
}

// compareDeployment compares the deployment configuration landlord sets,
// with ECS's defaults for what the service leaves out ("maximumPercent …
// default 200", "minimumHealthyPercent … default 100",
// API_DeploymentConfiguration; the circuit breaker is off unless enabled).
func compareDeployment(c *provider.DriftCollector, want, got *types.DeploymentConfiguration) {
	var g types.DeploymentConfiguration
	if got != nil {
		g = *got
	}
	c.Compare("service/deployment/minimum_healthy_percent", provider.DriftSettings, itoa(aws.ToInt32(want.MinimumHealthyPercent)), itoa(orDefault(g.MinimumHealthyPercent, DefaultMinimumHealthyPercent)))
	c.Compare("service/deployment/maximum_percent", provider.DriftSettings, itoa(aws.ToInt32(want.MaximumPercent)), itoa(orDefault(g.MaximumPercent, DefaultMaximumPercent)))
	var cb types.DeploymentCircuitBreaker
	if g.DeploymentCircuitBreaker != nil {
		cb = *g.DeploymentCircuitBreaker
	}
	c.Compare("service/deployment/circuit_breaker", provider.DriftSettings, fmt.Sprint(want.DeploymentCircuitBreaker.Enable), fmt.Sprint(cb.Enable))
	c.Compare("service/deployment/rollback", provider.DriftSettings, fmt.Sprint(want.DeploymentCircuitBreaker.Rollback), fmt.Sprint(cb.Rollback))
}

// compareTags records the tags landlord sets on the service that are
// missing or changed (service/tags/<key>); tags others add are theirs.
// The generation and config hash tags are landlord's bookkeeping, not
// desired state, and are left out.
func compareTags(c *provider.DriftCollector, want map[string]string, got []types.Tag) {
	live := tagMap(got)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if k == tagGeneration || k == tagConfigHash {
			continue
		}
		c.Compare("service/tags/"+k, provider.DriftSettings, want[k], live[k])
	}
}

func strategyString(items []types.CapacityProviderStrategyItem) string {
	parts := make([]string, 0, len(items))
	for _, i := range items {
		parts = append(parts, fmt.Sprintf("%s weight %d base %d", aws.ToString(i.CapacityProvider), i.Weight, i.Base))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func loadBalancersString(lbs []types.LoadBalancer) string {
	parts := make([]string, 0, len(lbs))
	for _, lb := range lbs {
		target := cmp.Or(aws.ToString(lb.TargetGroupArn), aws.ToString(lb.LoadBalancerName))
		parts = append(parts, fmt.Sprintf("%s %s:%d", target, aws.ToString(lb.ContainerName), aws.ToInt32(lb.ContainerPort)))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func registriesString(regs []types.ServiceRegistry) string {
	parts := make([]string, 0, len(regs))
	for _, r := range regs {
		p := aws.ToString(r.RegistryArn)
		if r.Port != nil {
			p += fmt.Sprintf(" port %d", *r.Port)
		}
		if r.ContainerName != nil {
			p += fmt.Sprintf(" %s:%d", *r.ContainerName, aws.ToInt32(r.ContainerPort))
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func sortedList(s []string) string {
	return strings.Join(slices.Sorted(slices.Values(s)), ", ")
}

// seconds is a grace period for a drift: "0s" when there is none.
func seconds(v *int32) string { return fmt.Sprintf("%ds", aws.ToInt32(v)) }
