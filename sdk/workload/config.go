package workload

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// DefaultContainerName names the main container when the config does not.
const DefaultContainerName = "app"

// Health check defaults, as the schema documents them.
const (
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
	DefaultHealthRetries  = 3
)

// Config is the portable workload as a tenant writes it in compute_config:
// the main container at the top level, sidecars beside it, networking.
// Fields a provider adds are not part of it.
type Config struct {
	Container
	Sidecars   []Container   `json:"sidecars,omitempty"`
	Networking NetworkConfig `json:"networking"`
}

// Container is one container as configured.
type Container struct {
	Name        string               `json:"name,omitempty"`
	Image       string               `json:"image"`
	Command     []string             `json:"command,omitempty"`
	Args        []string             `json:"args,omitempty"`
	Env         map[string]string    `json:"env,omitempty"`
	Secrets     map[string]string    `json:"secrets,omitempty"`
	Ports       []PortMapping        `json:"ports,omitempty"`
	HealthCheck *HealthCheck         `json:"health_check,omitempty"`
	Resources   ResourceRequirements `json:"resources"`
}

// HealthCheck is a health check as configured, with durations as text.
type HealthCheck struct {
	Command     []string   `json:"command,omitempty"`
	HTTP        *HTTPProbe `json:"http,omitempty"`
	TCP         *TCPProbe  `json:"tcp,omitempty"`
	Interval    string     `json:"interval,omitempty"`
	Timeout     string     `json:"timeout,omitempty"`
	Retries     int        `json:"retries,omitempty"`
	StartPeriod string     `json:"start_period,omitempty"`
}

// Decode reads the portable workload of a config that has passed its
// schema; fields it does not know are ignored.
func Decode(config json.RawMessage) (*Config, error) {
	var c Config
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("workload: cannot read the config: %w", err)
	}
	c.Name = cmp.Or(c.Name, DefaultContainerName)
	return &c, nil
}

// ContainerPointer is the JSON pointer, in a config, of the i-th container
// of Config.Containers: "" for the main one, "/sidecars/N" for the others.
func ContainerPointer(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf("/sidecars/%d", i-1)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)

// Check reports the rules of the config that its schema cannot express:
// unique container names, variable names, no variable both in env and
// secrets, no port listed twice, no host port published twice, exactly one
// health probe, durations that parse.
func (c *Config) Check() violation.List {
	var errs violation.List
	names := map[string]string{}
	hostPorts := map[string]string{}
	for i, ct := range c.Containers() {
		at := ContainerPointer(i)
		if prev, dup := names[ct.Name]; dup {
			errs.Add(at+"/name", "container name %q is already used at %s", ct.Name, cmp.Or(prev, "the top level"))
		} else {
			names[ct.Name] = at
		}
		for _, k := range slices.Sorted(maps.Keys(ct.Env)) {
			if !envName.MatchString(k) {
				errs.Add(at+"/env/"+violation.Escape(k), "is not a variable name: use letters, digits and _, not starting with a digit")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ct.Secrets)) {
			if !envName.MatchString(k) {
				errs.Add(at+"/secrets/"+violation.Escape(k), "is not a variable name: use letters, digits and _, not starting with a digit")
			}
			if _, both := ct.Env[k]; both {
				errs.Add(at+"/secrets/"+violation.Escape(k), "%s is also set in env; set it in one place", k)
			}
		}
		containerPorts := map[string]bool{}
		for j, p := range ct.Ports {
			key := fmt.Sprintf("%d/%s", p.ContainerPort, cmp.Or(p.Protocol, ProtocolTCP))
			if containerPorts[key] {
				errs.Add(fmt.Sprintf("%s/ports/%d/container_port", at, j), "port %s is listed twice", key)
			}
			containerPorts[key] = true
		}
		checkHostPorts(ct.Ports, at, hostPorts, &errs)
		if hc := ct.HealthCheck; hc != nil {
			probes := 0
			for _, set := range []bool{len(hc.Command) > 0, hc.HTTP != nil, hc.TCP != nil} {
				if set {
					probes++
				}
			}
			if probes != 1 {
				errs.Add(at+"/health_check", "set exactly one of command, http and tcp (found %d)", probes)
			}
			for field, d := range map[string]string{"interval": hc.Interval, "timeout": hc.Timeout, "start_period": hc.StartPeriod} {
				if d == "" {
					continue
				}
				if _, err := time.ParseDuration(d); err != nil {
					errs.Add(at+"/health_check/"+field, "%q is not a duration such as 10s or 1m30s", d)
				}
			}
		}
	}
	return errs
}

// CheckHostPorts reports host ports that a workload's containers publish
// twice, each at its pointer in the workload's spec form
// (/containers/N/ports/M/host_port).
func CheckHostPorts(w Workload) violation.List {
	var errs violation.List
	seen := map[string]string{}
	for i, c := range w.Containers {
		checkHostPorts(c.Ports, fmt.Sprintf("/containers/%d", i), seen, &errs)
	}
	return errs
}

// checkHostPorts adds a violation for each of ports whose host port is in
// seen, and records the others there.
func checkHostPorts(ports []PortMapping, at string, seen map[string]string, errs *violation.List) {
	for j, p := range ports {
		if p.HostPort == 0 {
			continue
		}
		key := fmt.Sprintf("%d/%s", p.HostPort, cmp.Or(p.Protocol, ProtocolTCP))
		where := fmt.Sprintf("%s/ports/%d/host_port", at, j)
		if prev, dup := seen[key]; dup {
			errs.Add(where, "host port %s is already published at %s", key, prev)
		} else {
			seen[key] = where
		}
	}
}

// Containers returns the main container followed by the sidecars.
func (c *Config) Containers() []Container {
	return append([]Container{c.Container}, c.Sidecars...)
}

// Workload returns the config in the form providers receive it: defaults
// applied, durations parsed, secrets apart. The config must have passed
// Check.
func (c *Config) Workload() Workload {
	var w Workload
	for _, ct := range c.Containers() {
		cs := ContainerSpec{
			Name:      ct.Name,
			Image:     ct.Image,
			Command:   slices.Clone(ct.Command),
			Args:      slices.Clone(ct.Args),
			Env:       maps.Clone(ct.Env),
			Resources: ct.Resources,
		}
		for _, p := range ct.Ports {
			p.Protocol = cmp.Or(p.Protocol, ProtocolTCP)
			cs.Ports = append(cs.Ports, p)
		}
		if hc := ct.HealthCheck; hc != nil {
			cs.HealthCheck = &HealthCheckConfig{
				Command:     slices.Clone(hc.Command),
				HTTP:        hc.HTTP,
				TCP:         hc.TCP,
				Interval:    parseDuration(hc.Interval, DefaultHealthInterval),
				Timeout:     parseDuration(hc.Timeout, DefaultHealthTimeout),
				Retries:     cmp.Or(hc.Retries, DefaultHealthRetries),
				StartPeriod: parseDuration(hc.StartPeriod, 0),
			}
			if hc.HTTP != nil && hc.HTTP.Path == "" {
				cs.HealthCheck.HTTP = &HTTPProbe{Path: "/", Port: hc.HTTP.Port}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(ct.Secrets)) {
			w.Secrets = append(w.Secrets, SecretReference{Container: ct.Name, Name: k, Value: NewSecretValue(ct.Secrets[k])})
		}
		w.Resources.CPUMillicores += ct.Resources.CPUMillicores
		w.Resources.MemoryMiB += ct.Resources.MemoryMiB
		w.Containers = append(w.Containers, cs)
	}
	w.Networking = c.Networking
	return w
}

func parseDuration(s string, def time.Duration) time.Duration {
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return def
	}
	return d
}
