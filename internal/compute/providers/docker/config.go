package docker

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/distribution/reference"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "docker"

// PullPolicy says when an image is pulled.
type PullPolicy string

// Pull policies.
const (
	// PullIfNotPresent pulls an image only when the Engine does not have it.
	PullIfNotPresent PullPolicy = "if-not-present"
	// PullAlways pulls on every create; a failed pull falls back to the local
	// image when there is one.
	PullAlways PullPolicy = "always"
	// PullNever uses local images only.
	PullNever PullPolicy = "never"
)

// Defaults of Settings.
const (
	DefaultLabelPrefix = "landlord"
	DefaultHostIP      = "127.0.0.1"
	DefaultStopTimeout = 10 * time.Second
)

// Settings are the provider's own keys in its configuration block. Their
// zero values mean the documented defaults.
type Settings struct {
	// Host is the Engine address ("unix:///var/run/docker.sock",
	// "tcp://host:2376"); empty means DOCKER_HOST or the default socket.
	Host string `json:"host"`
	// NetworkName is a network every tenant joins; empty means one
	// user-defined bridge network per tenant, which isolates tenants. A named
	// network is created when missing and never removed.
	NetworkName string `json:"network_name"`
	// NetworkDriver is the Engine's network driver of the networks the
	// provider creates, a tenant's own or a missing NetworkName; default
	// "bridge". An existing NetworkName network keeps its driver.
	NetworkDriver string `json:"network_driver"`
	// AddressPool, if set, is the range the networks the provider creates
	// take their subnets from, instead of the Engine's default address
	// pools, which every program on the Engine shares (see AddressPool).
	AddressPool *AddressPool `json:"address_pool"`
	// LabelPrefix prefixes resource names and label keys; default "landlord".
	LabelPrefix string `json:"label_prefix"`
	// HostIP is the address published ports bind to; default 127.0.0.1.
	// Tenants with networking.public bind to PublicHostIP instead.
	HostIP string `json:"host_ip"`
	// PublicHostIP is the address published ports of tenants with
	// networking.public bind to; default 0.0.0.0.
	PublicHostIP string `json:"public_host_ip"`
	// PullPolicy is the default pull policy; default if-not-present. A
	// tenant may override it with "pull_policy".
	PullPolicy PullPolicy `json:"pull_policy"`
	// StopTimeout is the grace period between SIGTERM and SIGKILL when a
	// container is stopped; default 10s.
	StopTimeout workload.Duration `json:"stop_timeout"`
	// AllowPrivileged lets tenants ask for "privileged": true.
	AllowPrivileged bool `json:"allow_privileged"`
	// AllowHostNetwork lets tenants ask for "host_network": true.
	AllowHostNetwork bool `json:"allow_host_network"`
	// AllowBindMounts lets tenants mount host paths ("binds").
	AllowBindMounts bool `json:"allow_bind_mounts"`
	// AllowDockerSocket lets tenants mount the Docker socket, which gives
	// them the host; it needs AllowBindMounts too.
	AllowDockerSocket bool `json:"allow_docker_socket"`
}

func (s *Settings) applyDefaults() {
	if s.LabelPrefix == "" {
		s.LabelPrefix = DefaultLabelPrefix
	}
	if s.NetworkDriver == "" {
		s.NetworkDriver = "bridge"
	}
	if s.HostIP == "" {
		s.HostIP = DefaultHostIP
	}
	if s.PublicHostIP == "" {
		s.PublicHostIP = "0.0.0.0"
	}
	if s.PullPolicy == "" {
		s.PullPolicy = PullIfNotPresent
	}
	if s.StopTimeout == 0 {
		s.StopTimeout = workload.Duration(DefaultStopTimeout)
	}
	if s.AddressPool != nil && s.AddressPool.Size == 0 {
		s.AddressPool.Size = DefaultAddressPoolSize
	}
}

func (s *Settings) check() error {
	var errs violation.List
	for key, ip := range map[string]string{"/host_ip": s.HostIP, "/public_host_ip": s.PublicHostIP} {
		if _, err := netip.ParseAddr(ip); err != nil {
			errs.Add(key, "%q is not an IP address", ip)
		}
	}
	if !validPullPolicy(s.PullPolicy) {
		errs.Add("/pull_policy", "%q is not if-not-present, always or never", s.PullPolicy)
	}
	if !labelPrefix.MatchString(s.LabelPrefix) {
		errs.Add("/label_prefix", "%q is not a lowercase name such as landlord", s.LabelPrefix)
	}
	if s.AddressPool != nil {
		s.AddressPool.check("/address_pool", errs.Add)
	}
	if err := errs.Err(provider.ErrInvalidSpec); err != nil {
		return fmt.Errorf("compute.%s: %w", Name, err)
	}
	return nil
}

func validPullPolicy(p PullPolicy) bool {
	return p == PullIfNotPresent || p == PullAlways || p == PullNever
}

// tenantOptions are the Docker-specific fields of a tenant config.
type tenantOptions struct {
	PullPolicy  PullPolicy `json:"pull_policy,omitempty"`
	Privileged  bool       `json:"privileged,omitempty"`
	HostNetwork bool       `json:"host_network,omitempty"`
	Binds       []string   `json:"binds,omitempty"`
}

// tenantProperties are the schemas of tenantOptions' fields.
var tenantProperties = map[string]json.RawMessage{
	"pull_policy":  json.RawMessage(`{"enum": ["if-not-present", "always", "never"], "description": "When to pull images; default the operator's pull_policy (if-not-present)."}`),
	"privileged":   json.RawMessage(`{"type": "boolean", "description": "Run the containers privileged; refused unless the operator sets allow_privileged."}`),
	"host_network": json.RawMessage(`{"type": "boolean", "description": "Use the host's network stack; refused unless the operator sets allow_host_network."}`),
	"binds": json.RawMessage(`{"type": "array", "maxItems": 32, "items": {"type": "string", "pattern": "^[^:]+:/[^:]*(:(ro|rw))?$"},
	  "description": "Host bind mounts host-path:container-path[:ro]; refused unless the operator sets allow_bind_mounts."}`),
}

func configSchema() (json.RawMessage, error) {
	return workload.Schema(Name, tenantProperties)
}

// optionsOf returns the Docker-specific fields of a resolved spec (see
// DecodeConfig); a spec built without a config has none.
func optionsOf(spec *provider.TenantComputeSpec) tenantOptions {
	o, _ := spec.Options.(tenantOptions)
	return o
}

// checkOptions applies the operator's policy to a tenant's options.
func (s *Settings) checkOptions(o tenantOptions, errs *violation.List) {
	if o.PullPolicy != "" && !validPullPolicy(o.PullPolicy) {
		errs.Add("/pull_policy", "%q is not if-not-present, always or never", o.PullPolicy)
	}
	if o.Privileged && !s.AllowPrivileged {
		errs.Add("/privileged", "privileged containers are not allowed by the operator (allow_privileged)")
	}
	if o.HostNetwork && !s.AllowHostNetwork {
		errs.Add("/host_network", "host networking is not allowed by the operator (allow_host_network)")
	}
	for i, b := range o.Binds {
		at := fmt.Sprintf("/binds/%d", i)
		if !s.AllowBindMounts {
			errs.Add(at, "host bind mounts are not allowed by the operator (allow_bind_mounts)")
			continue
		}
		src, _, _ := strings.Cut(b, ":")
		if strings.Contains(src, "docker.sock") && !s.AllowDockerSocket {
			errs.Add(at, "mounting the Docker socket gives the host away; not allowed by the operator (allow_docker_socket)")
		}
	}
}

// checkImage reports a malformed image reference.
func checkImage(at, image string, errs *violation.List) {
	if image == "" {
		return
	}
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		errs.Add(at, "%q is not an image reference such as ghcr.io/example/app:1.4: %v", image, err)
	}
}
