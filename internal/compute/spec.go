package compute

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// TenantComputeSpec is the provider-agnostic description of a tenant's
// workload that the Manager hands to a provider. Build it with
// Manager.Resolve; providers treat it as read-only.
type TenantComputeSpec struct {
	// TenantID is the tenant's immutable id. Providers name and label their
	// resources from it so that they can find them again after a restart.
	TenantID string `json:"tenant_id"`
	// TenantName is the tenant's DNS-label name, for readable resource names.
	TenantName string `json:"tenant_name,omitempty"`
	// ProviderType is the name of the provider the spec is meant for.
	ProviderType string `json:"provider_type"`
	// Generation is the tenant's desired-state generation the spec was built
	// from; providers may record it on their resources.
	Generation int64 `json:"generation,omitempty"`
	// Containers are the workload's containers; the first is the main one.
	Containers []ContainerSpec `json:"containers"`
	// Resources is the sum of the containers' resource requests.
	Resources ResourceRequirements `json:"resources"`
	// Networking says how the workload is reached.
	Networking NetworkConfig `json:"networking"`
	// Secrets are the secret environment values of every container.
	Secrets []SecretReference `json:"secrets,omitempty"`
	// ProviderConfig is the tenant's merged compute_config (provider defaults
	// under tenant values, selection key removed). It may hold secrets and
	// must never be logged; use RedactConfig first.
	ProviderConfig json.RawMessage `json:"-"`
}

// LogValue keeps specs out of logs except for identifying, secret-free fields.
func (s *TenantComputeSpec) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("tenant_id", s.TenantID),
		slog.String("provider", s.ProviderType),
		slog.Int64("generation", s.Generation),
		slog.Int("containers", len(s.Containers)),
	)
}

// String is the secret-free form used by fmt.
func (s *TenantComputeSpec) String() string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprintf("tenant %s on %s (generation %d, %d containers)", s.TenantID, s.ProviderType, s.Generation, len(s.Containers))
}

// ContainerSpec is one container of a tenant's workload.
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

// RedactedValue replaces secret values in logs and API responses.
const RedactedValue = "[redacted]"

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
