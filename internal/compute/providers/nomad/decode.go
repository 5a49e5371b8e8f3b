package nomad

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// minMemoryMiB is the least memory Nomad gives a task.
const minMemoryMiB = 10

// Nomad's own defaults of the update block, which landlord's follow.
const (
	defaultMinHealthyTime   = 10 * time.Second
	defaultHealthyDeadline  = 5 * time.Minute
	defaultProgressDeadline = 10 * time.Minute
)

// DecodeConfig reads the Nomad fields of a config, which Provision and
// Update find again in the spec's Options, and checks what the schema
// cannot: the operator's consent to raw_exec, landlord's own meta keys,
// a count range's bounds, constraints, the update block's deadlines, and
// what of the portable workload Nomad can run (health checks on published
// ports, command checks only through Consul, memory).
func (p *Provider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	var o tenantOptions
	if err := provider.DecodeOptions(config, &o, "nomad options"); err != nil {
		return err
	}
	var errs violation.List
	if o.driver() == DriverRawExec && !p.settings.AllowRawExec {
		errs.Add("/driver", "raw_exec runs the tenant's command on the node itself, unisolated; the operator has not allowed it (allow_raw_exec in the nomad block)")
	}
	for _, k := range slices.Sorted(maps.Keys(o.Meta)) {
		if strings.HasPrefix(k, "landlord_") {
			errs.Add("/meta/"+violation.Escape(k), "is landlord's own meta key")
		}
	}
	if c := o.count(); c.ranged && c.min > c.max {
		errs.Add("/count", "min (%d) is more than max (%d)", c.min, c.max)
	}
	for i, c := range o.Constraints {
		at := fmt.Sprintf("/constraints/%d", i)
		switch c.Operator {
		case "distinct_hosts":
		case "is_set", "is_not_set":
			if c.Attribute == "" {
				errs.Add(at+"/attribute", "is required with operator %s", c.Operator)
			}
		default:
			if c.Attribute == "" {
				errs.Add(at+"/attribute", "is required")
			}
		}
	}
	if u := o.Update; u != nil {
		minHealthy := cmp.Or(time.Duration(u.MinHealthyTime), defaultMinHealthyTime)
		healthy := cmp.Or(time.Duration(u.HealthyDeadline), defaultHealthyDeadline)
		progress := cmp.Or(time.Duration(u.ProgressDeadline), defaultProgressDeadline)
		if minHealthy >= healthy {
			errs.Add("/update/min_healthy_time", "must be shorter than healthy_deadline (%s)", healthy)
		}
		if healthy >= progress {
			errs.Add("/update/healthy_deadline", "must be shorter than progress_deadline (%s)", progress)
		}
	}
	p.checkWorkload(&o, spec, &errs)
	spec.Options = o
	return errs.Err(provider.ErrInvalidSpec)
}

// checkWorkload checks what Nomad cannot run of the portable workload.
func (p *Provider) checkWorkload(o *tenantOptions, spec *provider.TenantComputeSpec, errs *violation.List) {
	for i, c := range spec.Containers {
		at := workload.ContainerPointer(i)
		if m := c.Resources.MemoryMiB; m != 0 && m < minMemoryMiB {
			errs.Add(at+"/resources/memory_mib", "Nomad gives a task at least %d MiB", minMemoryMiB)
		}
		if o.driver() == DriverRawExec {
			if len(c.Command) == 0 {
				errs.Add(at+"/command", "is required with driver raw_exec: it names the program to run on the node")
			}
			for j, pm := range c.Ports {
				if pm.HostPort != 0 && pm.HostPort != pm.ContainerPort {
					errs.Add(fmt.Sprintf("%s/ports/%d/host_port", at, j), "driver raw_exec runs on the node's network: the process listens on the host port itself, so host_port must be container_port or unset")
				}
			}
		}
		hc := c.HealthCheck
		if hc == nil {
			continue
		}
		switch {
		case len(hc.Command) > 0:
			if o.serviceProvider() != ServiceConsul {
				errs.Add(at+"/health_check/command", "Nomad's built-in service checks are http and tcp; a command check needs service_provider consul")
			}
			if !hasPort(c) {
				errs.Add(at+"/health_check", "a check belongs to a service, and the container publishes no port: add ports")
			}
		case hc.HTTP != nil:
			if !publishes(c, hc.HTTP.Port) {
				errs.Add(at+"/health_check/http/port", "port %d is not a published tcp port of the container; Nomad checks a service's port", hc.HTTP.Port)
			}
		case hc.TCP != nil:
			if !publishes(c, hc.TCP.Port) {
				errs.Add(at+"/health_check/tcp/port", "port %d is not a published tcp port of the container; Nomad checks a service's port", hc.TCP.Port)
			}
		}
	}
}

func hasPort(c workload.ContainerSpec) bool { return len(c.Ports) > 0 }

// publishes reports whether the container publishes containerPort over
// tcp.
func publishes(c workload.ContainerSpec, containerPort int) bool {
	return slices.ContainsFunc(c.Ports, func(pm workload.PortMapping) bool {
		return pm.ContainerPort == containerPort && cmp.Or(pm.Protocol, workload.ProtocolTCP) == workload.ProtocolTCP
	})
}
