package compute

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"time"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)

// DefaultContainerName names the main container when the config does not.
const DefaultContainerName = "app"

//go:embed workload.schema.json
var workloadFragment []byte

// WorkloadSchema returns the config schema of a provider that runs container
// workloads: the shared container fields at the top level (the main
// container), "sidecars" (more containers, each with a name) and
// "networking", plus the provider's own top-level properties, each given as a
// JSON Schema. The schema is strict: unknown fields are rejected, except
// names starting with "x-", which are left for extensions. Provider
// properties may refer to the shared definitions ("#/$defs/duration").
func WorkloadSchema(title string, properties map[string]json.RawMessage) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(workloadFragment, &doc); err != nil {
		return nil, fmt.Errorf("compute: workload schema: %w", err)
	}
	defs := doc["$defs"].(map[string]any)
	container := defs["container"].(map[string]any)
	props := maps.Clone(container["properties"].(map[string]any))
	props["sidecars"] = map[string]any{
		"type":        "array",
		"maxItems":    16,
		"items":       map[string]any{"$ref": "#/$defs/container", "required": []string{"name", "image"}},
		"description": "More containers that run beside the main one and reach it by name.",
	}
	props["networking"] = map[string]any{"$ref": "#/$defs/networking"}
	for name, raw := range properties {
		if _, taken := props[name]; taken {
			return nil, fmt.Errorf("compute: workload schema: provider property %q is a shared workload field", name)
		}
		var sub any
		if err := json.Unmarshal(raw, &sub); err != nil {
			return nil, fmt.Errorf("compute: workload schema: property %q: %w", name, err)
		}
		props[name] = sub
	}
	delete(doc, "$comment")
	doc["$id"] = "https://landlord.dev/schemas/compute/" + title + ".json"
	doc["title"] = title + " compute_config"
	doc["type"] = "object"
	doc["properties"] = props
	doc["required"] = []string{"image"}
	doc["patternProperties"] = map[string]any{"^x-": true}
	doc["additionalProperties"] = false
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("compute: workload schema: %w", err)
	}
	if _, err := CompileSchema(out); err != nil {
		return nil, fmt.Errorf("compute: workload schema for %s: %w", title, err)
	}
	return out, nil
}

// Workload is the shared part of a container workload config, decoded. Fields
// a provider adds are ignored here.
type Workload struct {
	Container
	Sidecars   []Container   `json:"sidecars,omitempty"`
	Networking NetworkConfig `json:"networking"`
}

// Container is one container of a Workload, as configured.
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

// Health check defaults, as the schema documents them.
const (
	DefaultHealthInterval = 10 * time.Second
	DefaultHealthTimeout  = 5 * time.Second
	DefaultHealthRetries  = 3
)

// DecodeWorkload reads the shared workload fields of a config that has
// passed its schema; fields it does not know are ignored.
func DecodeWorkload(config json.RawMessage) (*Workload, error) {
	var w Workload
	if err := json.Unmarshal(config, &w); err != nil {
		return nil, Invalid("", "cannot read workload config: %v", err)
	}
	if w.Name == "" {
		w.Name = DefaultContainerName
	}
	return &w, nil
}

// ValidateWorkloadConfig checks the rules of a workload config that its
// schema cannot express: unique container names, no variable both in env and
// secrets, no host port published twice, exactly one health probe, durations
// that parse. Providers that use WorkloadSchema call it from ValidateConfig.
func ValidateWorkloadConfig(config json.RawMessage) error {
	w, err := DecodeWorkload(config)
	if err != nil {
		return err
	}
	return w.Check()
}

// Check reports every rule the workload breaks, as a *ValidationError.
func (w *Workload) Check() error {
	errs := &ValidationError{}
	names := map[string]string{}
	hostPorts := map[string]string{}
	for i, c := range w.containers() {
		at := ""
		if i > 0 {
			at = fmt.Sprintf("/sidecars/%d", i-1)
		}
		if prev, dup := names[c.Name]; dup {
			errs.Add(at+"/name", "container name %q is already used at %s", c.Name, or(prev, "the top level"))
		} else {
			names[c.Name] = at
		}
		for _, k := range sortedKeys(c.Env) {
			if !envName.MatchString(k) {
				errs.Add(at+"/env/"+pointerEscape(k), "is not a variable name: use letters, digits and _, not starting with a digit")
			}
		}
		for _, k := range sortedKeys(c.Secrets) {
			if !envName.MatchString(k) {
				errs.Add(at+"/secrets/"+pointerEscape(k), "is not a variable name: use letters, digits and _, not starting with a digit")
			}
			if _, both := c.Env[k]; both {
				errs.Add(at+"/secrets/"+pointerEscape(k), "%s is also set in env; set it in one place", k)
			}
		}
		containerPorts := map[string]bool{}
		for j, p := range c.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = ProtocolTCP
			}
			key := fmt.Sprintf("%d/%s", p.ContainerPort, proto)
			if containerPorts[key] {
				errs.Add(fmt.Sprintf("%s/ports/%d/container_port", at, j), "port %s is listed twice", key)
			}
			containerPorts[key] = true
			if p.HostPort == 0 {
				continue
			}
			hostKey := fmt.Sprintf("%d/%s", p.HostPort, proto)
			where := fmt.Sprintf("%s/ports/%d/host_port", at, j)
			if prev, dup := hostPorts[hostKey]; dup {
				errs.Add(where, "host port %s is already published at %s", hostKey, prev)
			} else {
				hostPorts[hostKey] = where
			}
		}
		if hc := c.HealthCheck; hc != nil {
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
	return errs.Err()
}

// containers returns the main container followed by the sidecars.
func (w *Workload) containers() []Container {
	return append([]Container{w.Container}, w.Sidecars...)
}

// Apply fills spec's containers, secrets, resources and networking from the
// workload. The workload must have passed Check.
func (w *Workload) Apply(spec *TenantComputeSpec) {
	spec.Containers = nil
	spec.Secrets = nil
	spec.Resources = ResourceRequirements{}
	for _, c := range w.containers() {
		cs := ContainerSpec{
			Name:      c.Name,
			Image:     c.Image,
			Command:   slices.Clone(c.Command),
			Args:      slices.Clone(c.Args),
			Env:       maps.Clone(c.Env),
			Resources: c.Resources,
		}
		for _, p := range c.Ports {
			if p.Protocol == "" {
				p.Protocol = ProtocolTCP
			}
			cs.Ports = append(cs.Ports, p)
		}
		if hc := c.HealthCheck; hc != nil {
			cs.HealthCheck = &HealthCheckConfig{
				Command:     slices.Clone(hc.Command),
				HTTP:        hc.HTTP,
				TCP:         hc.TCP,
				Interval:    parseDuration(hc.Interval, DefaultHealthInterval),
				Timeout:     parseDuration(hc.Timeout, DefaultHealthTimeout),
				Retries:     hc.Retries,
				StartPeriod: parseDuration(hc.StartPeriod, 0),
			}
			if cs.HealthCheck.Retries == 0 {
				cs.HealthCheck.Retries = DefaultHealthRetries
			}
			if cs.HealthCheck.HTTP != nil && cs.HealthCheck.HTTP.Path == "" {
				cs.HealthCheck.HTTP = &HTTPProbe{Path: "/", Port: hc.HTTP.Port}
			}
		}
		for _, k := range sortedKeys(c.Secrets) {
			spec.Secrets = append(spec.Secrets, SecretReference{Container: c.Name, Name: k, Value: NewSecretValue(c.Secrets[k])})
		}
		spec.Resources.CPUMillicores += c.Resources.CPUMillicores
		spec.Resources.MemoryMiB += c.Resources.MemoryMiB
		spec.Containers = append(spec.Containers, cs)
	}
	spec.Networking = w.Networking
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
