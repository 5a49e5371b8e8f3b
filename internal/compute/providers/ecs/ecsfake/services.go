package ecsfake

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// maxClientToken is the longest clientToken ECS accepts.
const maxClientToken = 36

func (s *Server) createService(now time.Time, in *ecs.CreateServiceInput) (*ecs.CreateServiceOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	name := aws.ToString(in.ServiceName)
	if !nameRE.MatchString(name) {
		return nil, invalidParameter("Service name must be 1-255 letters (uppercase and lowercase), numbers, hyphens, and underscores.")
	}
	token := aws.ToString(in.ClientToken)
	if len(token) > maxClientToken {
		return nil, invalidParameter("clientToken must be at most %d characters.", maxClientToken)
	}
	desired := aws.ToInt32(in.DesiredCount)
	if desired < 0 {
		return nil, invalidParameter("desiredCount must be 0 or more.")
	}
	if in.LaunchType != "" && len(in.CapacityProviderStrategy) > 0 {
		return nil, invalidParameter("Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.")
	}
	if in.TaskDefinition == nil {
		return nil, invalidParameter("TaskDefinition must be specified.")
	}
	td, err := s.resolveTaskDef(*in.TaskDefinition)
	if err != nil {
		return nil, err
	}
	if td == nil {
		return nil, clientError("TaskDefinition not found.")
	}
	if !td.active() {
		return nil, clientError("TaskDefinition is inactive")
	}
	launchType := in.LaunchType
	if launchType == "" && len(in.CapacityProviderStrategy) == 0 {
		launchType = types.LaunchTypeEc2
	}
	if err := checkPlacement(td, launchType, in.CapacityProviderStrategy, in.NetworkConfiguration); err != nil {
		return nil, err
	}
	if err := checkTags(in.Tags); err != nil {
		return nil, err
	}

	fingerprint := createFingerprint(c, in)
	if token != "" {
		for _, svc := range c.services {
			if svc.live() && svc.clientToken == token {
				if svc.fingerprint != fingerprint {
					return nil, invalidParameter("Creation of service was not idempotent.")
				}
				return &ecs.CreateServiceOutput{Service: s.describeService(svc, false)}, nil
			}
		}
	}
	if old := c.find(name); old != nil && old.live() {
		if old.status == statusDraining {
			return nil, invalidParameter("Unable to Start a service that is still Draining.")
		}
		return nil, invalidParameter("Creation of service was not idempotent.")
	}

	svc := &service{
		cluster:     c,
		status:      statusActive,
		desired:     desired,
		createdAt:   now,
		clientToken: token,
		fingerprint: fingerprint,
		lag:         s.opts.CreateLag,
		spec: types.Service{
			ServiceName:                   aws.String(name),
			ServiceArn:                    aws.String(s.arn("service/" + c.name + "/" + name)),
			ClusterArn:                    aws.String(c.arn),
			CreatedAt:                     aws.Time(now),
			CreatedBy:                     aws.String("arn:aws:iam::" + s.Account + ":root"),
			LoadBalancers:                 nonNil(in.LoadBalancers),
			ServiceRegistries:             nonNil(in.ServiceRegistries),
			DeploymentConfiguration:       withDeploymentDefaults(in.DeploymentConfiguration),
			DeploymentController:          in.DeploymentController,
			HealthCheckGracePeriodSeconds: in.HealthCheckGracePeriodSeconds,
			EnableECSManagedTags:          in.EnableECSManagedTags,
			EnableExecuteCommand:          in.EnableExecuteCommand,
			PropagateTags:                 in.PropagateTags,
			PlacementConstraints:          nonNil(in.PlacementConstraints),
			PlacementStrategy:             nonNil(in.PlacementStrategy),
			PlatformVersion:               in.PlatformVersion,
			RoleArn:                       in.Role,
			SchedulingStrategy:            in.SchedulingStrategy,
			AvailabilityZoneRebalancing:   in.AvailabilityZoneRebalancing,
			Tags:                          in.Tags,
		},
	}
	if svc.spec.DeploymentController == nil {
		svc.spec.DeploymentController = &types.DeploymentController{Type: types.DeploymentControllerTypeEcs}
	}
	if svc.spec.PropagateTags == "" {
		svc.spec.PropagateTags = types.PropagateTagsNone
	}
	if svc.spec.SchedulingStrategy == "" {
		svc.spec.SchedulingStrategy = types.SchedulingStrategyReplica
	}
	if svc.spec.PlatformVersion == nil && onFargate(launchType, in.CapacityProviderStrategy) {
		// "If a platform version is not specified, the LATEST platform
		// version is used." (API_CreateService)
		svc.spec.PlatformVersion = aws.String("LATEST")
	}
	svc.launchType = launchType
	svc.deployments = []*deployment{s.newDeployment(now, td, desired, in.NetworkConfiguration, launchType, in.CapacityProviderStrategy, svc.spec.PlatformVersion)}
	c.services = append(c.services, svc)
	s.reconcile(svc, now)
	return &ecs.CreateServiceOutput{Service: s.describeService(svc, false)}, nil
}

// updateService follows the UpdateService reference
// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_UpdateService.html):
// a member left out of the request keeps the service's value, a member
// given replaces it, and the members the reference says trigger a new
// service deployment start one when their value changes.
func (s *Server) updateService(now time.Time, in *ecs.UpdateServiceInput) (*ecs.UpdateServiceOutput, error) {
	svc, err := s.findService(in.Cluster, aws.ToString(in.Service))
	if err != nil {
		return nil, err
	}
	if svc.status != statusActive {
		return nil, errServiceNotActive
	}
	p := svc.primary()
	td, network, launchType, capacity, platform := p.def, p.network, p.launchType, p.capacity, p.platform
	redeploy := in.ForceNewDeployment
	// taskDefinition: "If you modify the task definition with
	// UpdateService, Amazon ECS spawns a task with the new version of the
	// task definition and then stops an old task after the new version is
	// running."
	if in.TaskDefinition != nil {
		next, err := s.resolveTaskDef(*in.TaskDefinition)
		if err != nil {
			return nil, err
		}
		if next == nil {
			return nil, clientError("TaskDefinition not found.")
		}
		if !next.active() && next != p.def {
			return nil, clientError("TaskDefinition is inactive")
		}
		redeploy = redeploy || next != p.def
		td = next
	}
	// networkConfiguration: "This parameter triggers a new service
	// deployment."
	if in.NetworkConfiguration != nil && !reflect.DeepEqual(in.NetworkConfiguration, p.network) {
		network, redeploy = in.NetworkConfiguration, true
	}
	// capacityProviderStrategy: "Update the Auto Scaling group or Fargate
	// capacity provider back to the launch type. Pass an empty list in the
	// capacityProviderStrategy parameter." and "This parameter doesn't
	// trigger a new service deployment." The launch type it goes back to is
	// the one the service was created with.
	if in.CapacityProviderStrategy != nil && !sameList(in.CapacityProviderStrategy, capacity) {
		if len(in.CapacityProviderStrategy) == 0 {
			launchType, capacity = svc.launchType, nil
		} else {
			launchType, capacity = "", in.CapacityProviderStrategy
		}
	}
	// platformVersion: "This parameter triggers a new service deployment."
	if in.PlatformVersion != nil && aws.ToString(in.PlatformVersion) != aws.ToString(platform) {
		platform, redeploy = in.PlatformVersion, true
	}
	if err := checkPlacement(td, launchType, capacity, network); err != nil {
		return nil, err
	}
	// desiredCount: left out, the service keeps its count ("This parameter
	// doesn't trigger a new service deployment.").
	desired := svc.desired
	if in.DesiredCount != nil {
		if *in.DesiredCount < 0 {
			return nil, invalidParameter("desiredCount must be 0 or more.")
		}
		desired = *in.DesiredCount
	}

	// Settings ECS changes in place, without a deployment; left out, each
	// keeps the service's value.
	spec := svc.spec
	if in.DeploymentConfiguration != nil {
		spec.DeploymentConfiguration = withDeploymentDefaults(in.DeploymentConfiguration)
	}
	// healthCheckGracePeriodSeconds: the reference's "If you don't specify
	// a health check grace period value, the default value of 0 is used"
	// is CreateService's wording; left out of an update, the fake keeps
	// the service's value, and a client that wants 0 sends 0.
	if in.HealthCheckGracePeriodSeconds != nil {
		spec.HealthCheckGracePeriodSeconds = in.HealthCheckGracePeriodSeconds
	}
	// enableExecuteCommand: "If you do not want to override the value that
	// was set when the service was created, you can set this to null when
	// performing this action."
	if in.EnableExecuteCommand != nil {
		spec.EnableExecuteCommand = *in.EnableExecuteCommand
	}
	if in.EnableECSManagedTags != nil {
		spec.EnableECSManagedTags = *in.EnableECSManagedTags
	}
	// loadBalancers and serviceRegistries: "You can remove existing
	// loadBalancers by passing an empty list." "You can remove existing
	// serviceRegistries by passing an empty list." Left out, they stay.
	// Either, changed, "triggers a new service deployment": "Amazon ECS
	// starts new tasks with the updated … configuration, and then stops
	// the old tasks when the new tasks are running."
	if in.LoadBalancers != nil && !sameList(in.LoadBalancers, spec.LoadBalancers) {
		spec.LoadBalancers, redeploy = in.LoadBalancers, true
	}
	if in.ServiceRegistries != nil && !sameList(in.ServiceRegistries, spec.ServiceRegistries) {
		spec.ServiceRegistries, redeploy = in.ServiceRegistries, true
	}
	// propagateTags: the reference's "If no value is specified, the tags
	// aren't propagated" is CreateService's wording; left out of an update
	// the fake keeps the service's value.
	if in.PropagateTags != "" {
		spec.PropagateTags = in.PropagateTags
	}
	// placementConstraints: "If no value is specified, the existing
	// placement constraints for the service will remain unchanged."
	if in.PlacementConstraints != nil {
		spec.PlacementConstraints = in.PlacementConstraints
	}
	// placementStrategy: "If no value is specified, the existing placement
	// strategy for the service will remain unchanged."
	if in.PlacementStrategy != nil {
		spec.PlacementStrategy = in.PlacementStrategy
	}
	spec.PlatformVersion = platform
	svc.spec = spec

	if desired != svc.desired {
		svc.desired = desired
		p.desired = desired
		p.updatedAt = now
		svc.steady = false
	}
	if redeploy {
		s.startDeployment(svc, now, s.newDeployment(now, td, desired, network, launchType, capacity, platform))
	} else if launchType != p.launchType || !sameList(capacity, p.capacity) {
		p.launchType, p.capacity, p.updatedAt = launchType, capacity, now
	}
	s.reconcile(svc, now)
	return &ecs.UpdateServiceOutput{Service: s.describeService(svc, false)}, nil
}

// sameList reports whether two lists of a request and the state hold the
// same items, nil and empty alike.
func sameList[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func (s *Server) deleteService(now time.Time, in *ecs.DeleteServiceInput) (*ecs.DeleteServiceOutput, error) {
	c, err := s.findCluster(in.Cluster)
	if err != nil {
		return nil, err
	}
	svc := c.find(serviceName(aws.ToString(in.Service)))
	if svc == nil {
		return nil, errServiceNotFound
	}
	switch svc.status {
	case statusInactive:
		return nil, errServiceNotActive
	case statusDraining:
		return &ecs.DeleteServiceOutput{Service: s.describeService(svc, false)}, nil
	}
	if !aws.ToBool(in.Force) && svc.desired > 0 {
		return nil, invalidParameter("The service cannot be stopped while it is scaled above 0.")
	}
	svc.status = statusDraining
	svc.drainingAt = now
	s.scaleToZero(svc, now)
	return &ecs.DeleteServiceOutput{Service: s.describeService(svc, false)}, nil
}

// scaleToZero stops every task of a service that is going away.
func (s *Server) scaleToZero(svc *service, now time.Time) {
	svc.desired = 0
	for _, d := range svc.deployments {
		d.desired = 0
		d.updatedAt = now
	}
	reason := "Scaling activity initiated by (deployment " + svc.primary().id + ")"
	for _, t := range append([]*task(nil), svc.tasks...) {
		s.stopTask(t, now, reason, types.TaskStopCodeServiceSchedulerInitiated)
	}
}

// onFargate reports whether a service's tasks run on Fargate.
func onFargate(launchType types.LaunchType, capacity []types.CapacityProviderStrategyItem) bool {
	if launchType == types.LaunchTypeFargate {
		return true
	}
	for _, item := range capacity {
		if p := aws.ToString(item.CapacityProvider); p == "FARGATE" || p == "FARGATE_SPOT" {
			return true
		}
	}
	return false
}

// checkPlacement applies ECS's rules tying a task definition's network mode
// to the service's launch type and network configuration.
func checkPlacement(td *taskDef, launchType types.LaunchType, capacity []types.CapacityProviderStrategyItem, network *types.NetworkConfiguration) error {
	fargate := launchType == types.LaunchTypeFargate
	for _, item := range capacity {
		switch p := aws.ToString(item.CapacityProvider); p {
		case "FARGATE", "FARGATE_SPOT":
			fargate = true
		default:
			return invalidParameter("The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster. Associate the capacity provider with the cluster or specify a valid capacity provider and try again. (%s)", p)
		}
	}
	if fargate && !td.awsvpc() {
		return invalidParameter("Task definition does not support launch_type FARGATE.")
	}
	// networkConfiguration: "This parameter is required for task
	// definitions that use the awsvpc network mode to receive their own
	// elastic network interface, and it isn't supported for other network
	// modes." (API_CreateService, API_UpdateService); subnets are
	// "Required: Yes" (API_AwsVpcConfiguration).
	if td.awsvpc() {
		if network == nil || network.AwsvpcConfiguration == nil || len(network.AwsvpcConfiguration.Subnets) == 0 {
			return invalidParameter("Network Configuration must be provided when networkMode 'awsvpc' is specified.")
		}
		// "There's a limit of 16 subnets that can be specified." "There's
		// a limit of 5 security groups that can be specified."
		// (API_AwsVpcConfiguration). ECS's wording is not known; the
		// messages quote the page.
		if vpc := network.AwsvpcConfiguration; len(vpc.Subnets) > 16 {
			return invalidParameter("There's a limit of 16 subnets that can be specified; got %d.", len(vpc.Subnets))
		} else if len(vpc.SecurityGroups) > 5 {
			return invalidParameter("There's a limit of 5 security groups that can be specified; got %d.", len(vpc.SecurityGroups))
		}
	} else if network != nil {
		return invalidParameter("Network Configuration is not valid for the given networkMode of this task definition.")
	}
	return nil
}

// withDeploymentDefaults fills in what ECS fills in when a deployment
// configuration leaves it out.
func withDeploymentDefaults(in *types.DeploymentConfiguration) *types.DeploymentConfiguration {
	var dc types.DeploymentConfiguration
	if in != nil {
		dc = *in
	}
	if dc.MaximumPercent == nil {
		dc.MaximumPercent = aws.Int32(200)
	}
	if dc.MinimumHealthyPercent == nil {
		dc.MinimumHealthyPercent = aws.Int32(100)
	}
	if dc.DeploymentCircuitBreaker == nil {
		dc.DeploymentCircuitBreaker = &types.DeploymentCircuitBreaker{}
	}
	return &dc
}

// createFingerprint is what a repeated clientToken must match: the request
// without the token, with the cluster spelled one way.
func createFingerprint(c *cluster, in *ecs.CreateServiceInput) string {
	req := *in
	req.ClientToken = nil
	req.Cluster = aws.String(c.arn)
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Sprintf("%#v", req)
	}
	return string(b)
}

// serviceName returns the name a service parameter gives, a name or an ARN.
func serviceName(ref string) string {
	if strings.HasPrefix(ref, "arn:") {
		return ref[strings.LastIndex(ref, "/")+1:]
	}
	return ref
}

// find returns the service ECS would answer for name: the live one if
// there is one, else the most recent INACTIVE one.
func (c *cluster) find(name string) *service {
	var found *service
	for _, svc := range c.services {
		if svc.name() != name {
			continue
		}
		if svc.live() {
			return svc
		}
		found = svc
	}
	return found
}

// findService resolves cluster and service parameters for operations
// that need the service to exist.
func (s *Server) findService(clusterRef *string, ref string) (*service, error) {
	c, err := s.findCluster(clusterRef)
	if err != nil {
		return nil, err
	}
	svc := c.find(serviceName(ref))
	if svc == nil {
		return nil, errServiceNotFound
	}
	return svc, nil
}
