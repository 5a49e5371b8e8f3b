package api

import (
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// The compute package's status types are the providers' contract; the API
// answers with their wire form. The conversions copy field by field, so a
// field added to one side and not the other fails to compile here or fails
// TestComputeStatusWire, which fills every field.

// computeStatus is the wire form of a provider's status; nil stays nil.
func computeStatus(st *provider.ComputeStatus) *wire.ComputeStatus {
	if st == nil {
		return nil
	}
	out := &wire.ComputeStatus{
		TenantID:     st.TenantID,
		ProviderType: st.ProviderType,
		State:        wire.ComputeState(st.State),
		Health:       wire.HealthStatus(st.Health),
		Endpoints:    endpoints(st.Endpoints),
		Generation:   st.Generation,
		Message:      st.Message,
		LastUpdated:  st.LastUpdated,
		Metadata:     st.Metadata,
	}
	if st.Containers != nil {
		out.Containers = make([]wire.ContainerStatus, len(st.Containers))
		for i, c := range st.Containers {
			out.Containers[i] = wire.ContainerStatus{
				Name:         c.Name,
				Image:        c.Image,
				State:        wire.ContainerState(c.State),
				Health:       wire.HealthStatus(c.Health),
				RestartCount: c.RestartCount,
				ExitCode:     c.ExitCode,
				Message:      c.Message,
				ID:           c.ID,
			}
		}
	}
	return out
}

// endpoints is the wire form of a workload's endpoints; nil stays nil.
func endpoints(eps []provider.Endpoint) []wire.Endpoint {
	if eps == nil {
		return nil
	}
	out := make([]wire.Endpoint, len(eps))
	for i, e := range eps {
		out[i] = wire.Endpoint{
			Container:     e.Container,
			Name:          e.Name,
			ContainerPort: e.ContainerPort,
			Protocol:      wire.Protocol(e.Protocol),
			Address:       e.Address,
		}
	}
	return out
}

func wireDrift(d *tenant.DriftReport) *wire.Drift {
	if d == nil {
		return nil
	}
	out := &wire.Drift{DetectedAt: d.DetectedAt, Generation: d.Generation, Policy: string(d.Policy), ResolvedAt: d.ResolvedAt,
		Differences: make([]wire.DriftDifference, len(d.Differences))}
	for i, x := range d.Differences {
		out.Differences[i] = wire.DriftDifference{Path: x.Path, Kind: string(x.Kind), Expected: x.Expected, Found: x.Found}
	}
	return out
}
