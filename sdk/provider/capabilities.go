package provider

import (
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Capabilities say what a provider supports; the zero value supports none
// of it. A provider that does not implement CapabilityReporter is not
// checked.
type Capabilities struct {
	// InPlaceUpdate: Update changes a running workload without replacing
	// its containers (tasks, pods), so an update causes no restart.
	InPlaceUpdate bool `json:"in_place_update"`
	// MultipleContainers: a workload may have sidecars.
	MultipleContainers bool `json:"multiple_containers"`
	// Secrets: secret environment values, kept out of the platform's
	// readable configuration where it allows.
	Secrets bool `json:"secrets"`
	// PublishedPorts: container ports are published and reported as
	// endpoints.
	PublishedPorts bool `json:"published_ports"`
	// PublicNetworking: networking.public makes ports reachable from
	// outside the host or cluster.
	PublicNetworking bool `json:"public_networking"`
	// HealthChecks: containers' health checks run and report health.
	HealthChecks bool `json:"health_checks"`
	// Scaling: a workload may run more than one replica.
	Scaling bool `json:"scaling"`
	// Volumes: containers may mount storage.
	Volumes bool `json:"volumes"`
}

// capabilitiesOf returns what p declares, and false when it declares
// nothing.
func capabilitiesOf(p Provider) (Capabilities, bool) {
	if r, ok := p.(CapabilityReporter); ok {
		return r.Capabilities(), true
	}
	return Capabilities{}, false
}

// checkCapabilities reports what the workload asks of p that p does not
// declare, each at the config field that asks for it.
func checkCapabilities(p Provider, w workload.Workload) violation.List {
	caps, declared := capabilitiesOf(p)
	if !declared {
		return nil
	}
	var errs violation.List
	refuse := func(at, what, capability string) {
		errs.Add(at, "provider %s does not support %s (capability %s)", p.Name(), what, capability)
	}
	if len(w.Containers) > 1 && !caps.MultipleContainers {
		refuse("/sidecars", "sidecars", "multiple_containers")
	}
	secretsOf := map[string]bool{}
	for _, s := range w.Secrets {
		secretsOf[s.Container] = true
	}
	for i, c := range w.Containers {
		at := workload.ContainerPointer(i)
		if len(c.Ports) > 0 && !caps.PublishedPorts {
			refuse(at+"/ports", "published ports", "published_ports")
		}
		if c.HealthCheck != nil && !caps.HealthChecks {
			refuse(at+"/health_check", "health checks", "health_checks")
		}
		if secretsOf[c.Name] && !caps.Secrets {
			refuse(at+"/secrets", "secrets", "secrets")
		}
	}
	if w.Networking.Public && !caps.PublicNetworking {
		refuse("/networking/public", "public networking", "public_networking")
	}
	return errs
}
