package kubernetes

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// DecodeConfig reads the Kubernetes fields of a config, which Provision and
// Update find again in the spec's Options, and checks what the schema
// cannot: the context against the kubeconfig, label and annotation keys
// and values, quantities, what each namespace mode allows, the ingress
// host and port, and port names the Service can carry.
func (p *Provider) DecodeConfig(config json.RawMessage, spec *provider.TenantComputeSpec) error {
	var o tenantOptions
	if err := provider.DecodeOptions(config, &o, "kubernetes options"); err != nil {
		return err
	}
	var errs violation.List
	if err := p.clients.checkContext(o.Context); err != nil && p.clients.missing == nil {
		errs.Add("/context", "%v", err)
	}
	checkMap(&errs, "/labels", o.Labels, validation.IsQualifiedName, validation.IsValidLabelValue)
	checkMap(&errs, "/node_selector", o.NodeSelector, validation.IsQualifiedName, validation.IsValidLabelValue)
	checkMap(&errs, "/annotations", o.Annotations, validation.IsQualifiedName, nil)
	for _, k := range slices.Sorted(maps.Keys(o.Labels)) {
		if k == labelManagedBy || k == labelInstance || strings.HasPrefix(k, "landlord.dev/") {
			errs.Add("/labels/"+violation.Escape(k), "is landlord's own label")
		}
	}
	for k := range o.Annotations {
		if strings.HasPrefix(k, "landlord.dev/") {
			errs.Add("/annotations/"+violation.Escape(k), "is landlord's own annotation")
		}
	}
	if o.mode() == Shared {
		if len(o.ResourceQuota) > 0 {
			errs.Add("/resource_quota", "applies to a namespace of the tenant's own: use namespace_mode per-tenant, or set quotas on the shared namespace %s yourself", o.sharedNamespace())
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.ResourceQuota)) {
		at := "/resource_quota/" + violation.Escape(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs.Add(at, "is not a resource name: %s", strings.Join(msgs, "; "))
		}
		if _, err := resource.ParseQuantity(o.ResourceQuota[k]); err != nil {
			errs.Add(at, "%q is not a quantity (e.g. 500m, 2, 4Gi): %v", o.ResourceQuota[k], err)
		}
	}
	if r := o.scaling(); r != nil && r.Min > r.Max {
		errs.Add("/replicas", "min %d is more than max %d", r.Min, r.Max)
	}
	if d := time.Duration(o.ProgressDeadline); d != 0 && d < time.Second {
		errs.Add("/progress_deadline", "must be at least 1s")
	}
	for i, t := range o.Tolerations {
		at := fmt.Sprintf("/tolerations/%d", i)
		if t.Operator == "Exists" && t.Value != "" {
			errs.Add(at+"/value", "must be empty with operator Exists")
		}
		if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
			errs.Add(at+"/toleration_seconds", "applies to effect NoExecute only")
		}
		if t.Key == "" && t.Operator != "Exists" {
			errs.Add(at+"/operator", "must be Exists when key is empty")
		}
	}
	p.checkWorkload(&o, spec, &errs)
	spec.Options = o
	return errs.Err(provider.ErrInvalidSpec)
}

// checkMap checks the keys and values of a label-like map.
func checkMap(errs *violation.List, at string, m map[string]string, key, value func(string) []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if msgs := key(k); len(msgs) > 0 {
			errs.Add(at+"/"+violation.Escape(k), "is not a valid key: %s", strings.Join(msgs, "; "))
		}
		if value != nil {
			if msgs := value(m[k]); len(msgs) > 0 {
				errs.Add(at+"/"+violation.Escape(k), "%q is not a valid value: %s", m[k], strings.Join(msgs, "; "))
			}
		}
	}
}

// checkWorkload checks what Kubernetes cannot run of the portable
// workload, and the options that depend on it.
func (p *Provider) checkWorkload(o *tenantOptions, spec *provider.TenantComputeSpec, errs *violation.List) {
	ports := servicePorts(spec.Workload)
	seen := map[string]bool{}
	i := 0
	for ci, c := range spec.Containers {
		for pi, port := range c.Ports {
			at := fmt.Sprintf("%s/ports/%d", workload.ContainerPointer(ci), pi)
			sp := ports[i]
			i++
			if port.Name != "" {
				if msgs := validation.IsValidPortName(port.Name); len(msgs) > 0 {
					errs.Add(at+"/name", "is not a Kubernetes port name: %s", strings.Join(msgs, "; "))
				}
			}
			key := sp.name
			if seen[key] {
				errs.Add(at+"/name", "%s is the name of another port; a Service's ports need distinct names", key)
			}
			seen[key] = true
			if seen[fmt.Sprintf("port %d/%s", sp.port, sp.protocol)] {
				errs.Add(at, "%s port %d is published twice; give one of them a host_port", sp.protocol, sp.port)
			}
			seen[fmt.Sprintf("port %d/%s", sp.port, sp.protocol)] = true
		}
	}
	if o.Ingress != nil {
		if len(ports) == 0 {
			errs.Add("/ingress", "routes to a published port, and the config has none: add ports")
		} else if sp, ok := ingressPort(ports, o.Ingress.Port); !ok {
			errs.Add("/ingress/port", "%q is neither the name nor the container_port of a published port", o.Ingress.Port)
		} else if sp.protocol != workload.ProtocolTCP {
			errs.Add("/ingress/port", "port %s is %s; an Ingress routes HTTP, over TCP", sp.name, sp.protocol)
		}
		// A config checked without a tenant (ValidateConfig) is checked
		// with a name and id of the longest kind.
		host := ingressHost(o.Ingress.Host, cmp.Or(spec.TenantName, strings.Repeat("n", maxLabel)), cmp.Or(spec.TenantID, "00000000-0000-4000-8000-000000000000"))
		if strings.Contains(host, "{") || len(validation.IsDNS1123Subdomain(host)) > 0 {
			errs.Add("/ingress/host", "%q is not a host name once {name} and {id} are filled in", host)
		}
	}
	if o.mode() == PerTenant {
		n := namesOf(*o, cmp.Or(spec.TenantName, "tenant"))
		for i, name := range o.ImagePullSecrets {
			if name == n.secret {
				errs.Add(fmt.Sprintf("/image_pull_secrets/%d", i), "%s is the name of the Secret of the tenant's secret values; rename the pull secret", name)
			}
		}
	}
}

// servicePort is one port of the tenant's Service.
type servicePort struct {
	name          string
	container     string
	containerPort int
	port          int // the Service's port: host_port, else container_port
	protocol      workload.Protocol
}

// servicePorts are the workload's published ports in order, each named:
// its own name, else <protocol>-<container port>.
func servicePorts(w workload.Workload) []servicePort {
	var out []servicePort
	for _, c := range w.Containers {
		for _, port := range c.Ports {
			sp := servicePort{name: port.Name, container: c.Name, containerPort: port.ContainerPort, port: port.ContainerPort, protocol: port.Protocol}
			if sp.protocol == "" {
				sp.protocol = workload.ProtocolTCP
			}
			if port.HostPort != 0 {
				sp.port = port.HostPort
			}
			if sp.name == "" {
				sp.name = string(sp.protocol) + "-" + strconv.Itoa(port.ContainerPort)
			}
			out = append(out, sp)
		}
	}
	return out
}

// ingressPort is the port an ingress routes to: the one named want (by
// name or container port), else the first.
func ingressPort(ports []servicePort, want string) (servicePort, bool) {
	for _, sp := range ports {
		if want == "" || sp.name == want || strconv.Itoa(sp.containerPort) == want {
			return sp, true
		}
	}
	return servicePort{}, false
}

// ingressHost fills in the host template.
func ingressHost(template, name, id string) string {
	return strings.NewReplacer("{name}", name, "{id}", id).Replace(template)
}
