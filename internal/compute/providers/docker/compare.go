package docker

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// live is one container as the Engine holds it: its inspection and the
// configuration of the image it runs, whose defaults the Engine copied
// into it at create.
type live struct {
	c     container.InspectResponse
	image imageDefaults
}

// compareContainer records in col every difference between a container as
// the plan creates it (d) and as it runs (l), under containers/<name>. netID
// is the id of the tenant's network, "" when it is missing. Only what the
// provider writes is compared, and what the Engine fills in from the image
// (environment, entrypoint, command, health check, labels: moby's
// daemon/commit.go merge, applied at create) is expected as it fills it in.
// The container's state is compared unless withState is false.
func (pl *plan) compareContainer(col *provider.DriftCollector, d desired, l live, netID string, withState bool) {
	at := "containers/" + d.spec.Name
	c := l.c
	cfg, host := c.Config, c.HostConfig
	if cfg == nil || host == nil {
		col.Add(provider.Drift{Path: at, Kind: provider.DriftSettings, Expected: "a configured container", Found: "no configuration"})
		return
	}
	col.Compare(at+"/image", provider.DriftImage, d.spec.Image, cfg.Image)
	entrypoint, cmd := expectedCommand(d.spec, l.image)
	col.Compare(at+"/command", provider.DriftCommand, words(entrypoint), words(cfg.Entrypoint))
	col.Compare(at+"/args", provider.DriftCommand, words(cmd), words(cfg.Cmd))
	pl.compareEnv(col, at, d.spec, cfg.Env, l.image.env)
	col.Compare(at+"/port_bindings", provider.DriftPorts, bindings(d.create.HostConfig.PortBindings, nil), bindings(host.PortBindings, d.create.HostConfig.PortBindings))
	col.Compare(at+"/resources/cpu_millicores", provider.DriftResources, millicores(d.create.HostConfig.NanoCPUs), millicores(host.NanoCPUs))
	col.Compare(at+"/resources/memory_mib", provider.DriftResources, mebibytes(d.create.HostConfig.Memory), mebibytes(host.Memory))
	wantHealth := healthString(mergeHealth(d.create.Config.Healthcheck, l.image.health), d.create.Config.Labels[pl.n.label(labelProbe)])
	col.Compare(at+"/health_check", provider.DriftHealth, wantHealth, healthString(cfg.Healthcheck, cfg.Labels[pl.n.label(labelProbe)]))
	col.Compare(at+"/restart_policy", provider.DriftSettings, string(d.create.HostConfig.RestartPolicy.Name), string(host.RestartPolicy.Name))
	col.Compare(at+"/privileged", provider.DriftSettings, strconv.FormatBool(d.create.HostConfig.Privileged), strconv.FormatBool(host.Privileged))
	col.Compare(at+"/binds", provider.DriftSettings, strings.Join(d.create.HostConfig.Binds, ","), strings.Join(host.Binds, ","))
	// The labels the provider finds and sorts containers by; the generation
	// label lags by design (an unchanged container is not re-created for a
	// new generation) and is not compared.
	for _, key := range []string{labelManagedBy, labelContainer, labelConfigHash} {
		k := pl.n.label(key)
		col.Compare(at+"/labels/"+k, provider.DriftSettings, d.create.Config.Labels[k], cfg.Labels[k])
	}
	pl.compareNetworks(col, at, d.spec.Name, c, netID)
	if withState {
		state := "unknown"
		if c.State != nil {
			state = string(c.State.Status)
		}
		col.Compare(at+"/state", provider.DriftState, string(container.StateRunning), state)
	}
}

// compareEnv compares the environment: the spec's env, then its secrets
// (their values never leave this function: CompareMap redacts them), then
// what the image sets and the spec does not, which the Engine appends.
func (pl *plan) compareEnv(col *provider.DriftCollector, at string, c workload.ContainerSpec, env, imageEnv []string) {
	secret := map[string]bool{}
	wantSecrets := map[string]string{}
	for _, s := range pl.spec.Secrets {
		if s.Container == c.Name {
			secret[s.Name] = true
			wantSecrets[s.Name] = s.Value.Reveal()
		}
	}
	want := map[string]string{}
	for k, v := range c.Env {
		if !secret[k] {
			want[k] = v
		}
	}
	for k, v := range envMap(imageEnv) {
		if _, set := c.Env[k]; !set && !secret[k] {
			want[k] = v
		}
	}
	found, foundSecrets := map[string]string{}, map[string]string{}
	for k, v := range envMap(env) {
		if secret[k] {
			foundSecrets[k] = v
		} else {
			found[k] = v
		}
	}
	col.CompareMap(at+"/env", provider.DriftEnv, want, found, nil)
	col.CompareMap(at+"/secrets", provider.DriftEnv, wantSecrets, foundSecrets, func(string) bool { return true })
}

// compareNetworks compares the container's attachments: to the tenant's
// network (by id, with its alias), and to no other; or host networking.
func (pl *plan) compareNetworks(col *provider.DriftCollector, at, name string, c container.InspectResponse, netID string) {
	if pl.network == "" {
		col.Compare(at+"/network_mode", provider.DriftNetwork, "host", string(c.HostConfig.NetworkMode))
		return
	}
	var eps map[string]*network.EndpointSettings
	if c.NetworkSettings != nil {
		eps = c.NetworkSettings.Networks
	}
	found := "detached"
	for netName, ep := range eps {
		switch {
		case ep == nil:
		case netID != "" && ep.NetworkID == netID:
			found = "attached"
			if want := pl.aliases(name); len(want) > 0 && !slices.Contains(ep.Aliases, name) {
				col.Compare(at+"/networks/"+pl.network+"/aliases", provider.DriftNetwork, strings.Join(want, ","), strings.Join(ep.Aliases, ","))
			}
		case netName == pl.network:
			// A duplicate of the tenant's network that lost (see
			// ensureNetwork), or one that replaced it.
			found = "attached to another network of that name, " + shortNetworkID(ep.NetworkID)
		default:
			// Another network: the tenant's isolation is not what was
			// declared.
			col.Add(provider.Drift{Path: at + "/networks/" + netName, Kind: provider.DriftNetwork, Found: "attached"})
		}
	}
	col.Compare(at+"/networks/"+pl.network, provider.DriftNetwork, "attached", found)
}

// expectedCommand is the entrypoint and command the Engine gives a
// container created from c: an empty entrypoint takes the image's, and an
// empty command takes the image's only when the entrypoint was empty too
// (moby daemon/commit.go merge).
func expectedCommand(c workload.ContainerSpec, img imageDefaults) (entrypoint, cmd []string) {
	if len(c.Command) > 0 {
		return c.Command, c.Args
	}
	if len(c.Args) > 0 {
		return img.entrypoint, c.Args
	}
	return img.entrypoint, img.cmd
}

// mergeHealth is the health check the Engine keeps for a container created
// with want from an image with img: the image's when want is nil, else want
// with its empty fields taken from the image (moby daemon/commit.go merge).
func mergeHealth(want, img *container.HealthConfig) *container.HealthConfig {
	if img == nil {
		return want
	}
	if want == nil {
		return img
	}
	out := *want
	if len(out.Test) == 0 {
		out.Test = img.Test
	}
	if out.Interval == 0 {
		out.Interval = img.Interval
	}
	if out.Timeout == 0 {
		out.Timeout = img.Timeout
	}
	if out.StartPeriod == 0 {
		out.StartPeriod = img.StartPeriod
	}
	if out.Retries == 0 {
		out.Retries = img.Retries
	}
	return &out
}

// healthString describes a health check in one line: the Engine's
// HEALTHCHECK and the host-side probe of the probe label.
func healthString(hc *container.HealthConfig, probe string) string {
	var parts []string
	if hc != nil && len(hc.Test) > 0 {
		parts = append(parts, fmt.Sprintf("%s interval=%s timeout=%s retries=%d start_period=%s",
			strings.Join(hc.Test, " "), hc.Interval, hc.Timeout, hc.Retries, hc.StartPeriod))
	}
	if probe != "" {
		parts = append(parts, "probe "+probe)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// bindings describes port bindings, sorted, as "8080/tcp->127.0.0.1:9000".
// A binding whose container port want publishes on a port the Engine
// chooses reads "*" for its host port, whatever port the container holds:
// a dynamic port is not drift unless the spec fixed it.
func bindings(pm network.PortMap, want network.PortMap) string {
	var out []string
	for port, bs := range pm {
		dynamic := false
		if wb, ok := want[port]; ok && len(wb) > 0 && wb[0].HostPort == "" {
			dynamic = true
		}
		for _, b := range bs {
			hostPort := b.HostPort
			if hostPort == "" || dynamic {
				hostPort = "*"
			}
			out = append(out, port.String()+"->"+hostIP(b.HostIP)+":"+hostPort)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// hostIP reads an unset binding address as the Engine does: every
// interface.
func hostIP(a netip.Addr) string {
	if !a.IsValid() {
		return "0.0.0.0"
	}
	return a.String()
}

func millicores(nano int64) string {
	if nano == 0 {
		return "unlimited"
	}
	if nano%1_000_000 == 0 {
		return strconv.FormatInt(nano/1_000_000, 10)
	}
	return strconv.FormatFloat(float64(nano)/1e6, 'f', -1, 64)
}

func mebibytes(b int64) string {
	if b == 0 {
		return "unlimited"
	}
	if b%(1<<20) == 0 {
		return strconv.FormatInt(b>>20, 10)
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 2, 64)
}

// words renders an argument list; nil and empty read alike, as the Engine
// treats them.
func words(ws []string) string {
	if len(ws) == 0 {
		return "[]"
	}
	return fmt.Sprintf("%q", ws)
}

func shortNetworkID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// envMap reads KEY=value entries; the last of a key wins, as in a process's
// environment.
func envMap(env []string) map[string]string {
	out := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}
