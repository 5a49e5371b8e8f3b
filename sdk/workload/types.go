package workload

import (
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
)

// Workload is the portable part of a tenant's compute spec: its containers,
// their secrets, the resources they ask for and how they are reached.
type Workload struct {
	// Containers are the workload's containers; the first is the main one.
	Containers []ContainerSpec `json:"containers"`
	// Resources is the sum of the containers' resource requests.
	Resources ResourceRequirements `json:"resources"`
	// Networking says how the workload is reached.
	Networking NetworkConfig `json:"networking"`
	// Secrets are the secret environment values of every container.
	Secrets []SecretReference `json:"secrets,omitempty"`
}

// Clone returns a deep copy of w.
func (w Workload) Clone() Workload {
	out := w
	out.Containers = make([]ContainerSpec, len(w.Containers))
	for i, c := range w.Containers {
		out.Containers[i] = c.clone()
	}
	if w.Containers == nil {
		out.Containers = nil
	}
	out.Secrets = slices.Clone(w.Secrets)
	return out
}

// ContainerSpec is one container of a workload.
type ContainerSpec struct {
	Name        string               `json:"name"`
	Image       string               `json:"image"`
	Command     []string             `json:"command,omitempty"`
	Args        []string             `json:"args,omitempty"`
	Env         map[string]string    `json:"env,omitempty"`
	Ports       []PortMapping        `json:"ports,omitempty"`
	HealthCheck *HealthCheckConfig   `json:"health_check,omitempty"`
	Resources   ResourceRequirements `json:"resources"`
}

func (c ContainerSpec) clone() ContainerSpec {
	c.Command = slices.Clone(c.Command)
	c.Args = slices.Clone(c.Args)
	c.Env = maps.Clone(c.Env)
	c.Ports = slices.Clone(c.Ports)
	if c.HealthCheck != nil {
		hc := *c.HealthCheck
		hc.Command = slices.Clone(hc.Command)
		if hc.HTTP != nil {
			http := *hc.HTTP
			hc.HTTP = &http
		}
		if hc.TCP != nil {
			tcp := *hc.TCP
			hc.TCP = &tcp
		}
		c.HealthCheck = &hc
	}
	return c
}

// Protocol is a transport protocol of a published port.
type Protocol string

// Protocols a port may use.
const (
	ProtocolTCP Protocol = "tcp"
	ProtocolUDP Protocol = "udp"
)

// PortMapping publishes a container port.
type PortMapping struct {
	// Name optionally labels the port ("http").
	Name string `json:"name,omitempty"`
	// ContainerPort is the port the process listens on.
	ContainerPort int `json:"container_port"`
	// HostPort is the port to publish on; 0 lets the platform choose.
	HostPort int `json:"host_port,omitempty"`
	// Protocol is tcp or udp.
	Protocol Protocol `json:"protocol"`
}

// HealthCheckConfig says how a container's health is probed. Exactly one of
// Command, HTTP and TCP is set.
type HealthCheckConfig struct {
	// Command is run inside the container; exit status 0 is healthy.
	Command []string `json:"command,omitempty"`
	// HTTP probes a path on a container port; a 2xx or 3xx answer is healthy.
	HTTP *HTTPProbe `json:"http,omitempty"`
	// TCP probes that a container port accepts connections.
	TCP *TCPProbe `json:"tcp,omitempty"`

	Interval    time.Duration `json:"interval"`
	Timeout     time.Duration `json:"timeout"`
	Retries     int           `json:"retries"`
	StartPeriod time.Duration `json:"start_period"`
}

// HTTPProbe is an HTTP GET health probe.
type HTTPProbe struct {
	Path string `json:"path"`
	Port int    `json:"port"`
}

// TCPProbe is a TCP connect health probe.
type TCPProbe struct {
	Port int `json:"port"`
}

// ResourceRequirements are CPU and memory limits; zero means the platform's
// default.
type ResourceRequirements struct {
	// CPUMillicores is thousandths of a CPU core (500 is half a core).
	CPUMillicores int64 `json:"cpu_millicores,omitempty"`
	// MemoryMiB is memory in mebibytes.
	MemoryMiB int64 `json:"memory_mib,omitempty"`
}

// NetworkConfig says how a tenant's workload is reached.
type NetworkConfig struct {
	// Public asks for published ports to be reachable from outside the host or
	// cluster (all interfaces, a public IP, a load balancer), where the
	// provider's operator allows it. By default they are reachable only
	// locally or inside the platform.
	Public bool `json:"public,omitempty"`
}

// SecretReference is a secret environment value of one container.
type SecretReference struct {
	// Container is the name of the container the value is given to.
	Container string `json:"container"`
	// Name is the environment variable name.
	Name string `json:"name"`
	// Value is the secret itself; it prints and marshals as redacted.
	Value SecretValue `json:"value"`
}

// RedactedValue replaces secret values in logs and API responses. It is
// wire.RedactedValue, under the name the providers and this package's
// users give it.
const RedactedValue = wire.RedactedValue

// SecretValue holds a secret string. Every way of printing, logging or
// marshalling it yields RedactedValue; Reveal returns the secret to the code
// that hands it to the platform.
type SecretValue struct{ s string }

// NewSecretValue wraps s.
func NewSecretValue(s string) SecretValue { return SecretValue{s: s} }

// Reveal returns the secret.
func (v SecretValue) Reveal() string { return v.s }

// String returns RedactedValue.
func (v SecretValue) String() string { return RedactedValue }

// GoString returns RedactedValue, for %#v.
func (v SecretValue) GoString() string { return RedactedValue }

// LogValue returns RedactedValue, for log/slog.
func (v SecretValue) LogValue() slog.Value { return slog.StringValue(RedactedValue) }

// MarshalJSON returns RedactedValue as a JSON string.
func (v SecretValue) MarshalJSON() ([]byte, error) { return json.Marshal(RedactedValue) }
