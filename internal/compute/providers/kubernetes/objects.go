package kubernetes

import (
	"cmp"
	"maps"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// desired is what the tenant's objects should be. A nil field is an object
// the tenant should not have (one left from an earlier spec is deleted).
type desired struct {
	names      names
	namespace  *corev1ac.NamespaceApplyConfiguration // per-tenant mode only
	quota      *corev1ac.ResourceQuotaApplyConfiguration
	policy     *networkingv1ac.NetworkPolicyApplyConfiguration
	secret     *corev1ac.SecretApplyConfiguration
	deployment *appsv1ac.DeploymentApplyConfiguration
	service    *corev1ac.ServiceApplyConfiguration
	ingress    *networkingv1ac.IngressApplyConfiguration
	// pullSecrets name the Secrets to copy into a namespace of the
	// tenant's own.
	pullSecrets []string
	// ports are the Service's ports; host the Ingress's host.
	ports       []servicePort
	serviceType corev1.ServiceType
	host        string
	// scaling is the range of an autoscaler that owns the Deployment's
	// replicas, nil for a fixed count (see replicaCount).
	scaling *replicaCount
	// secretPaths are the drift paths of the Secret's keys:
	// containers/<container>/secrets/<name>.
	secretPaths map[string]string
}

// desiredOf builds the tenant's objects from a resolved spec.
func (p *Provider) desiredOf(spec *provider.TenantComputeSpec, o tenantOptions) *desired {
	n := namesOf(o, spec.TenantName)
	labels := labelsOf(o, spec.TenantID, spec.TenantName)
	annotations := annotationsOf(o, spec.TenantName)
	d := &desired{names: n, ports: servicePorts(spec.Workload), scaling: o.scaling(), secretPaths: map[string]string{}}
	for _, s := range spec.Secrets {
		d.secretPaths[secretKey(s.Container, s.Name)] = "containers/" + s.Container + "/secrets/" + s.Name
	}

	if o.mode() == PerTenant {
		nsAnnotations := annotations
		if len(o.ImagePullSecrets) > 0 {
			nsAnnotations = maps.Clone(annotations)
			nsAnnotations[annotPullSecrets] = strings.Join(o.ImagePullSecrets, ",")
		}
		d.namespace = corev1ac.Namespace(n.namespace).WithLabels(labels).WithAnnotations(nsAnnotations)
		if len(o.ResourceQuota) > 0 {
			hard := corev1.ResourceList{}
			for k, v := range o.ResourceQuota {
				hard[corev1.ResourceName(k)] = resource.MustParse(v) // checked by DecodeConfig
			}
			d.quota = corev1ac.ResourceQuota(n.object, n.namespace).WithLabels(labels).WithAnnotations(annotations).
				WithSpec(corev1ac.ResourceQuotaSpec().WithHard(hard))
		}
		d.pullSecrets = o.ImagePullSecrets
	}
	if len(d.ports) > 0 {
		d.serviceType = corev1.ServiceType(o.ServiceType)
		if d.serviceType == "" {
			d.serviceType = corev1.ServiceTypeClusterIP
			if spec.Networking.Public {
				d.serviceType = corev1.ServiceTypeLoadBalancer
			}
		}
	}
	if o.isolated() {
		d.policy = networkPolicy(n, labels, annotations, spec.TenantID, spec.Networking.Public || (d.serviceType != "" && d.serviceType != corev1.ServiceTypeClusterIP))
	}
	if len(spec.Secrets) > 0 {
		data := map[string][]byte{}
		for _, s := range spec.Secrets {
			data[secretKey(s.Container, s.Name)] = []byte(s.Value.Reveal())
		}
		d.secret = corev1ac.Secret(n.secret, n.namespace).WithLabels(labels).WithAnnotations(annotations).
			WithType(corev1.SecretTypeOpaque).WithData(data)
	}
	if len(d.ports) > 0 {
		svc := corev1ac.ServiceSpec().WithType(d.serviceType).WithSelector(map[string]string{labelTenantID: spec.TenantID})
		for _, sp := range d.ports {
			svc.WithPorts(corev1ac.ServicePort().WithName(sp.name).WithPort(int32(sp.port)).
				WithTargetPort(intstr.FromInt32(int32(sp.containerPort))).WithProtocol(protocol(sp.protocol)))
		}
		d.service = corev1ac.Service(n.object, n.namespace).WithLabels(labels).WithAnnotations(annotations).WithSpec(svc)
	}
	deployAnnotations := maps.Clone(annotations)
	deployAnnotations[annotGeneration] = strconv.FormatInt(spec.Generation, 10)
	if in := o.Ingress; in != nil {
		d.host = ingressHost(in.Host, spec.TenantName, spec.TenantID)
		port := "80"
		if in.TLSSecret != "" {
			port = "443"
		}
		deployAnnotations[annotIngress] = net.JoinHostPort(d.host, port)
		d.ingress = p.ingressOf(n, in, d, labels, annotations)
	}
	template := p.podTemplate(spec, o, n, labels, annotations)
	deploySpec := appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{labelTenantID: spec.TenantID})).
		WithProgressDeadlineSeconds(progressDeadline(o)).
		WithRevisionHistoryLimit(3).
		WithTemplate(template)
	if d.scaling == nil {
		// With a scaling range the count is the autoscaler's: landlord's
		// apply leaves it out (see handover).
		deploySpec.WithReplicas(o.replicas())
	}
	d.deployment = appsv1ac.Deployment(n.object, n.namespace).WithLabels(labels).WithAnnotations(deployAnnotations).WithSpec(deploySpec)
	return d
}

// podTemplate is the Deployment's Pod template: the tenant's containers,
// with a fingerprint of the template and of the secret values, so that a
// rotated secret rolls the Pods (they read it when they start).
func (p *Provider) podTemplate(spec *provider.TenantComputeSpec, o tenantOptions, n names, labels, annotations map[string]string) *corev1ac.PodTemplateSpecApplyConfiguration {
	pod := corev1ac.PodSpec().WithEnableServiceLinks(false).WithAutomountServiceAccountToken(o.ServiceAccount != "")
	for _, c := range spec.Containers {
		pod.WithContainers(container(c, spec.Secrets, n.secret))
	}
	if o.ServiceAccount != "" {
		pod.WithServiceAccountName(o.ServiceAccount)
	}
	for _, s := range o.ImagePullSecrets {
		pod.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(s))
	}
	if len(o.NodeSelector) > 0 {
		pod.WithNodeSelector(o.NodeSelector)
	}
	for _, t := range o.Tolerations {
		tol := corev1ac.Toleration().WithOperator(corev1.TolerationOperator(t.Operator))
		if t.Key != "" {
			tol.WithKey(t.Key)
		}
		if t.Value != "" {
			tol.WithValue(t.Value)
		}
		if t.Effect != "" {
			tol.WithEffect(corev1.TaintEffect(t.Effect))
		}
		if t.TolerationSeconds != nil {
			tol.WithTolerationSeconds(*t.TolerationSeconds)
		}
		pod.WithTolerations(tol)
	}
	type secret struct{ Key, Value string }
	var secrets []secret
	for _, s := range spec.Secrets {
		secrets = append(secrets, secret{secretKey(s.Container, s.Name), s.Value.Reveal()})
	}
	podAnnotations := maps.Clone(annotations)
	podAnnotations[annotTemplate] = p.fingerprint(struct {
		Pod     *corev1ac.PodSpecApplyConfiguration
		Labels  map[string]string
		Annot   map[string]string
		Secrets []secret
	}{pod, labels, annotations, secrets})
	return corev1ac.PodTemplateSpec().WithLabels(labels).WithAnnotations(podAnnotations).WithSpec(pod)
}

// container is one container of the Pod template.
func container(c workload.ContainerSpec, secrets []workload.SecretReference, secretName string) *corev1ac.ContainerApplyConfiguration {
	out := corev1ac.Container().WithName(c.Name).WithImage(c.Image)
	if len(c.Command) > 0 {
		out.WithCommand(c.Command...)
	}
	if len(c.Args) > 0 {
		out.WithArgs(c.Args...)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		out.WithEnv(corev1ac.EnvVar().WithName(k).WithValue(c.Env[k]))
	}
	for _, s := range secrets {
		if s.Container == c.Name {
			out.WithEnv(corev1ac.EnvVar().WithName(s.Name).WithValueFrom(corev1ac.EnvVarSource().
				WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secretName).WithKey(secretKey(s.Container, s.Name)))))
		}
	}
	for _, sp := range servicePorts(workload.Workload{Containers: []workload.ContainerSpec{c}}) {
		out.WithPorts(corev1ac.ContainerPort().WithName(sp.name).WithContainerPort(int32(sp.containerPort)).WithProtocol(protocol(sp.protocol)))
	}
	if r := c.Resources; r.CPUMillicores > 0 || r.MemoryMiB > 0 {
		list := corev1.ResourceList{}
		if r.CPUMillicores > 0 {
			list[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.CPUMillicores, resource.DecimalSI)
		}
		if r.MemoryMiB > 0 {
			list[corev1.ResourceMemory] = *resource.NewQuantity(r.MemoryMiB<<20, resource.BinarySI)
		}
		out.WithResources(corev1ac.ResourceRequirements().WithRequests(list).WithLimits(list))
	}
	if hc := c.HealthCheck; hc != nil {
		out.WithReadinessProbe(probe(hc)).WithLivenessProbe(probe(hc))
		if hc.StartPeriod > 0 {
			// The start period as a startup probe: until it passes, the
			// others wait and failures restart nothing, for at most the
			// start period and the retries after it.
			period := seconds(hc.Interval, 10)
			out.WithStartupProbe(probe(hc).WithFailureThreshold((seconds(hc.StartPeriod, 0)+period-1)/period + int32(max(hc.Retries, 1))))
		}
	}
	return out
}

// probe is a health check as a probe.
func probe(hc *workload.HealthCheckConfig) *corev1ac.ProbeApplyConfiguration {
	pr := corev1ac.Probe().WithPeriodSeconds(seconds(hc.Interval, 10)).WithTimeoutSeconds(seconds(hc.Timeout, 1)).
		WithFailureThreshold(int32(max(hc.Retries, 1)))
	switch {
	case hc.HTTP != nil:
		pr.WithHTTPGet(corev1ac.HTTPGetAction().WithPath(cmp.Or(hc.HTTP.Path, "/")).WithPort(intstr.FromInt32(int32(hc.HTTP.Port))))
	case hc.TCP != nil:
		pr.WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromInt32(int32(hc.TCP.Port))))
	default:
		pr.WithExec(corev1ac.ExecAction().WithCommand(hc.Command...))
	}
	return pr
}

// seconds rounds d up to whole seconds, def when d is 0.
func seconds(d time.Duration, def int32) int32 {
	if d <= 0 {
		return def
	}
	return int32(math.Ceil(d.Seconds()))
}

// networkPolicy lets the tenant's Pods be reached by its own Pods and by
// Pods that are no tenant's in namespaces that are no tenant's; public
// opens them to any address.
func networkPolicy(n names, labels, annotations map[string]string, tenantID string, public bool) *networkingv1ac.NetworkPolicyApplyConfiguration {
	notTenant := metav1ac.LabelSelector().WithMatchExpressions(
		metav1ac.LabelSelectorRequirement().WithKey(labelTenantID).WithOperator(metav1.LabelSelectorOpDoesNotExist))
	own := metav1ac.LabelSelector().WithMatchLabels(map[string]string{labelTenantID: tenantID})
	rule := networkingv1ac.NetworkPolicyIngressRule().WithFrom(
		networkingv1ac.NetworkPolicyPeer().WithPodSelector(own),
		networkingv1ac.NetworkPolicyPeer().WithNamespaceSelector(notTenant).WithPodSelector(notTenant),
	)
	if public {
		rule.WithFrom(networkingv1ac.NetworkPolicyPeer().WithIPBlock(networkingv1ac.IPBlock().WithCIDR("0.0.0.0/0")),
			networkingv1ac.NetworkPolicyPeer().WithIPBlock(networkingv1ac.IPBlock().WithCIDR("::/0")))
	}
	return networkingv1ac.NetworkPolicy(n.object, n.namespace).WithLabels(labels).WithAnnotations(annotations).
		WithSpec(networkingv1ac.NetworkPolicySpec().WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{labelTenantID: tenantID})).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).WithIngress(rule))
}

// ingressOf routes the ingress's host and path to the Service.
func (p *Provider) ingressOf(n names, in *ingress, d *desired, labels, annotations map[string]string) *networkingv1ac.IngressApplyConfiguration {
	sp, _ := ingressPort(d.ports, in.Port) // checked by DecodeConfig
	a := maps.Clone(annotations)
	maps.Copy(a, in.Annot)
	backend := networkingv1ac.IngressBackend().WithService(networkingv1ac.IngressServiceBackend().WithName(n.object).
		WithPort(networkingv1ac.ServiceBackendPort().WithNumber(int32(sp.port))))
	path := networkingv1ac.HTTPIngressPath().WithPath(cmp.Or(in.Path, "/")).WithPathType(networkingv1.PathTypePrefix).WithBackend(backend)
	spec := networkingv1ac.IngressSpec().WithRules(networkingv1ac.IngressRule().WithHost(d.host).
		WithHTTP(networkingv1ac.HTTPIngressRuleValue().WithPaths(path)))
	if in.Class != "" {
		spec.WithIngressClassName(in.Class)
	}
	if in.TLSSecret != "" {
		spec.WithTLS(networkingv1ac.IngressTLS().WithHosts(d.host).WithSecretName(in.TLSSecret))
	}
	return networkingv1ac.Ingress(n.object, n.namespace).WithLabels(labels).WithAnnotations(a).WithSpec(spec)
}

// secretKey is a secret value's key in the tenant's Secret.
func secretKey(container, name string) string { return container + "." + name }

func protocol(p workload.Protocol) corev1.Protocol {
	if p == workload.ProtocolUDP {
		return corev1.ProtocolUDP
	}
	return corev1.ProtocolTCP
}

// progressDeadline is the Deployment's progressDeadlineSeconds.
func progressDeadline(o tenantOptions) int32 {
	if o.ProgressDeadline == 0 {
		return DefaultProgressDeadline
	}
	return seconds(time.Duration(o.ProgressDeadline), DefaultProgressDeadline)
}
