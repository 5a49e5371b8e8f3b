package ecs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// secretRef is what ECS can inject as a secret: an SSM parameter or a
// Secrets Manager secret (optionally one JSON key and version of it).
var secretRef = regexp.MustCompile(`^arn:aws[a-z-]*:(ssm:[a-z0-9-]+:[0-9]{12}:parameter/[A-Za-z0-9_.\-/]+|secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+(:[^:]*:[^:]*:[^:]*)?)$`)

// DecodeConfig reads the ECS fields of a config, which Provision and Update
// find again in the spec's Options, and checks what the schema cannot:
// ARNs that agree on partition, region and account, launch type against
// networking, Fargate's cpu and memory sizes, health checks ECS can run,
// and secrets given as references.
func (p *Provider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	var o tenantOptions
	if err := provider.DecodeOptions(config, &o, "ecs options"); err != nil {
		return err
	}
	var errs violation.List
	checkPlacement(&o, &errs)
	if len(spec.Containers) == 0 && o.TaskDefinitionARN == "" {
		errs.Add("/task_definition_arn", "is required when the config has no image: give a task definition to run, or an image to build one from")
	}
	if o.LaunchType != "" && len(o.CapacityProviderStrategy) > 0 {
		errs.Add("/capacity_provider_strategy", "cannot be given with launch_type %s; choose one", o.LaunchType)
	}
	if o.fargate() && len(o.Subnets) == 0 {
		errs.Add("/subnets", "are required on Fargate, whose tasks use the awsvpc network mode")
	}
	if spec.Networking.Public {
		// The portable way to ask for what assign_public_ip does.
		o.AssignPublicIP = true
	}
	if !o.awsvpc() && (len(o.SecurityGroups) > 0 || o.AssignPublicIP) {
		errs.Add("/subnets", "are required with security_groups or assign_public_ip, which apply to awsvpc network interfaces")
	}
	if d := o.Deployment; d.MinimumHealthyPercent != nil && d.MaximumPercent != nil && *d.MaximumPercent < *d.MinimumHealthyPercent {
		errs.Add("/deployment/maximum_percent", "%d is below minimum_healthy_percent %d", *d.MaximumPercent, *d.MinimumHealthyPercent)
	}
	if c := o.DesiredCount; c != nil && c.scaled && c.min > c.max {
		errs.Add("/desired_count", "min %d is above max %d", c.min, c.max)
	}
	if o.PlatformVersion != "" && !o.fargate() {
		errs.Add("/platform_version", "applies to Fargate only: set launch_type FARGATE or a FARGATE capacity provider")
	}
	if time.Duration(o.HealthCheckGracePeriod) > maxGracePeriod {
		errs.Add("/health_check_grace_period", "%s is above ECS's limit of %s", time.Duration(o.HealthCheckGracePeriod), maxGracePeriod)
	}
	checkTags(o.Tags, &errs)
	checkLogs(&o, &errs)
	names := map[string]bool{}
	for _, c := range spec.Containers {
		names[c.Name] = true
	}
	if len(spec.Containers) > 0 {
		for i, lb := range o.LoadBalancers {
			if !names[lb.ContainerName] {
				errs.Add(fmt.Sprintf("/load_balancers/%d/container_name", i), "names no container of the config: %q", lb.ContainerName)
			}
		}
		if p.checkWorkload(&o, spec, &errs); o.fargate() {
			checkFargateSize(spec.Workload, &errs)
		}
		in := taskDefinition(spec, o, serviceName(o.prefix(), spec.TenantName), nil)
		checkRegistration(in, workloadPointers(spec), o.TaskDefinitionARN != "", &errs)
	}
	spec.Options = o
	return errs.Err(provider.ErrInvalidSpec)
}

// maxGracePeriod is ECS's limit on healthCheckGracePeriodSeconds.
const maxGracePeriod = 2147483647 * time.Second

// checkPlacement checks the ARNs and the region against each other.
func checkPlacement(o *tenantOptions, errs *violation.List) {
	if o.ClusterARN == "" {
		errs.Add("/cluster_arn", "is required: set it in the ecs block of landlord's configuration or in the tenant's compute_config")
		return
	}
	cluster, err := parseARN(o.ClusterARN)
	if err != nil {
		errs.Add("/cluster_arn", "%q is not a cluster ARN: %v", o.ClusterARN, err)
		return
	}
	if o.Region != "" && o.Region != cluster.Region {
		errs.Add("/region", "%s is not the region of cluster_arn (%s); a service runs in its cluster's region", o.Region, cluster.Region)
	}
	if o.TaskDefinitionARN != "" {
		td, err := parseARN(o.TaskDefinitionARN)
		switch {
		case err != nil:
			errs.Add("/task_definition_arn", "%q is not a task definition ARN: %v", o.TaskDefinitionARN, err)
		case td.Partition != cluster.Partition || td.Region != cluster.Region:
			errs.Add("/task_definition_arn", "is in %s %s, the cluster in %s %s; ECS runs task definitions of the cluster's region only",
				td.Partition, td.Region, cluster.Partition, cluster.Region)
		}
	}
	if r := o.AssumeRole; r != nil {
		if role, err := parseARN(r.RoleARN); err != nil {
			errs.Add("/assume_role/role_arn", "%q is not a role ARN: %v", r.RoleARN, err)
		} else if role.Partition != cluster.Partition {
			errs.Add("/assume_role/role_arn", "is in partition %s, the cluster in %s", role.Partition, cluster.Partition)
		}
	}
}

// checkWorkload checks what ECS cannot run of the portable workload.
func (p *Provider) checkWorkload(o *tenantOptions, spec *provider.TenantComputeSpec, errs *violation.List) {
	at := map[string]string{}
	for i, c := range spec.Containers {
		at[c.Name] = workload.ContainerPointer(i)
		where := workload.ContainerPointer(i)
		for j, port := range c.Ports {
			if o.awsvpc() && port.HostPort != 0 && port.HostPort != port.ContainerPort {
				errs.Add(fmt.Sprintf("%s/ports/%d/host_port", where, j), "with awsvpc networking a task listens on its own address: host_port must be the container_port (%d) or left out", port.ContainerPort)
			}
		}
		if hc := c.HealthCheck; hc != nil {
			switch {
			case hc.HTTP != nil:
				errs.Add(where+"/health_check/http", "ECS runs health checks as a command in the container; use health_check.command, e.g. [\"curl\", \"-fs\", \"http://localhost:%d%s\"]", hc.HTTP.Port, cmp.Or(hc.HTTP.Path, "/"))
			case hc.TCP != nil:
				errs.Add(where+"/health_check/tcp", "ECS runs health checks as a command in the container; use health_check.command")
			}
			checkRange(errs, where+"/health_check/interval", "interval", hc.Interval.Seconds(), 5, 300)
			checkRange(errs, where+"/health_check/timeout", "timeout", hc.Timeout.Seconds(), 2, 60)
			checkRange(errs, where+"/health_check/start_period", "start_period", hc.StartPeriod.Seconds(), 0, 300)
			if hc.Retries > 10 {
				errs.Add(where+"/health_check/retries", "%d is above ECS's limit of 10", hc.Retries)
			}
		}
	}
	for _, s := range spec.Secrets {
		if !secretRef.MatchString(s.Value.Reveal()) {
			errs.Add(at[s.Container]+"/secrets/"+violation.Escape(s.Name),
				"ECS shows a task definition's environment to anyone who may describe it, so a secret must be a reference: store the value in SSM Parameter Store or Secrets Manager and give its ARN (arn:aws:ssm:REGION:ACCOUNT:parameter/NAME or arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)")
		}
	}
}

// workloadPointers says where each container and secret of spec is in its
// config.
func workloadPointers(spec *provider.TenantComputeSpec) pointers {
	at := pointers{container: map[string]string{}, secret: map[string]string{}}
	for i, c := range spec.Containers {
		at.container[c.Name] = workload.ContainerPointer(i)
	}
	for _, s := range spec.Secrets {
		at.secret[s.Container+"/"+s.Name] = at.container[s.Container] + "/secrets/" + violation.Escape(s.Name)
	}
	return at
}

func checkRange(errs *violation.List, at, what string, seconds, lo, hi float64) {
	if seconds < lo || seconds > hi {
		errs.Add(at, "%s of %gs is outside what ECS allows (%g to %g seconds)", what, seconds, lo, hi)
	}
}

// fargateSizes lists, for each Fargate CPU size in CPU units, the memory
// sizes in MiB it runs with.
var fargateSizes = []struct {
	cpu    int64
	memory []int64
}{
	{256, []int64{512, 1024, 2048}},
	{512, steps(1024, 4096, 1024)},
	{1024, steps(2048, 8192, 1024)},
	{2048, steps(4096, 16384, 1024)},
	{4096, steps(8192, 30720, 1024)},
	{8192, steps(16384, 61440, 4096)},
	{16384, steps(32768, 122880, 8192)},
}

func steps(from, to, step int64) []int64 {
	var out []int64
	for v := from; v <= to; v += step {
		out = append(out, v)
	}
	return out
}

// cpuUnits converts millicores to ECS CPU units (1024 a vCPU), rounding up.
func cpuUnits(millicores int64) int64 { return (millicores*1024 + 999) / 1000 }

// fargateSize is the task size Fargate runs the workload with: exactly the
// workload's totals when it gives both, else the smallest size that holds
// what it gives.
func fargateSize(w workload.Workload) (cpu, memory int64, ok bool) {
	wantCPU, wantMem := cpuUnits(w.Resources.CPUMillicores), w.Resources.MemoryMiB
	exact := wantCPU != 0 && wantMem != 0
	for _, s := range fargateSizes {
		if wantCPU > s.cpu || (exact && wantCPU != s.cpu) {
			continue
		}
		for _, m := range s.memory {
			if (exact && m == wantMem) || (!exact && m >= wantMem) {
				return s.cpu, m, true
			}
		}
	}
	return 0, 0, false
}

// checkFargateSize refuses totals that no Fargate size matches.
func checkFargateSize(w workload.Workload, errs *violation.List) {
	if _, _, ok := fargateSize(w); ok {
		return
	}
	var sizes []string
	for _, s := range fargateSizes {
		sizes = append(sizes, fmt.Sprintf("%g vCPU: %s MiB", float64(s.cpu)/1024, span(s.memory)))
	}
	errs.Add("/resources", "Fargate has no task size of %d CPU units (cpu_millicores %d) with %d MiB; the sizes are %s",
		cpuUnits(w.Resources.CPUMillicores), w.Resources.CPUMillicores, w.Resources.MemoryMiB, strings.Join(sizes, "; "))
}

func span(m []int64) string {
	if len(m) <= 3 {
		return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(m)), ", "), "[]")
	}
	return fmt.Sprintf("%d to %d in steps of %d", m[0], m[len(m)-1], m[1]-m[0])
}
