package kubernetes

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "kubernetes"

// Defaults of the tenant options.
const (
	DefaultNamespacePrefix  = "landlord-"
	DefaultSharedNamespace  = "landlord"
	DefaultClusterDomain    = "cluster.local"
	DefaultReplicas         = 1
	DefaultProgressDeadline = 600 // seconds, the Deployment's own default
	DefaultPullSecretsFrom  = "default"
	// DefaultQPS and DefaultBurst bound landlord's requests to one API
	// server (client-go's own default, 5 a second, would make a thousand
	// tenants wait on landlord rather than on the cluster; the API server's
	// priority and fairness protects it from more).
	DefaultQPS   = 100
	DefaultBurst = 200
)

// Namespace modes.
const (
	PerTenant = "per-tenant"
	Shared    = "shared"
)

// Settings are the provider's own keys in its configuration block, which
// tenants cannot override. Every other key of the block is a tenant
// default.
type Settings struct {
	// Kubeconfig is the path of the kubeconfig file landlord uses. Empty
	// means the in-cluster service account when landlord runs in a Pod,
	// else $KUBECONFIG, else ~/.kube/config. Tenants choose among its
	// contexts (the context key); they cannot name a file.
	Kubeconfig string `json:"kubeconfig"`
	// ClusterDomain is the cluster's DNS domain, for the endpoints of
	// Services; default cluster.local.
	ClusterDomain string `json:"cluster_domain"`
	// PullSecretsNamespace is where the Secrets named by image_pull_secrets
	// are copied from into a tenant's own namespace; default "default".
	PullSecretsNamespace string `json:"pull_secrets_namespace"`
	// QPS and Burst bound the requests landlord makes to each API server;
	// defaults DefaultQPS and DefaultBurst.
	QPS   float32 `json:"qps"`
	Burst int     `json:"burst"`
}

// tenantOptions are the Kubernetes fields of a tenant config.
type tenantOptions struct {
	Context          string            `json:"context,omitempty"`
	NamespaceMode    string            `json:"namespace_mode,omitempty"`
	Namespace        string            `json:"namespace,omitempty"`
	NamespacePrefix  *string           `json:"namespace_prefix,omitempty"`
	Replicas         *replicaCount     `json:"replicas,omitempty"`
	ServiceType      string            `json:"service_type,omitempty"`
	Ingress          *ingress          `json:"ingress,omitempty"`
	ImagePullSecrets []string          `json:"image_pull_secrets,omitempty"`
	ServiceAccount   string            `json:"service_account,omitempty"`
	NodeSelector     map[string]string `json:"node_selector,omitempty"`
	Tolerations      []toleration      `json:"tolerations,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	Annotations      map[string]string `json:"annotations,omitempty"`
	NetworkPolicy    string            `json:"network_policy,omitempty"`
	ResourceQuota    map[string]string `json:"resource_quota,omitempty"`
	ProgressDeadline workload.Duration `json:"progress_deadline,omitempty"`
}

type ingress struct {
	Class string `json:"class,omitempty"`
	// Host is a template: {name} is the tenant's name, {id} its id.
	Host      string            `json:"host"`
	Path      string            `json:"path,omitempty"`
	TLSSecret string            `json:"tls_secret,omitempty"`
	Port      string            `json:"port,omitempty"`
	Annot     map[string]string `json:"annotations,omitempty"`
}

type toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"toleration_seconds,omitempty"`
}

func (o *tenantOptions) mode() string {
	if o.NamespaceMode == "" {
		return PerTenant
	}
	return o.NamespaceMode
}

func (o *tenantOptions) prefix() string {
	if o.NamespacePrefix == nil {
		return DefaultNamespacePrefix
	}
	return *o.NamespacePrefix
}

func (o *tenantOptions) sharedNamespace() string {
	if o.Namespace == "" {
		return DefaultSharedNamespace
	}
	return o.Namespace
}

func (o *tenantOptions) isolated() bool { return o.NetworkPolicy != "none" }

const (
	dnsLabelPattern = `^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`
	stringMap       = `{"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 64`
)

// tenantProperties are the schemas of tenantOptions' fields.
var tenantProperties = map[string]string{
	"context": `{"type": "string", "minLength": 1, "maxLength": 253,
	  "description": "A context of landlord's kubeconfig: the cluster (and identity) the tenant runs on. Default: the kubeconfig's current context."}`,
	"namespace_mode": `{"enum": ["per-tenant", "shared"], "default": "per-tenant",
	  "description": "per-tenant: each tenant gets a namespace of its own (<namespace_prefix><name>) with a quota and a network policy; shared: tenants' objects live side by side in namespace."}`,
	"namespace": `{"type": "string", "pattern": "` + dnsLabelPattern + `", "default": "landlord",
	  "description": "The namespace tenants share in namespace_mode shared; it must exist. Ignored in namespace_mode per-tenant."}`,
	"namespace_prefix": `{"type": "string", "pattern": "^([a-z0-9][-a-z0-9]{0,39})?$", "default": "landlord-",
	  "description": "Prefix of each tenant's namespace in namespace_mode per-tenant."}`,
	"replicas": `{"oneOf": [
	    {"type": "integer", "minimum": 0, "maximum": 1000},
	    {"type": "object", "properties": {
	      "min": {"type": "integer", "minimum": 0, "maximum": 1000},
	      "max": {"type": "integer", "minimum": 0, "maximum": 1000}},
	     "required": ["min", "max"], "additionalProperties": false}],
	  "default": 1,
	  "description": "How many Pods the tenant's Deployment runs: a count landlord keeps (it puts back a Deployment scaled by hand), or {\"min\": N, \"max\": M} when an autoscaler owns the count (a HorizontalPodAutoscaler you create for the Deployment, scaling between N and M): landlord then creates the Deployment with N Pods and afterwards neither sets nor compares replicas, so that it never fights the autoscaler (its server-side apply leaves the field to the autoscaler's manager)."}`,
	"service_type": `{"enum": ["ClusterIP", "NodePort", "LoadBalancer"],
	  "description": "Type of the Service of the published ports (a config without ports has none). Default ClusterIP, or LoadBalancer when networking.public is true."}`,
	"ingress": `{"type": "object", "properties": {
	    "host": {"type": "string", "minLength": 1, "maxLength": 253, "pattern": "^[a-z0-9{}.-]+$", "description": "Host name; {name} stands for the tenant's name and {id} for its id, e.g. {name}.apps.example.com."},
	    "class": {"type": "string", "pattern": "` + dnsLabelPattern + `", "description": "IngressClass name; default the cluster's default class."},
	    "path": {"type": "string", "pattern": "^/", "default": "/"},
	    "tls_secret": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", "description": "Secret holding the certificate for host, in the tenant's namespace."},
	    "port": {"type": "string", "description": "Name of the published port to route to (or its container_port); default the first."},
	    "annotations": ` + stringMap + `}},
	  "required": ["host"], "additionalProperties": false,
	  "description": "An Ingress routing host (and path) to the tenant's Service."}`,
	"image_pull_secrets": `{"type": "array", "maxItems": 16, "items": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"},
	  "description": "Secrets (kubernetes.io/dockerconfigjson) the Pods pull images with. In namespace_mode per-tenant they are copied from the namespace the block's pull_secrets_namespace names."}`,
	"service_account": `{"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", "description": "Service account the Pods run as; default the namespace's default."}`,
	"node_selector":   stringMap + `, "description": "Node labels the Pods must be scheduled on."}`,
	"tolerations": `{"type": "array", "maxItems": 32, "items": {"type": "object", "properties": {
	    "key": {"type": "string", "maxLength": 316}, "operator": {"enum": ["Exists", "Equal"]}, "value": {"type": "string", "maxLength": 63},
	    "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]}, "toleration_seconds": {"type": "integer", "minimum": 0}},
	  "additionalProperties": false}, "description": "Taints the Pods tolerate."}`,
	"labels":      stringMap + `, "description": "Labels added to every object landlord creates for the tenant (and its Pods)."}`,
	"annotations": stringMap + `, "description": "Annotations added to every object landlord creates for the tenant (and its Pods)."}`,
	"network_policy": `{"enum": ["isolated", "none"], "default": "isolated",
	  "description": "isolated: a NetworkPolicy lets the tenant's Pods be reached from its own Pods and from namespaces that are no tenant's (ingress controllers, monitoring), not from other tenants; with networking.public from anywhere. none: no policy."}`,
	"resource_quota": `{"type": "object", "maxProperties": 32, "additionalProperties": {"type": "string"},
	  "description": "A ResourceQuota's hard limits for the tenant's namespace (namespace_mode per-tenant), e.g. {\"requests.cpu\": \"2\", \"limits.memory\": \"4Gi\", \"pods\": \"10\"}."}`,
	"progress_deadline": `{"type": "string", "pattern": "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$", "default": "10m",
	  "description": "How long a rollout may make no progress before the Deployment reports it failed (progressDeadlineSeconds)."}`,
}

// configSchema is the shared workload schema with the Kubernetes fields.
func configSchema() (json.RawMessage, error) {
	props := make(map[string]json.RawMessage, len(tenantProperties))
	for _, k := range slices.Sorted(maps.Keys(tenantProperties)) {
		props[k] = json.RawMessage(tenantProperties[k])
	}
	return workload.Schema(Name, props)
}
