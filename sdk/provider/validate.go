package provider

import (
	"fmt"
	"regexp"

	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

var containerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)

// ValidateSpec checks the provider-independent rules of a spec: a tenant id,
// the right provider, a ProviderConfig that Resolve validated and nobody
// changed since, and for a container workload at least one container, each
// with a unique name and an image, ports in range. Providers call it from
// Validate before their own checks, which read the spec's typed fields and
// Options, never ProviderConfig. Problems are violations of kind
// ErrInvalidSpec whose pointers name the spec's fields.
func ValidateSpec(spec *TenantComputeSpec, provider string) error {
	return validateSpec(spec, provider, true)
}

// ValidateSpecMayOmitContainers is ValidateSpec for providers that can run
// a tenant from a definition on their platform (an ECS task definition)
// when its config names no container: a spec without containers passes.
func ValidateSpecMayOmitContainers(spec *TenantComputeSpec, provider string) error {
	return validateSpec(spec, provider, false)
}

func validateSpec(spec *TenantComputeSpec, provider string, needContainers bool) error {
	if spec == nil {
		return Invalid("", "spec is missing")
	}
	var errs violation.List
	if spec.TenantID == "" {
		errs.Add("/tenant_id", "is required")
	}
	if spec.ProviderType != provider {
		errs.Add("/provider_type", "is %q; this provider is %q", spec.ProviderType, provider)
	}
	if len(spec.ProviderConfig) > 0 && !spec.Resolved() {
		errs.Add("/provider_config", "was not validated by Manager.Resolve, or was changed after it; resolve the tenant's config to build a spec")
	}
	if needContainers && len(spec.Containers) == 0 {
		errs.Add("/containers", "at least one container is required")
	}
	names := map[string]bool{}
	for i, c := range spec.Containers {
		at := fmt.Sprintf("/containers/%d", i)
		switch {
		case !containerName.MatchString(c.Name):
			errs.Add(at+"/name", "%q is not a lowercase DNS label of at most 32 characters", c.Name)
		case names[c.Name]:
			errs.Add(at+"/name", "container name %q is used twice", c.Name)
		}
		names[c.Name] = true
		if c.Image == "" {
			errs.Add(at+"/image", "is required")
		}
		for j, p := range c.Ports {
			if p.ContainerPort < 1 || p.ContainerPort > 65535 {
				errs.Add(fmt.Sprintf("%s/ports/%d/container_port", at, j), "%d is not a port between 1 and 65535", p.ContainerPort)
			}
			if p.HostPort < 0 || p.HostPort > 65535 {
				errs.Add(fmt.Sprintf("%s/ports/%d/host_port", at, j), "%d is not a port between 0 and 65535", p.HostPort)
			}
			if p.Protocol != workload.ProtocolTCP && p.Protocol != workload.ProtocolUDP {
				errs.Add(fmt.Sprintf("%s/ports/%d/protocol", at, j), "%q is not tcp or udp", p.Protocol)
			}
		}
		if c.Resources.CPUMillicores < 0 {
			errs.Add(at+"/resources/cpu_millicores", "must not be negative")
		}
		if c.Resources.MemoryMiB < 0 {
			errs.Add(at+"/resources/memory_mib", "must not be negative")
		}
	}
	errs = append(errs, workload.CheckHostPorts(spec.Workload)...)
	for i, s := range spec.Secrets {
		if !names[s.Container] {
			errs.Add(fmt.Sprintf("/secrets/%d/container", i), "names no container of the spec: %q", s.Container)
		}
	}
	return errs.Err(ErrInvalidSpec)
}
