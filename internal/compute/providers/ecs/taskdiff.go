package ecs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// ECS's defaults for what a container definition leaves out, from the API
// reference: "If a protocol isn't specified, the default is tcp."
// (API_PortMapping); health check "interval … The default value is 30
// seconds", "timeout … The default value is 5", "retries … The default
// value is 3" (API_HealthCheck); "If the essential parameter of a container
// is marked as true … If this parameter is omitted, a container is assumed
// to be essential." (API_ContainerDefinition).
const (
	defaultHealthInterval = 30
	defaultHealthTimeout  = 5
	defaultHealthRetries  = 3
)

// compareTaskDefinition records, in c, how the live revision got differs
// from want, the revision landlord would register for the spec: the task's
// size, network mode, compatibilities, roles and storage, and each
// container's image, command, args, environment, secrets (as references,
// redacted), ports, resources, health check and log configuration. A
// default ECS fills in reads as what landlord would get.
func (p *Provider) compareTaskDefinition(c *provider.DriftCollector, want *ecs.RegisterTaskDefinitionInput, got *types.TaskDefinition) {
	c.Compare("task_definition/cpu", provider.DriftResources, units(want.Cpu), units(got.Cpu))
	c.Compare("task_definition/memory", provider.DriftResources, units(want.Memory), units(got.Memory))
	c.Compare("task_definition/network_mode", provider.DriftNetwork, string(want.NetworkMode), cmp.Or(string(got.NetworkMode), string(types.NetworkModeBridge)))
	c.Compare("task_definition/requires_compatibilities", provider.DriftPlacement, compatibilities(want.RequiresCompatibilities), compatibilities(got.RequiresCompatibilities))
	c.Compare("task_definition/execution_role", provider.DriftSettings, aws.ToString(want.ExecutionRoleArn), aws.ToString(got.ExecutionRoleArn))
	c.Compare("task_definition/task_role", provider.DriftSettings, aws.ToString(want.TaskRoleArn), aws.ToString(got.TaskRoleArn))
	c.Compare("task_definition/volumes", provider.DriftSettings, volumeNames(want.Volumes), volumeNames(got.Volumes))

	awsvpc := want.NetworkMode == types.NetworkModeAwsvpc
	live := map[string]types.ContainerDefinition{}
	for _, cd := range got.ContainerDefinitions {
		live[aws.ToString(cd.Name)] = cd
	}
	for _, w := range want.ContainerDefinitions {
		name := aws.ToString(w.Name)
		g, ok := live[name]
		if !ok {
			c.Missing("containers/"+name, "present")
			continue
		}
		delete(live, name)
		p.compareContainer(c, "containers/"+name, w, g, awsvpc)
	}
	for _, name := range slices.Sorted(maps.Keys(live)) {
		c.Add(provider.Drift{Path: "containers/" + name, Kind: provider.DriftSettings, Found: "present"})
	}
}

func (p *Provider) compareContainer(c *provider.DriftCollector, at string, want, got types.ContainerDefinition, awsvpc bool) {
	c.Compare(at+"/image", provider.DriftImage, aws.ToString(want.Image), aws.ToString(got.Image))
	c.Compare(at+"/command", provider.DriftCommand, words(want.EntryPoint), words(got.EntryPoint))
	c.Compare(at+"/args", provider.DriftCommand, words(want.Command), words(got.Command))
	c.CompareMap(at+"/env", provider.DriftEnv, environment(want.Environment), environment(got.Environment), nil)
	// A secret's reference is not its value, but it names where the value
	// is kept: it is redacted like one.
	c.CompareMap(at+"/secrets", provider.DriftEnv, secretRefs(want.Secrets), secretRefs(got.Secrets), func(string) bool { return true })
	c.Compare(at+"/ports", provider.DriftPorts, portsString(want.PortMappings, awsvpc), portsString(got.PortMappings, awsvpc))
	c.Compare(at+"/resources/cpu_millicores", provider.DriftResources, cpuString(want.Cpu), cpuString(got.Cpu))
	c.Compare(at+"/resources/memory_mib", provider.DriftResources, mibString(want.Memory), mibString(got.Memory))
	c.Compare(at+"/health_check", provider.DriftHealth, healthString(want.HealthCheck), healthString(got.HealthCheck))
	c.Compare(at+"/log_configuration", provider.DriftSettings, p.logString(want.LogConfiguration), p.logString(got.LogConfiguration))
	c.Compare(at+"/essential", provider.DriftSettings, fmt.Sprint(essential(want.Essential)), fmt.Sprint(essential(got.Essential)))
}

// units is a task size as ECS stores it, CPU units or MiB: "1024" for
// "1024", "" for none.
func units(v *string) string {
	s := strings.TrimSpace(aws.ToString(v))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return s
}

func compatibilities(cs []types.Compatibility) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return sortedList(s)
}

func volumeNames(vs []types.Volume) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = aws.ToString(v.Name)
	}
	return sortedList(s)
}

// words is a command line, each word quoted.
func words(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = strconv.Quote(w)
	}
	return strings.Join(q, " ")
}

func environment(kv []types.KeyValuePair) map[string]string {
	m := make(map[string]string, len(kv))
	for _, e := range kv {
		m[aws.ToString(e.Name)] = aws.ToString(e.Value)
	}
	return m
}

func secretRefs(ss []types.Secret) map[string]string {
	m := make(map[string]string, len(ss))
	for _, s := range ss {
		m[aws.ToString(s.Name)] = aws.ToString(s.ValueFrom)
	}
	return m
}

// portsString lists port mappings as "8080/tcp", with the host port when it
// is another ("80:8080/tcp") and the name when there is one. With awsvpc a
// host port left out is the container port ("the hostPort can either be
// left blank or set to the same value as the containerPort",
// API_PortMapping).
func portsString(ms []types.PortMapping, awsvpc bool) string {
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		port := aws.ToInt32(m.ContainerPort)
		host := aws.ToInt32(m.HostPort)
		if host == 0 && awsvpc {
			host = port
		}
		s := fmt.Sprintf("%d/%s", port, cmp.Or(string(m.Protocol), string(types.TransportProtocolTcp)))
		if host != port {
			s = fmt.Sprintf("%d:%s", host, s)
		}
		if n := aws.ToString(m.Name); n != "" {
			s = n + "=" + s
		}
		parts = append(parts, s)
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func cpuString(u int32) string {
	if u == 0 {
		return ""
	}
	return fmt.Sprintf("%d CPU units", u)
}

func mibString(v *int32) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%d MiB", *v)
}

func healthString(h *types.HealthCheck) string {
	if h == nil {
		return ""
	}
	interval := cmp.Or(aws.ToInt32(h.Interval), defaultHealthInterval)
	timeout := cmp.Or(aws.ToInt32(h.Timeout), defaultHealthTimeout)
	retries := cmp.Or(aws.ToInt32(h.Retries), defaultHealthRetries)
	return fmt.Sprintf("%s every %ds, timeout %ds, %d retries, start period %ds", words(h.Command), interval, timeout, retries, aws.ToInt32(h.StartPeriod))
}

// logString names a log configuration by its driver and a keyed
// fingerprint of its options: an option may hold a token (splunk-token),
// which must not reach a drift report.
func (p *Provider) logString(l *types.LogConfiguration) string {
	if l == nil {
		return ""
	}
	var opts struct {
		Options       map[string]string `json:",omitempty"`
		SecretOptions []types.Secret    `json:",omitempty"`
	}
	opts.Options, opts.SecretOptions = l.Options, l.SecretOptions
	return string(l.LogDriver) + " options #" + p.fingerprint(opts)[:12]
}

func essential(v *bool) bool { return v == nil || *v }
