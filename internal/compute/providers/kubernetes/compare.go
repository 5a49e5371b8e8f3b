package kubernetes

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// The comparisons of each kind: how the live object differs from what
// landlord applies, field by field, in the fields landlord sets only. A
// field the API server fills in (a port's protocol, a probe's success
// threshold, a Service's cluster IP) is never compared, nor is anything
// another manager added beside landlord's (an env var, a selector key, a
// quota's other limits): a server-side apply leaves those as they are, so
// reporting them would ask for a repair that cannot happen. What an apply
// replaces whole (an atomic list: a command, a network policy's rules, an
// Ingress's rules) is compared whole.

// typed turns an apply configuration into its typed object: the fields
// landlord sets, and nothing else.
func typed(config, out any) bool {
	b, err := json.Marshal(config)
	return err == nil && json.Unmarshal(b, out) == nil
}

// none stands for an empty value in Expected and Found, which an empty
// string would make read as missing.
const none = "none"

// redacted stands for a secret value.
const redacted = workload.RedactedValue

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

func (d *desired) compareDeployment(live *appsv1.Deployment, c *provider.DriftCollector) {
	var want appsv1.Deployment
	if d.deployment == nil || !typed(d.deployment, &want) {
		return
	}
	if d.scaling == nil && want.Spec.Replicas != nil {
		found := int32(1) // the API server's default
		if live.Spec.Replicas != nil {
			found = *live.Spec.Replicas
		}
		c.Compare("deployment/replicas", provider.DriftScale, strconv.Itoa(int(*want.Spec.Replicas)), strconv.Itoa(int(found)))
	}
	for _, w := range want.Spec.Template.Spec.Containers {
		i := slices.IndexFunc(live.Spec.Template.Spec.Containers, func(l corev1.Container) bool { return l.Name == w.Name })
		if i < 0 {
			c.Missing("containers/"+w.Name, "present")
			continue
		}
		d.compareContainer(w, live.Spec.Template.Spec.Containers[i], c)
	}
}

func (d *desired) compareContainer(w, l corev1.Container, c *provider.DriftCollector) {
	at := "containers/" + w.Name
	c.Compare(at+"/image", provider.DriftImage, w.Image, l.Image)
	if len(w.Command) > 0 {
		c.Compare(at+"/command", provider.DriftCommand, words(w.Command), orNone(words(l.Command)))
	}
	if len(w.Args) > 0 {
		c.Compare(at+"/args", provider.DriftCommand, words(w.Args), orNone(words(l.Args)))
	}
	liveEnv := map[string]corev1.EnvVar{}
	for _, e := range l.Env {
		liveEnv[e.Name] = e
	}
	plain, found := map[string]string{}, map[string]string{}
	for _, e := range w.Env {
		got, present := liveEnv[e.Name]
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			path := d.secretPaths[ref.SecretKeyRef.Key]
			if path == "" {
				path = at + "/secrets/" + e.Name
			}
			c.Compare(path, provider.DriftEnv, secretRef(ref.SecretKeyRef), envSource(got, present))
			continue
		}
		plain[e.Name] = e.Value
		if present {
			found[e.Name] = got.Value
			if got.ValueFrom != nil {
				found[e.Name] = envSource(got, true)
			}
		}
	}
	c.CompareMap(at+"/env", provider.DriftEnv, plain, found, nil)
	if len(w.Ports) > 0 {
		var want, got []string
		for _, p := range w.Ports {
			want = append(want, portOf(p))
			if i := slices.IndexFunc(l.Ports, func(lp corev1.ContainerPort) bool {
				return lp.ContainerPort == p.ContainerPort && protocolOr(lp.Protocol) == protocolOr(p.Protocol)
			}); i >= 0 {
				got = append(got, portOf(l.Ports[i]))
			}
		}
		c.Compare(at+"/ports", provider.DriftPorts, strings.Join(want, ", "), orNone(strings.Join(got, ", ")))
	}
	compareResources(at, w.Resources, l.Resources, c)
	var want, got []string
	for _, pr := range []struct {
		name string
		w, l *corev1.Probe
	}{{"readiness", w.ReadinessProbe, l.ReadinessProbe}, {"liveness", w.LivenessProbe, l.LivenessProbe}, {"startup", w.StartupProbe, l.StartupProbe}} {
		if pr.w == nil {
			continue
		}
		if ws, ls := probeOf(pr.w), probeOf(pr.l); ws != ls {
			want, got = append(want, pr.name+" "+ws), append(got, pr.name+" "+ls)
		}
	}
	if len(want) > 0 {
		c.Add(provider.Drift{Path: at + "/health_check", Kind: provider.DriftHealth, Expected: strings.Join(want, "; "), Found: strings.Join(got, "; ")})
	}
}

// words is a command or its arguments as one would type them.
func words(w []string) string {
	out := make([]string, len(w))
	for i, s := range w {
		out[i] = s
		if s == "" || strings.ContainsAny(s, " \t\"'") {
			out[i] = strconv.Quote(s)
		}
	}
	return strings.Join(out, " ")
}

// secretRef describes where an env var's value comes from: a key of a
// Secret. It names the Secret and the key, never the value.
func secretRef(ref *corev1.SecretKeySelector) string {
	return "Secret " + ref.Name + " key " + ref.Key
}

// envSource describes a live env var that should come from a Secret,
// without its value, which may be a secret typed in by hand.
func envSource(e corev1.EnvVar, present bool) string {
	switch {
	case !present:
		return ""
	case e.ValueFrom == nil:
		return "a value set in the Deployment"
	case e.ValueFrom.SecretKeyRef != nil:
		return secretRef(e.ValueFrom.SecretKeyRef)
	case e.ValueFrom.ConfigMapKeyRef != nil:
		return "ConfigMap " + e.ValueFrom.ConfigMapKeyRef.Name + " key " + e.ValueFrom.ConfigMapKeyRef.Key
	default:
		return "another source"
	}
}

func protocolOr(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func portOf(p corev1.ContainerPort) string {
	return strings.TrimSpace(fmt.Sprintf("%s %d/%s", p.Name, p.ContainerPort, protocolOr(p.Protocol)))
}

// compareResources compares the CPU and memory landlord sets, each as
// both request and limit.
func compareResources(at string, w, l corev1.ResourceRequirements, c *provider.DriftCollector) {
	for _, r := range []struct {
		name corev1.ResourceName
		path string
	}{{corev1.ResourceCPU, "cpu_millicores"}, {corev1.ResourceMemory, "memory_mib"}} {
		want, set := w.Limits[r.name]
		if !set {
			continue
		}
		req, reqSet := l.Requests[r.name]
		lim, limSet := l.Limits[r.name]
		if reqSet && limSet && req.Cmp(want) == 0 && lim.Cmp(want) == 0 {
			continue
		}
		found := quantity(r.name, req, reqSet)
		if limit := quantity(r.name, lim, limSet); limit != found {
			found = "request " + found + ", limit " + limit
		}
		c.Add(provider.Drift{Path: at + "/resources/" + r.path, Kind: provider.DriftResources, Expected: quantity(r.name, want, true), Found: found})
	}
}

// quantity is CPU in millicores, memory in MiB, as the config has them.
func quantity(name corev1.ResourceName, q resource.Quantity, set bool) string {
	switch {
	case !set:
		return none
	case name == corev1.ResourceCPU:
		return strconv.FormatInt(q.MilliValue(), 10)
	case q.Value()%(1<<20) != 0:
		return q.String()
	default:
		return strconv.FormatInt(q.Value()>>20, 10)
	}
}

// probeOf describes the fields of a probe that landlord sets.
func probeOf(p *corev1.Probe) string {
	if p == nil {
		return none
	}
	var how string
	switch {
	case p.HTTPGet != nil:
		how = "http " + p.HTTPGet.Port.String() + p.HTTPGet.Path
	case p.TCPSocket != nil:
		how = "tcp " + p.TCPSocket.Port.String()
	case p.Exec != nil:
		how = "exec " + words(p.Exec.Command)
	case p.GRPC != nil:
		how = "grpc " + strconv.Itoa(int(p.GRPC.Port))
	}
	return fmt.Sprintf("%s every %ds, timeout %ds, %d failures", how, p.PeriodSeconds, p.TimeoutSeconds, p.FailureThreshold)
}

func (d *desired) compareService(live *corev1.Service, c *provider.DriftCollector) {
	var want corev1.Service
	if d.service == nil || !typed(d.service, &want) {
		return
	}
	c.Compare("service/type", provider.DriftPorts, string(want.Spec.Type), string(live.Spec.Type))
	var wantPorts, got []string
	for _, p := range want.Spec.Ports {
		wantPorts = append(wantPorts, servicePortOf(p))
		if i := slices.IndexFunc(live.Spec.Ports, func(lp corev1.ServicePort) bool {
			return lp.Port == p.Port && protocolOr(lp.Protocol) == protocolOr(p.Protocol)
		}); i >= 0 {
			got = append(got, servicePortOf(live.Spec.Ports[i]))
		}
	}
	c.Compare("service/ports", provider.DriftPorts, strings.Join(wantPorts, ", "), orNone(strings.Join(got, ", ")))
	found := map[string]string{}
	for k := range want.Spec.Selector {
		if v, ok := live.Spec.Selector[k]; ok {
			found[k] = v
		}
	}
	c.CompareMap("service/selector", provider.DriftNetwork, want.Spec.Selector, found, nil)
}

func servicePortOf(p corev1.ServicePort) string {
	return fmt.Sprintf("%s %d→%s/%s", p.Name, p.Port, p.TargetPort.String(), protocolOr(p.Protocol))
}

func (d *desired) comparePolicy(live *networkingv1.NetworkPolicy, c *provider.DriftCollector) {
	var want networkingv1.NetworkPolicy
	if d.policy == nil || !typed(d.policy, &want) {
		return
	}
	c.Compare("networkpolicy/pod_selector", provider.DriftNetwork, metav1.FormatLabelSelector(&want.Spec.PodSelector), metav1.FormatLabelSelector(&live.Spec.PodSelector))
	c.Compare("networkpolicy/policy_types", provider.DriftNetwork, policyTypes(want.Spec.PolicyTypes), orNone(policyTypes(live.Spec.PolicyTypes)))
	if !equality.Semantic.DeepEqual(want.Spec.Ingress, live.Spec.Ingress) {
		expected, found := rulesOf(want.Spec.Ingress), rulesOf(live.Spec.Ingress)
		if expected == found {
			expected, found = expected+" as landlord wrote them", found+", changed"
		}
		c.Add(provider.Drift{Path: "networkpolicy/ingress", Kind: provider.DriftNetwork, Expected: expected, Found: found})
	}
}

func policyTypes(types []networkingv1.PolicyType) string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
}

// rulesOf counts a policy's ingress rules and the sources they allow.
func rulesOf(rules []networkingv1.NetworkPolicyIngressRule) string {
	peers := 0
	for _, r := range rules {
		peers += len(r.From)
	}
	return fmt.Sprintf("%d rules from %d sources", len(rules), peers)
}

func (d *desired) compareSecret(live *corev1.Secret, c *provider.DriftCollector) {
	var want corev1.Secret
	if d.secret == nil || !typed(d.secret, &want) {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(want.Data)) {
		got, present := live.Data[k]
		if present && string(got) == string(want.Data[k]) {
			continue
		}
		path := d.secretPaths[k]
		if path == "" {
			path = "secret/data/" + k
		}
		dr := provider.Drift{Path: path, Kind: provider.DriftEnv, Expected: redacted}
		if present {
			dr.Found = redacted
		}
		c.Add(dr)
	}
}

func (d *desired) compareQuota(live *corev1.ResourceQuota, c *provider.DriftCollector) {
	var want corev1.ResourceQuota
	if d.quota == nil || !typed(d.quota, &want) {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(want.Spec.Hard)) {
		w, got := want.Spec.Hard[k], none
		if l, ok := live.Spec.Hard[k]; ok {
			if l.Cmp(w) == 0 {
				continue
			}
			got = l.String()
		}
		c.Add(provider.Drift{Path: "resourcequota/hard/" + string(k), Kind: provider.DriftSettings, Expected: w.String(), Found: got})
	}
}

func (d *desired) compareIngress(live *networkingv1.Ingress, c *provider.DriftCollector) {
	var want networkingv1.Ingress
	if d.ingress == nil || !typed(d.ingress, &want) {
		return
	}
	if want.Spec.IngressClassName != nil {
		found := ""
		if live.Spec.IngressClassName != nil {
			found = *live.Spec.IngressClassName
		}
		c.Compare("ingress/class", provider.DriftNetwork, *want.Spec.IngressClassName, orNone(found))
	}
	c.Compare("ingress/rules", provider.DriftNetwork, ingressRules(want.Spec.Rules), orNone(ingressRules(live.Spec.Rules)))
	if len(want.Spec.TLS) > 0 || len(live.Spec.TLS) > 0 {
		c.Compare("ingress/tls", provider.DriftNetwork, orNone(ingressTLS(want.Spec.TLS)), orNone(ingressTLS(live.Spec.TLS)))
	}
}

// ingressRules describes an Ingress's rules: host and path to Service and
// port.
func ingressRules(rules []networkingv1.IngressRule) string {
	var out []string
	for _, r := range rules {
		if r.HTTP == nil {
			out = append(out, r.Host)
			continue
		}
		for _, p := range r.HTTP.Paths {
			to := "?"
			if b := p.Backend.Service; b != nil {
				to = b.Name + ":" + strconv.Itoa(int(b.Port.Number))
				if b.Port.Name != "" {
					to = b.Name + ":" + b.Port.Name
				}
			}
			kind := ""
			if p.PathType != nil {
				kind = " (" + string(*p.PathType) + ")"
			}
			out = append(out, r.Host+p.Path+kind+" → "+to)
		}
	}
	return strings.Join(out, ", ")
}

func ingressTLS(tls []networkingv1.IngressTLS) string {
	var out []string
	for _, t := range tls {
		out = append(out, strings.Join(t.Hosts, ",")+" with Secret "+t.SecretName)
	}
	return strings.Join(out, "; ")
}
