package nomad

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "nomad"

// Defaults.
const (
	DefaultAddress   = "http://127.0.0.1:4646"
	DefaultNamespace = "default"
	DefaultJobPrefix = "landlord-"
	// DefaultMHzPerCore converts the portable cpu_millicores into Nomad's
	// MHz: a thousand millicores are this many MHz.
	DefaultMHzPerCore = 1000
	DefaultCount      = 1
)

// Drivers and service providers a tenant may choose.
const (
	DriverDocker  = "docker"
	DriverRawExec = "raw_exec"

	ServiceNomad  = "nomad"
	ServiceConsul = "consul"
)

// Settings are the provider's own keys in its configuration block, which
// tenants cannot override. Every other key of the block is a tenant
// default.
type Settings struct {
	// Address is the Nomad HTTP API; default $NOMAD_ADDR, else
	// DefaultAddress.
	Address string `json:"address"`
	// Region is the region jobs are registered in; default the agent's.
	Region string `json:"region"`
	// Namespace is the namespace tenants' jobs and variables live in;
	// default $NOMAD_NAMESPACE, else "default".
	Namespace string `json:"namespace"`
	// Token is the ACL token landlord uses; default $NOMAD_TOKEN. It is
	// never logged nor shown.
	Token string `json:"token"`
	// CACert, ClientCert and ClientKey are PEM files for TLS to the API;
	// TLSServerName is the name its certificate must carry (e.g.
	// server.global.nomad). Defaults: $NOMAD_CACERT, $NOMAD_CLIENT_CERT,
	// $NOMAD_CLIENT_KEY, $NOMAD_TLS_SERVER_NAME.
	CACert        string `json:"ca_cert"`
	ClientCert    string `json:"client_cert"`
	ClientKey     string `json:"client_key"`
	TLSServerName string `json:"tls_server_name"`
	// JobPrefix is put in front of a tenant's name to make its job ID;
	// default DefaultJobPrefix.
	JobPrefix *string `json:"job_prefix"`
	// AllowRawExec lets tenants choose driver raw_exec, which runs their
	// command on the node itself, unisolated. Off by default.
	AllowRawExec bool `json:"allow_raw_exec"`
	// MHzPerCore converts cpu_millicores into Nomad's MHz; default
	// DefaultMHzPerCore.
	MHzPerCore int `json:"mhz_per_core"`
}

// tenantOptions are the Nomad fields of a tenant config.
type tenantOptions struct {
	Datacenters     []string          `json:"datacenters,omitempty"`
	NodePool        string            `json:"node_pool,omitempty"`
	Driver          string            `json:"driver,omitempty"`
	Count           *groupCount       `json:"count,omitempty"`
	Constraints     []constraint      `json:"constraints,omitempty"`
	Update          *updateStrategy   `json:"update,omitempty"`
	Restart         *restartPolicy    `json:"restart,omitempty"`
	ServiceProvider string            `json:"service_provider,omitempty"`
	Meta            map[string]string `json:"meta,omitempty"`
}

type constraint struct {
	Attribute string `json:"attribute,omitempty"`
	Operator  string `json:"operator,omitempty"`
	Value     string `json:"value,omitempty"`
}

type updateStrategy struct {
	MaxParallel      *int              `json:"max_parallel,omitempty"`
	MinHealthyTime   workload.Duration `json:"min_healthy_time,omitempty"`
	HealthyDeadline  workload.Duration `json:"healthy_deadline,omitempty"`
	ProgressDeadline workload.Duration `json:"progress_deadline,omitempty"`
	AutoRevert       *bool             `json:"auto_revert,omitempty"`
	Canary           *int              `json:"canary,omitempty"`
}

type restartPolicy struct {
	Attempts *int              `json:"attempts,omitempty"`
	Interval workload.Duration `json:"interval,omitempty"`
	Delay    workload.Duration `json:"delay,omitempty"`
	Mode     string            `json:"mode,omitempty"`
}

func (o *tenantOptions) driver() string {
	if o.Driver == "" {
		return DriverDocker
	}
	return o.Driver
}

func (o *tenantOptions) serviceProvider() string {
	if o.ServiceProvider == "" {
		return ServiceNomad
	}
	return o.ServiceProvider
}

// count is the count field: DefaultCount when the config has none.
func (o tenantOptions) count() groupCount {
	if o.Count == nil {
		return groupCount{fixed: DefaultCount}
	}
	return *o.Count
}

const (
	durationPattern = `^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$`
	stringMap       = `{"type": "object", "additionalProperties": {"type": "string", "maxLength": 1024}, "maxProperties": 64`
)

// tenantProperties are the schemas of tenantOptions' fields.
var tenantProperties = map[string]string{
	"datacenters": `{"type": "array", "minItems": 1, "maxItems": 32, "items": {"type": "string", "minLength": 1, "maxLength": 128},
	  "default": ["*"], "description": "Datacenters the job may run in (globs allowed)."}`,
	"node_pool": `{"type": "string", "minLength": 1, "maxLength": 128, "description": "Node pool the job runs in; default Nomad's (default)."}`,
	"driver": `{"enum": ["docker", "raw_exec"], "default": "docker",
	  "description": "Task driver. raw_exec runs command on the node itself, unisolated (image is then only a label), and only when the operator's block sets allow_raw_exec."}`,
	"count": countSchema,
	"constraints": `{"type": "array", "maxItems": 32, "items": {"type": "object", "properties": {
	    "attribute": {"type": "string", "maxLength": 256, "description": "e.g. ${attr.kernel.name} or ${meta.tier}"},
	    "operator": {"enum": ["=", "!=", ">", ">=", "<", "<=", "regexp", "set_contains", "set_contains_any", "version", "semver", "is_set", "is_not_set", "distinct_hosts", "distinct_property"]},
	    "value": {"type": "string", "maxLength": 256}},
	  "additionalProperties": false}, "description": "Placement constraints of the job."}`,
	"update": `{"type": "object", "properties": {
	    "max_parallel": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 1},
	    "min_healthy_time": {"type": "string", "pattern": "` + durationPattern + `", "default": "10s"},
	    "healthy_deadline": {"type": "string", "pattern": "` + durationPattern + `", "default": "5m"},
	    "progress_deadline": {"type": "string", "pattern": "` + durationPattern + `", "default": "10m"},
	    "auto_revert": {"type": "boolean", "default": false, "description": "Roll back to the last stable version when a deployment fails."},
	    "canary": {"type": "integer", "minimum": 0, "maximum": 100, "default": 0, "description": "Canaries placed first; landlord promotes them automatically once healthy."}},
	  "additionalProperties": false, "description": "How a change rolls out (Nomad's update block)."}`,
	"restart": `{"type": "object", "properties": {
	    "attempts": {"type": "integer", "minimum": 0, "maximum": 100, "default": 2},
	    "interval": {"type": "string", "pattern": "` + durationPattern + `", "default": "30m"},
	    "delay": {"type": "string", "pattern": "` + durationPattern + `", "default": "15s"},
	    "mode": {"enum": ["fail", "delay"], "default": "fail"}},
	  "additionalProperties": false, "description": "What Nomad does when a task exits (Nomad's restart block)."}`,
	"service_provider": `{"enum": ["nomad", "consul"], "default": "nomad",
	  "description": "Where the published ports are registered as services, with the health checks: Nomad's built-in service discovery, or Consul (needed for command health checks)."}`,
	"meta": stringMap + `, "propertyNames": {"pattern": "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"}, "description": "Meta of the job (landlord's own keys start with landlord_)."}`,
}

// configSchema is the shared workload schema with the Nomad fields.
func configSchema() (json.RawMessage, error) {
	props := make(map[string]json.RawMessage, len(tenantProperties))
	for _, k := range slices.Sorted(maps.Keys(tenantProperties)) {
		props[k] = json.RawMessage(tenantProperties[k])
	}
	return workload.Schema(Name, props)
}
