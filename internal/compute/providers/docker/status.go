package docker

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// probeTimeout bounds one host-side HTTP or TCP probe.
const probeTimeout = 2 * time.Second

// GetStatus inspects every container of the tenant live.
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	st, err := p.status(ctx, p.naming(tenantID, ""))
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (p *Provider) status(ctx context.Context, n naming) (*provider.ComputeStatus, error) {
	ex, err := p.find(ctx, n)
	if err != nil {
		return nil, fail(ctx, nil, n.tenantID, "status: find containers", err)
	}
	if len(ex.current) == 0 {
		return nil, fmt.Errorf("docker: status of tenant %s: %w", n.tenantID, provider.ErrTenantNotFound)
	}
	ids := make(map[string]string, len(ex.current))
	for name, c := range ex.current {
		ids[name] = c.ID
	}
	return p.describe(ctx, n, ids)
}

// describe inspects the containers ids (spec container name → id) live.
func (p *Provider) describe(ctx context.Context, n naming, ids map[string]string) (*provider.ComputeStatus, error) {
	inspected, err := p.inspectContainers(ctx, n, ids)
	if err != nil {
		return nil, err
	}
	return p.statusOf(ctx, n, inspected)
}

// inspectContainers inspects the containers ids (spec container name → id);
// one removed since it was listed is left out.
func (p *Provider) inspectContainers(ctx context.Context, n naming, ids map[string]string) (map[string]container.InspectResponse, error) {
	out := make(map[string]container.InspectResponse, len(ids))
	for name, id := range ids {
		res, err := p.client.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if isNotFound(err) {
			continue // removed since the list
		}
		if err != nil {
			return nil, fail(ctx, nil, n.tenantID, "status: inspect container "+name, err)
		}
		out[name] = res.Container
	}
	return out, nil
}

// statusOf is the status of the inspected containers (spec container name →
// inspection): their states now, and the endpoints they publish now.
func (p *Provider) statusOf(ctx context.Context, n naming, inspected map[string]container.InspectResponse) (*provider.ComputeStatus, error) {
	st := &provider.ComputeStatus{TenantID: n.tenantID, ProviderType: Name, LastUpdated: p.now()}
	names := make([]string, 0, len(inspected))
	for name := range inspected {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := inspected[name]
		cs, endpoints := p.containerStatus(ctx, n, name, c)
		st.Containers = append(st.Containers, cs)
		st.Endpoints = append(st.Endpoints, endpoints...)
		if g, err := strconv.ParseInt(c.Config.Labels[n.label(labelGeneration)], 10, 64); err == nil && g > st.Generation {
			st.Generation = g
		}
	}
	if len(st.Containers) == 0 {
		return nil, fmt.Errorf("docker: status of tenant %s: %w", n.tenantID, provider.ErrTenantNotFound)
	}
	st.State, st.Message = overallState(st.Containers)
	st.Health = overallHealth(st.Containers)
	return st, nil
}

func (p *Provider) containerStatus(ctx context.Context, n naming, name string, c container.InspectResponse) (provider.ContainerStatus, []provider.Endpoint) {
	cs := provider.ContainerStatus{Name: name, Image: c.Config.Image, ID: c.ID, RestartCount: c.RestartCount, Health: provider.HealthUnknown, State: provider.ContainerUnknown}
	s := c.State
	switch s.Status {
	case container.StateRunning:
		cs.State = provider.ContainerRunning
	case container.StateRestarting:
		cs.State = provider.ContainerRestarting
	case container.StateCreated:
		cs.State = provider.ContainerCreated
	case container.StateExited, container.StateDead, container.StateRemoving:
		cs.State = provider.ContainerExited
		code := s.ExitCode
		cs.ExitCode = &code
	}
	if s.Error != "" {
		cs.Message = s.Error
	} else if s.OOMKilled {
		cs.Message = "killed: out of memory"
	}
	var endpoints []provider.Endpoint
	if c.NetworkSettings != nil {
		for port, bindings := range c.NetworkSettings.Ports {
			for _, b := range bindings {
				if b.HostPort == "" {
					continue
				}
				endpoints = append(endpoints, provider.Endpoint{
					Container:     name,
					ContainerPort: int(port.Num()),
					Protocol:      workload.Protocol(port.Proto()),
					Address:       net.JoinHostPort(b.HostIP.String(), b.HostPort),
				})
			}
		}
	}
	sort.Slice(endpoints, func(i, j int) bool { return endpoints[i].Address < endpoints[j].Address })
	switch {
	case s.Health != nil:
		switch s.Health.Status {
		case container.Healthy:
			cs.Health = provider.HealthHealthy
		case container.Unhealthy:
			cs.Health = provider.HealthUnhealthy
		case container.Starting:
			cs.Health = provider.HealthStarting
		}
	case cs.State == provider.ContainerRunning && c.Config.Labels[n.label(labelProbe)] != "":
		cs.Health = probe(ctx, c.Config.Labels[n.label(labelProbe)], c.NetworkSettings)
	}
	return cs, endpoints
}

// probe runs an "http:<port>:<path>" or "tcp:<port>" probe against the
// port's published address from this host.
func probe(ctx context.Context, spec string, ns *container.NetworkSettings) provider.HealthStatus {
	kind, rest, _ := strings.Cut(spec, ":")
	portText, path, _ := strings.Cut(rest, ":")
	num, err := strconv.Atoi(portText)
	if err != nil || ns == nil {
		return provider.HealthUnknown
	}
	port, ok := network.PortFrom(uint16(num), network.TCP)
	if !ok || len(ns.Ports[port]) == 0 || ns.Ports[port][0].HostPort == "" {
		return provider.HealthUnknown // not published: cannot be probed from here
	}
	b := ns.Ports[port][0]
	host := b.HostIP.String()
	if !b.HostIP.IsValid() || b.HostIP.IsUnspecified() {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, b.HostPort)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if kind == "tcp" {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return provider.HealthUnhealthy
		}
		_ = conn.Close()
		return provider.HealthHealthy
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return provider.HealthUnknown
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return provider.HealthUnhealthy
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return provider.HealthHealthy
	}
	return provider.HealthUnhealthy
}

func overallState(cs []provider.ContainerStatus) (provider.ComputeState, string) {
	var running, failed, created int
	for _, c := range cs {
		switch {
		case c.State == provider.ContainerRunning:
			running++
		case c.State == provider.ContainerRestarting, c.ExitCode != nil && *c.ExitCode != 0:
			failed++
		case c.State == provider.ContainerCreated:
			created++
		}
	}
	switch {
	case running == len(cs):
		return provider.StateRunning, ""
	case running > 0:
		return provider.StateDegraded, fmt.Sprintf("%d of %d containers running", running, len(cs))
	case failed > 0:
		return provider.StateFailed, fmt.Sprintf("%d of %d containers failed or restarting", failed, len(cs))
	case created == len(cs):
		// Provision creates and starts in one call, so containers that were
		// created and never started are a call that was cut off (a crash),
		// not a start in progress: stopped, for Provision to finish.
		return provider.StateStopped, "containers created, not started"
	default:
		return provider.StateStopped, "no container is running"
	}
}

func overallHealth(cs []provider.ContainerStatus) provider.HealthStatus {
	checked, healthy := 0, 0
	starting := false
	for _, c := range cs {
		switch c.Health {
		case provider.HealthUnhealthy:
			return provider.HealthUnhealthy
		case provider.HealthStarting:
			starting = true
			checked++
		case provider.HealthHealthy:
			checked++
			healthy++
		}
	}
	switch {
	case starting:
		return provider.HealthStarting
	case checked > 0 && healthy == checked:
		return provider.HealthHealthy
	default:
		return provider.HealthUnknown
	}
}
