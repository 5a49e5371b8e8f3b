package docker

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// desired is one container as the spec wants it.
type desired struct {
	spec workload.ContainerSpec
	hash string
	// create holds the Engine request; it carries secret values in its
	// environment and must never be logged.
	create client.ContainerCreateOptions
}

// plan is a tenant's workload as the spec wants it.
type plan struct {
	n          naming
	spec       *provider.TenantComputeSpec
	options    tenantOptions
	pullPolicy PullPolicy
	network    string // "" with host networking
	ownNetwork bool   // the network is the tenant's own
	containers []desired
}

func (p *Provider) plan(spec *provider.TenantComputeSpec) *plan {
	o := optionsOf(spec)
	pl := &plan{n: p.naming(spec.TenantID, spec.TenantName), spec: spec, options: o, pullPolicy: p.settings.PullPolicy}
	if o.PullPolicy != "" {
		pl.pullPolicy = o.PullPolicy
	}
	switch {
	case o.HostNetwork:
	case p.settings.NetworkName != "":
		pl.network = p.settings.NetworkName
	default:
		pl.network, pl.ownNetwork = pl.n.network(), true
	}
	hostIP := p.settings.HostIP
	if spec.Networking.Public {
		hostIP = p.settings.PublicHostIP
	}
	for _, c := range spec.Containers {
		d := desired{spec: c, hash: containerHash(p.hashKey, c, spec.Secrets, hostIP, pl.network, o)}
		d.create = p.createOptions(pl, c, d.hash, hostIP)
		pl.containers = append(pl.containers, d)
	}
	return pl
}

func (p *Provider) createOptions(pl *plan, c workload.ContainerSpec, hash, hostIP string) client.ContainerCreateOptions {
	labels := pl.n.labels(pl.spec.Generation)
	labels[pl.n.label(labelContainer)] = c.Name
	labels[pl.n.label(labelConfigHash)] = hash
	stop := int(p.stopTimeout().Seconds())
	cfg := &container.Config{
		Image:        c.Image,
		Env:          environment(c, pl.spec.Secrets),
		Entrypoint:   c.Command,
		Cmd:          c.Args,
		Labels:       labels,
		ExposedPorts: network.PortSet{},
		StopTimeout:  &stop,
	}
	host := &container.HostConfig{
		PortBindings:  network.PortMap{},
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
		Privileged:    pl.options.Privileged,
		Binds:         pl.options.Binds,
	}
	host.NanoCPUs = c.Resources.CPUMillicores * 1_000_000
	host.Memory = c.Resources.MemoryMiB << 20
	addr, _ := netip.ParseAddr(hostIP) // checked by Settings.check
	for _, port := range c.Ports {
		dp, ok := network.PortFrom(uint16(port.ContainerPort), network.IPProtocol(port.Protocol))
		if !ok {
			continue // Validate refuses such ports
		}
		cfg.ExposedPorts[dp] = struct{}{}
		binding := network.PortBinding{HostIP: addr}
		if port.HostPort != 0 {
			binding.HostPort = strconv.Itoa(port.HostPort)
		}
		host.PortBindings[dp] = append(host.PortBindings[dp], binding)
	}
	if hc := c.HealthCheck; hc != nil {
		switch {
		case len(hc.Command) > 0:
			cfg.Healthcheck = &container.HealthConfig{
				Test:        append([]string{"CMD"}, hc.Command...),
				Interval:    hc.Interval,
				Timeout:     hc.Timeout,
				Retries:     hc.Retries,
				StartPeriod: hc.StartPeriod,
			}
		case hc.HTTP != nil:
			labels[pl.n.label(labelProbe)] = fmt.Sprintf("http:%d:%s", hc.HTTP.Port, hc.HTTP.Path)
		case hc.TCP != nil:
			labels[pl.n.label(labelProbe)] = fmt.Sprintf("tcp:%d", hc.TCP.Port)
		}
	}
	opts := client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: pl.n.container(c.Name)}
	if pl.network == "" {
		host.NetworkMode = "host"
		host.PortBindings = nil
		return opts
	}
	host.NetworkMode = container.NetworkMode(pl.network)
	opts.NetworkingConfig = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
		pl.network: {Aliases: pl.aliases(c.Name)},
	}}
	return opts
}

// aliases are the names a container is reached by on the plan's network
// besides its Docker name: its container name on a network of the tenant's
// own. Not on a network every tenant shares (network_name), where "app"
// would name every tenant's app and a sidecar could reach another
// tenant's; there a tenant's containers reach each other by Docker name
// (<label_prefix>-<tenant>-<id>-<container>). Nor on the Engine's
// predefined networks, which refuse network-scoped aliases.
func (pl *plan) aliases(name string) []string {
	if !pl.ownNetwork {
		return nil
	}
	return []string{name}
}

// attach points the containers at the network with id netID: the name may
// be ambiguous while another process's duplicate of it exists.
func (pl *plan) attach(netID string) {
	if pl.network == "" || netID == "" {
		return
	}
	for i := range pl.containers {
		c := &pl.containers[i].create
		c.HostConfig.NetworkMode = container.NetworkMode(netID)
		c.NetworkingConfig = &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			pl.network: {Aliases: pl.aliases(pl.containers[i].spec.Name), NetworkID: netID},
		}}
	}
}

// environment is the container's env followed by its secrets, sorted.
func environment(c workload.ContainerSpec, secrets []workload.SecretReference) []string {
	var env []string
	for k, v := range c.Env {
		env = append(env, k+"="+v)
	}
	for _, s := range secrets {
		if s.Container == c.Name {
			env = append(env, s.Name+"="+s.Value.Reveal())
		}
	}
	sort.Strings(env)
	return env
}

// fixedHostPorts are the "port/proto" host ports a container spec publishes
// on a fixed port.
func fixedHostPorts(c workload.ContainerSpec) map[string]bool {
	out := map[string]bool{}
	for _, port := range c.Ports {
		if port.HostPort != 0 {
			out[fmt.Sprintf("%d/%s", port.HostPort, strings.ToLower(string(port.Protocol)))] = true
		}
	}
	return out
}

// publishedHostPorts are the fixed host ports an existing container binds.
func publishedHostPorts(c container.Summary) map[string]bool {
	out := map[string]bool{}
	for _, port := range c.Ports {
		if port.PublicPort != 0 {
			out[fmt.Sprintf("%d/%s", port.PublicPort, strings.ToLower(port.Type))] = true
		}
	}
	return out
}
