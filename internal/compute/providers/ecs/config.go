package ecs

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "ecs"

// Defaults of the tenant options.
const (
	DefaultServiceNamePrefix     = "landlord-"
	DefaultDesiredCount          = 1
	DefaultMinimumHealthyPercent = 100
	DefaultMaximumPercent        = 200
)

// Settings are the provider's own keys in its configuration block, which
// tenants cannot override. Every other key of the block is a tenant
// default.
type Settings struct {
	// DrainWait bounds how long a Provision waits for an earlier service of
	// the same name to finish draining before it gives up for now (a
	// retryable error); default 1m.
	DrainWait workload.Duration `json:"drain_wait"`
}

// tenantOptions are the ECS fields of a tenant config, the seed's keys and
// the ones this provider adds.
type tenantOptions struct {
	ClusterARN               string             `json:"cluster_arn,omitempty"`
	TaskDefinitionARN        string             `json:"task_definition_arn,omitempty"`
	DesiredCount             *taskCount         `json:"desired_count,omitempty"`
	LaunchType               string             `json:"launch_type,omitempty"`
	PlatformVersion          string             `json:"platform_version,omitempty"`
	CapacityProviderStrategy []capacityProvider `json:"capacity_provider_strategy,omitempty"`
	Subnets                  []string           `json:"subnets,omitempty"`
	SecurityGroups           []string           `json:"security_groups,omitempty"`
	AssignPublicIP           bool               `json:"assign_public_ip,omitempty"`
	ServiceNamePrefix        *string            `json:"service_name_prefix,omitempty"`
	Region                   string             `json:"region,omitempty"`
	AssumeRole               *assumeRole        `json:"assume_role,omitempty"`
	Endpoint                 string             `json:"endpoint,omitempty"`
	Tags                     map[string]string  `json:"tags,omitempty"`
	EnableExecuteCommand     bool               `json:"enable_execute_command,omitempty"`
	HealthCheckGracePeriod   workload.Duration  `json:"health_check_grace_period,omitempty"`
	Deployment               deployment         `json:"deployment"`
	LoadBalancers            []loadBalancer     `json:"load_balancers,omitempty"`
	ServiceRegistries        []serviceRegistry  `json:"service_registries,omitempty"`
	ExecutionRoleARN         string             `json:"execution_role_arn,omitempty"`
	TaskRoleARN              string             `json:"task_role_arn,omitempty"`
	LogConfiguration         *logConfiguration  `json:"log_configuration,omitempty"`
}

// logConfiguration is the log driver of every container of the tenant's
// task definition, and its options; secret options are references (SSM or
// Secrets Manager ARNs), as secrets are.
type logConfiguration struct {
	Driver        string            `json:"driver"`
	Options       map[string]string `json:"options,omitempty"`
	SecretOptions map[string]string `json:"secret_options,omitempty"`
}

type capacityProvider struct {
	CapacityProvider string `json:"capacity_provider"`
	Weight           int32  `json:"weight,omitempty"`
	Base             int32  `json:"base,omitempty"`
}

// assumeRole is a role landlord assumes, through STS, to call ECS.
type assumeRole struct {
	RoleARN     string `json:"role_arn"`
	ExternalID  string `json:"external_id,omitempty"`
	SessionName string `json:"session_name,omitempty"`
}

type deployment struct {
	MinimumHealthyPercent *int32 `json:"minimum_healthy_percent,omitempty"`
	MaximumPercent        *int32 `json:"maximum_percent,omitempty"`
	CircuitBreaker        *bool  `json:"circuit_breaker,omitempty"`
	Rollback              *bool  `json:"rollback,omitempty"`
}

type loadBalancer struct {
	TargetGroupARN   string `json:"target_group_arn,omitempty"`
	LoadBalancerName string `json:"load_balancer_name,omitempty"`
	ContainerName    string `json:"container_name"`
	ContainerPort    int32  `json:"container_port"`
}

type serviceRegistry struct {
	RegistryARN   string `json:"registry_arn"`
	Port          int32  `json:"port,omitempty"`
	ContainerName string `json:"container_name,omitempty"`
	ContainerPort int32  `json:"container_port,omitempty"`
}

// prefix is the service name prefix, default DefaultServiceNamePrefix.
func (o *tenantOptions) prefix() string {
	if o.ServiceNamePrefix == nil {
		return DefaultServiceNamePrefix
	}
	return *o.ServiceNamePrefix
}

func (o *tenantOptions) desiredCount() taskCount {
	if o.DesiredCount == nil {
		return taskCount{fixed: DefaultDesiredCount}
	}
	return *o.DesiredCount
}

// region is the region asked for, else the cluster's.
func (o *tenantOptions) region() string {
	if o.Region != "" {
		return o.Region
	}
	if a, err := parseARN(o.ClusterARN); err == nil {
		return a.Region
	}
	return ""
}

// fargate reports whether the tenant's tasks run on Fargate: the launch
// type says so, or every capacity provider is FARGATE or FARGATE_SPOT.
func (o *tenantOptions) fargate() bool {
	if o.LaunchType != "" {
		return o.LaunchType == "FARGATE"
	}
	if len(o.CapacityProviderStrategy) == 0 {
		return false
	}
	for _, c := range o.CapacityProviderStrategy {
		if c.CapacityProvider != "FARGATE" && c.CapacityProvider != "FARGATE_SPOT" {
			return false
		}
	}
	return true
}

// awsvpc reports whether tasks get their own network interface: always on
// Fargate, and wherever subnets are given.
func (o *tenantOptions) awsvpc() bool { return o.fargate() || len(o.Subnets) > 0 }

const arnPattern = `^arn:aws[a-z-]*:`

// roleARNPattern is an IAM role ARN.
const roleARNPattern = arnPattern + `iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$`

// tenantProperties are the schemas of tenantOptions' fields.
var tenantProperties = map[string]string{
	"cluster_arn": `{"type": "string", "pattern": "` + arnPattern + `ecs:[a-z0-9-]+:[0-9]{12}:cluster/[A-Za-z0-9_-]{1,255}$",
	  "description": "ARN of the ECS cluster the tenant's service runs in."}`,
	"task_definition_arn": `{"type": "string", "pattern": "` + arnPattern + `ecs:[a-z0-9-]+:[0-9]{12}:task-definition/[A-Za-z0-9_-]{1,255}:[0-9]+$",
	  "description": "A task definition revision. Without an image in the config the service runs it as it is; with one it is the base (roles, network mode, log configuration, volumes) of the tenant's own task definition."}`,
	"desired_count": desiredCountSchema,
	"platform_version": `{"type": "string", "pattern": "^(LATEST|[0-9]+\\.[0-9]+\\.[0-9]+)$",
	  "description": "The Fargate platform version the tasks run on (LATEST or 1.4.0); leave it out for ECS's default, LATEST. When given, landlord sets it and puts it back if it is changed by hand."}`,
	"launch_type": `{"enum": ["FARGATE", "EC2", "EXTERNAL"], "description": "Where tasks run; leave it out to use capacity_provider_strategy or the cluster's default."}`,
	"capacity_provider_strategy": `{"type": "array", "maxItems": 20, "items": {"type": "object",
	  "properties": {"capacity_provider": {"type": "string", "minLength": 1, "maxLength": 255}, "weight": {"type": "integer", "minimum": 0, "maximum": 1000}, "base": {"type": "integer", "minimum": 0, "maximum": 100000}},
	  "required": ["capacity_provider"], "additionalProperties": false},
	  "description": "Capacity providers in place of launch_type (FARGATE, FARGATE_SPOT or the cluster's own)."}`,
	"subnets":          `{"type": "array", "maxItems": 16, "items": {"type": "string", "pattern": "^subnet-[0-9a-f]{1,17}$"}, "description": "Subnets of the tasks' network interfaces (awsvpc); required on Fargate."}`,
	"security_groups":  `{"type": "array", "maxItems": 5, "items": {"type": "string", "pattern": "^sg-[0-9a-f]{1,17}$"}, "description": "Security groups of the tasks' network interfaces."}`,
	"assign_public_ip": `{"type": "boolean", "default": false, "description": "Give each task a public IP (awsvpc)."}`,
	"service_name_prefix": `{"type": "string", "pattern": "^[A-Za-z0-9_-]{0,200}$", "default": "landlord-",
	  "description": "The service is named <service_name_prefix><tenant name>; the task definition family too."}`,
	"region": `{"type": "string", "pattern": "^[a-z]{2}(-[a-z]+)+-[0-9]+$", "description": "AWS region; default the cluster ARN's."}`,
	"assume_role": `{"type": "object", "properties": {
	    "role_arn": {"type": "string", "pattern": "` + roleARNPattern + `"},
	    "external_id": {"type": "string", "minLength": 2, "maxLength": 1224, "pattern": "^[A-Za-z0-9+=,.@:/-]+$"},
	    "session_name": {"type": "string", "pattern": "^[A-Za-z0-9+=,.@_-]{2,64}$"}},
	  "required": ["role_arn"], "additionalProperties": false,
	  "description": "A role landlord assumes (STS AssumeRole) to call ECS, for clusters in other accounts."}`,
	"endpoint": `{"type": "string", "pattern": "^https?://[^\\s]+$", "description": "ECS endpoint URL in place of the region's, for VPC endpoints and tests."}`,
	"tags": `{"type": "object",
	  "additionalProperties": {"type": "string"}, "description": "Tags of the service, its tasks and task definitions, beside landlord's own five: at most 45, keys of 1 to 128 characters and values of at most 256, of letters, digits, spaces and + - = . _ : / @, keys not starting with aws: or landlord:."}`,
	"enable_execute_command":    `{"type": "boolean", "default": false, "description": "Allow ECS Exec into the tasks."}`,
	"health_check_grace_period": `{"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$", "description": "How long ECS ignores failing health checks of a new task, e.g. 60s."}`,
	"deployment": `{"type": "object", "properties": {
	    "minimum_healthy_percent": {"type": "integer", "minimum": 0, "maximum": 100, "default": 100},
	    "maximum_percent": {"type": "integer", "minimum": 100, "maximum": 200, "default": 200},
	    "circuit_breaker": {"type": "boolean", "default": true, "description": "Stop a rollout whose tasks keep failing to start."},
	    "rollback": {"type": "boolean", "default": true, "description": "Roll back to the last completed deployment when the circuit breaker stops a rollout."}},
	  "additionalProperties": false, "description": "How the service rolls out a change."}`,
	"load_balancers": `{"type": "array", "maxItems": 5, "items": {"type": "object", "properties": {
	    "target_group_arn": {"type": "string", "pattern": "` + arnPattern + `elasticloadbalancing:"},
	    "load_balancer_name": {"type": "string", "minLength": 1, "maxLength": 32},
	    "container_name": {"type": "string", "minLength": 1},
	    "container_port": {"type": "integer", "minimum": 1, "maximum": 65535}},
	  "required": ["container_name", "container_port"], "additionalProperties": false},
	  "description": "Passed to the service as ECS loadBalancers."}`,
	"execution_role_arn": `{"type": "string", "pattern": "` + roleARNPattern + `",
	  "description": "The task execution role: what ECS uses to pull an image from ECR, resolve secrets and send logs to CloudWatch. Required with an ECR image on Fargate, with secrets and with awslogs on Fargate, unless task_definition_arn carries one."}`,
	"task_role_arn": `{"type": "string", "pattern": "` + roleARNPattern + `",
	  "description": "The role the tenant's containers call AWS as."}`,
	"log_configuration": `{"type": "object", "properties": {
	    "driver": {"enum": ["awslogs", "awsfirelens", "splunk", "fluentd", "gelf", "json-file", "journald", "syslog"]},
	    "options": {"type": "object", "maxProperties": 64, "additionalProperties": {"type": "string", "maxLength": 4096}},
	    "secret_options": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string", "writeOnly": true}}},
	  "required": ["driver"], "additionalProperties": false,
	  "description": "The log driver of every container. Left out, a tenant with an execution role logs to CloudWatch (awslogs) in the group /ecs/<service name>, streams prefixed with the tenant's name; an awslogs configuration gets the group, region and stream prefix it leaves out the same way."}`,
	"service_registries": `{"type": "array", "maxItems": 1, "items": {"type": "object", "properties": {
	    "registry_arn": {"type": "string", "pattern": "` + arnPattern + `servicediscovery:"},
	    "port": {"type": "integer", "minimum": 1, "maximum": 65535},
	    "container_name": {"type": "string", "minLength": 1},
	    "container_port": {"type": "integer", "minimum": 1, "maximum": 65535}},
	  "required": ["registry_arn"], "additionalProperties": false},
	  "description": "Passed to the service as ECS serviceRegistries (Cloud Map)."}`,
}

// configSchema is the shared workload schema with the ECS fields, where the
// image is optional: a config without one runs task_definition_arn as it is.
func configSchema() (json.RawMessage, error) {
	props := make(map[string]json.RawMessage, len(tenantProperties))
	for _, k := range slices.Sorted(maps.Keys(tenantProperties)) {
		props[k] = json.RawMessage(tenantProperties[k])
	}
	return workload.SchemaWith(Name, props, workload.SchemaOptions{ImageOptional: true})
}
