package kubernetes

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// GetStatus reads the tenant's workload live, finding it by the tenant id
// alone (see locate). The Manager calls GetStatusOf.
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	pl, ok, err := p.locate(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: status of tenant %s: %w", tenantID, err)
	}
	if !ok || pl.object == "" {
		return nil, errNoWorkload(tenantID, pl)
	}
	return p.status(ctx, pl, tenantID)
}

// GetStatusOf reads the tenant's workload live, where it runs: the
// Deployment's rollout, its Pods' containers, the Service's addresses.
func (p *Provider) GetStatusOf(ctx context.Context, t provider.TenantRef) (*provider.ComputeStatus, error) {
	return p.status(ctx, p.placementOfRef(t), t.ID)
}

// failingReasons are the reasons a kubelet gives a waiting container that
// will not start without a change: they reach the tenant's message.
var failingReasons = []string{"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull",
	"CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError"}

// status reads the tenant's workload where pl says, through the view of
// its cluster (see view for why a read from the informer cache is live).
func (p *Provider) status(ctx context.Context, pl placement, tenantID string) (*provider.ComputeStatus, error) {
	cl, err := p.clients.get(pl.context)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: status of tenant %s: %w", tenantID, err)
	}
	v := viewOf(cl)
	dep, _, err := viewGet(ctx, v, kindDeployment, pl.namespace, pl.object, cl.kube.AppsV1().Deployments(pl.namespace).Get)
	if apierrors.IsNotFound(err) {
		return nil, errNoWorkload(tenantID, pl)
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes: status of tenant %s: %w", tenantID, apiError("read Deployment "+pl.namespace+"/"+pl.object, err))
	}
	if mine, _ := ownedBy(dep.Labels, tenantID); !mine {
		return nil, errNoWorkload(tenantID, pl)
	}
	return p.statusOf(ctx, v, pl.context, tenantID, dep)
}

// statusOf is the status of the tenant's Deployment, as read: its
// rollout, its Pods' containers, the Service's addresses.
func (p *Provider) statusOf(ctx context.Context, v view, kubeContext, tenantID string, dep *appsv1.Deployment) (*provider.ComputeStatus, error) {
	pods, err := viewList(ctx, v, kindPod, dep.Namespace, map[string]string{labelManagedBy: managedBy, labelTenantID: tenantID},
		func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Pod, error) {
			list, err := v.cl.kube.CoreV1().Pods(dep.Namespace).List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return list.Items, nil
		})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: status of tenant %s: %w", tenantID, apiError("list Pods in "+dep.Namespace, err))
	}
	st := &provider.ComputeStatus{
		TenantID: tenantID, ProviderType: Name, Health: provider.HealthUnknown, LastUpdated: progressedAt(dep),
		Metadata: map[string]string{"namespace": dep.Namespace, "deployment": dep.Name},
	}
	if kubeContext != "" {
		st.Metadata["context"] = kubeContext
	}
	if rev := dep.Annotations["deployment.kubernetes.io/revision"]; rev != "" {
		st.Metadata["revision"] = rev
	}
	st.Generation, _ = strconv.ParseInt(dep.Annotations[annotGeneration], 10, 64)
	current := currentPods(dep, pods)
	st.Containers = containerStatuses(dep, current)
	st.State, st.Message = rollout(dep, current, p.now())
	if st.State == provider.StatePending && probed(dep) {
		if why := p.unready(ctx, v.cl, tenantID, current); why != "" {
			st.Message = join(st.Message, []string{why})
		}
	}
	if probed(dep) {
		st.Health = provider.HealthStarting
		if st.State == provider.StateRunning {
			st.Health = provider.HealthHealthy
		}
	}
	if st.Endpoints, err = p.endpoints(ctx, v, dep); err != nil {
		return nil, fmt.Errorf("kubernetes: status of tenant %s: %w", tenantID, err)
	}
	return st, nil
}

// progressedAt is when the rollout last made progress, so that the
// controller's progress deadline can expire on a rollout that stays stuck.
func progressedAt(dep *appsv1.Deployment) time.Time {
	at := dep.CreationTimestamp.Time
	for _, c := range dep.Status.Conditions {
		if c.LastUpdateTime.After(at) {
			at = c.LastUpdateTime.Time
		}
	}
	return at
}

// currentPods are the live Pods of the Deployment's current template,
// newest first.
func currentPods(dep *appsv1.Deployment, pods []corev1.Pod) []corev1.Pod {
	want := dep.Spec.Template.Annotations[annotTemplate]
	var out []corev1.Pod
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil && pod.Annotations[annotTemplate] == want {
			out = append(out, pod)
		}
	}
	slices.SortFunc(out, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	return out
}

// stableAfter is how long a container that restarted must stay up before
// its workload counts as running. Without a readiness probe a Pod is
// ready, and its Deployment available, the moment a crashing container
// starts again: a real kubelet shows a crash loop as a few seconds of
// Running between back-offs, which kubectl rollout status calls success.
const stableAfter = 10 * time.Second

// rollout reads the Deployment's rollout as kubectl rollout status does,
// and the Pods of its current template for why it does not progress; a
// rollout that finished while a container restarted less than
// stableAfter before now is not running yet.
func rollout(dep *appsv1.Deployment, pods []corev1.Pod, now time.Time) (provider.ComputeState, string) {
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	s := dep.Status
	problems := podProblems(pods)
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			problems = append(problems, "Pods cannot be created ("+c.Reason+"): "+c.Message)
		}
	}
	switch {
	case dep.DeletionTimestamp != nil:
		return provider.StateStopped, "the Deployment is being deleted"
	case s.ObservedGeneration < dep.Generation:
		// Before the Deployment controller has seen a change, what it says
		// is about the spec before: a deadline that a fix has made moot.
		return provider.StatePending, "the Deployment controller has not yet seen the latest change"
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return provider.StateFailed, join("the rollout made no progress within its deadline: "+c.Message, problems)
		}
	}
	if s.UpdatedReplicas >= want && s.Replicas <= s.UpdatedReplicas && s.AvailableReplicas >= want {
		if want == 0 {
			return provider.StateRunning, "scaled to 0 replicas"
		}
		if unstable := restarted(pods, now); len(unstable) > 0 {
			return provider.StateDegraded, join(fmt.Sprintf("%d of %d replicas available", s.AvailableReplicas, want), unstable)
		}
		return provider.StateRunning, ""
	}
	progress := fmt.Sprintf("%d of %d replicas updated, %d available", s.UpdatedReplicas, want, s.AvailableReplicas)
	switch {
	case len(problems) == 0:
		return provider.StatePending, join("rolling out: "+progress, unassigned(pods))
	case s.AvailableReplicas > 0:
		return provider.StateDegraded, join("rolling out: "+progress, problems)
	default:
		return provider.StateFailed, join(progress, problems)
	}
}

func join(msg string, problems []string) string {
	if len(problems) == 0 {
		return msg
	}
	return msg + "; " + strings.Join(problems, "; ")
}

// podProblems says what keeps the Pods from running: containers that fail
// to start, were killed for memory, or Pods that cannot be scheduled.
func podProblems(pods []corev1.Pod) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, pod := range pods {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				add("Pod " + pod.Name + " cannot be scheduled: " + c.Message)
			}
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && slices.Contains(failingReasons, w.Reason) {
				msg := fmt.Sprintf("container %s: %s: %s", cs.Name, w.Reason, w.Message)
				if t := cs.LastTerminationState.Terminated; t != nil && w.Reason == "CrashLoopBackOff" && t.Reason != "OOMKilled" {
					msg += fmt.Sprintf(" (its last run exited with code %d, %s)", t.ExitCode, t.Reason)
				}
				add(msg)
			}
			if t := cs.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
				add(fmt.Sprintf("container %s was killed for using more memory than its limit (OOMKilled, %d restarts)", cs.Name, cs.RestartCount))
			}
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				if cs.RestartCount > 0 {
					// Between back-offs a kubelet may show the last exit,
					// not CrashLoopBackOff.
					add(fmt.Sprintf("container %s is in a crash loop (CrashLoopBackOff): it exited with code %d (%s), %d restarts", cs.Name, t.ExitCode, t.Reason, cs.RestartCount))
				} else {
					add(fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason))
				}
			}
		}
	}
	return out
}

// restarted says which running containers of the Pods started again
// less than stableAfter before now, and how their last run ended.
func restarted(pods []corev1.Pod, now time.Time) []string {
	var out []string
	for _, pod := range pods {
		for _, cs := range pod.Status.ContainerStatuses {
			r, t := cs.State.Running, cs.LastTerminationState.Terminated
			if r == nil || cs.RestartCount == 0 || t == nil || now.Sub(r.StartedAt.Time) >= stableAfter {
				continue
			}
			out = append(out, fmt.Sprintf("container %s of Pod %s started again %s ago (its last run exited with code %d, %s; %d restarts): waiting for it to stay up for %s",
				cs.Name, pod.Name, now.Sub(r.StartedAt.Time).Round(time.Second), t.ExitCode, t.Reason, cs.RestartCount, stableAfter))
		}
	}
	return out
}

// unassigned says which Pods wait for a node: pending, with no node
// assigned and no word from a scheduler (one that cannot place a Pod says
// so in its PodScheduled condition, a problem of podProblems). A cluster
// whose scheduler is down, or that has none, leaves them so.
func unassigned(pods []corev1.Pod) []string {
	var names []string
	for _, pod := range pods {
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending || len(pod.Status.ContainerStatuses) > 0 ||
			slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled }) {
			continue
		}
		names = append(names, pod.Name)
	}
	switch len(names) {
	case 0:
		return nil
	case 1:
		return []string{"no node has been assigned to Pod " + names[0] + " yet (is the cluster's scheduler running?)"}
	default:
		return []string{fmt.Sprintf("no node has been assigned to %d Pods (%s) yet (is the cluster's scheduler running?)", len(names), strings.Join(names, ", "))}
	}
}

// containerStatuses are the template's containers, as the newest Pod of
// the current template runs them (a ready one when there is one).
func containerStatuses(dep *appsv1.Deployment, pods []corev1.Pod) []provider.ContainerStatus {
	var pod *corev1.Pod
	for i := range pods {
		if pod == nil || (isReady(&pods[i]) && !isReady(pod)) {
			pod = &pods[i]
		}
	}
	var out []provider.ContainerStatus
	for _, c := range dep.Spec.Template.Spec.Containers {
		cs := provider.ContainerStatus{Name: c.Name, Image: c.Image, State: provider.ContainerUnknown, Health: provider.HealthUnknown}
		if pod != nil {
			for _, s := range pod.Status.ContainerStatuses {
				if s.Name != c.Name {
					continue
				}
				cs.RestartCount, cs.ID = int(s.RestartCount), s.ContainerID
				switch {
				case s.State.Running != nil:
					cs.State = provider.ContainerRunning
				case s.State.Terminated != nil:
					code := int(s.State.Terminated.ExitCode)
					cs.State, cs.ExitCode, cs.Message = provider.ContainerExited, &code, s.State.Terminated.Reason
				case s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff":
					cs.State, cs.Message = provider.ContainerRestarting, s.State.Waiting.Message
				case s.State.Waiting != nil:
					cs.State, cs.Message = provider.ContainerCreated, strings.TrimSpace(s.State.Waiting.Reason+": "+s.State.Waiting.Message)
				}
				if c.ReadinessProbe != nil {
					cs.Health = provider.HealthStarting
					if s.Ready {
						cs.Health = provider.HealthHealthy
					}
				}
			}
		}
		out = append(out, cs)
	}
	return out
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// probed reports whether any container has a readiness probe.
func probed(dep *appsv1.Deployment) bool {
	return slices.ContainsFunc(dep.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.ReadinessProbe != nil })
}

// endpoints are where the tenant's ports are reached: the Service's
// cluster DNS name, its load balancer's addresses and node ports when it
// has them, and the Ingress host.
func (p *Provider) endpoints(ctx context.Context, v view, dep *appsv1.Deployment) ([]provider.Endpoint, error) {
	cl := v.cl
	var ports []servicePort
	for _, c := range dep.Spec.Template.Spec.Containers {
		for _, port := range c.Ports {
			ports = append(ports, servicePort{name: port.Name, container: c.Name, containerPort: int(port.ContainerPort), protocol: workload.Protocol(strings.ToLower(string(port.Protocol)))})
		}
	}
	if len(ports) == 0 {
		return nil, nil
	}
	svc, _, err := viewGet(ctx, v, kindService, dep.Namespace, dep.Name, cl.kube.CoreV1().Services(dep.Namespace).Get)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiError("read Service "+dep.Namespace+"/"+dep.Name, err)
	}
	var nodeAddr string
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if nodeAddr, err = p.nodeAddress(ctx, cl); err != nil {
			return nil, err
		}
	}
	var out []provider.Endpoint
	for _, sp := range ports {
		for _, port := range svc.Spec.Ports {
			if port.Name != sp.name {
				continue
			}
			at := func(host string, n int32) {
				out = append(out, provider.Endpoint{Container: sp.container, Name: sp.name, ContainerPort: sp.containerPort, Protocol: sp.protocol,
					Address: net.JoinHostPort(host, strconv.Itoa(int(n)))})
			}
			at(fmt.Sprintf("%s.%s.svc.%s", svc.Name, svc.Namespace, p.settings.ClusterDomain), port.Port)
			for _, lb := range svc.Status.LoadBalancer.Ingress {
				at(cmp.Or(lb.IP, lb.Hostname), port.Port)
			}
			if port.NodePort != 0 && nodeAddr != "" {
				at(nodeAddr, port.NodePort)
			}
		}
	}
	if addr := dep.Annotations[annotIngress]; addr != "" {
		out = append(out, provider.Endpoint{Container: ports[0].container, Name: "ingress", ContainerPort: ports[0].containerPort,
			Protocol: workload.ProtocolTCP, Address: addr})
	}
	return out, nil
}

// nodeAddress is an address of the cluster's first node (its external IP,
// else its internal one), where node ports answer; "" without nodes.
func (p *Provider) nodeAddress(ctx context.Context, cl *cluster) (string, error) {
	nodes, err := cl.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", apiError("list nodes", err)
	}
	for _, n := range nodes.Items {
		for _, want := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP} {
			for _, a := range n.Status.Addresses {
				if a.Type == want {
					return a.Address, nil
				}
			}
		}
	}
	return "", nil
}

// unready says why a running container of the Pods is not ready: the
// newest readiness probe failure the kubelet reported of it, an Event
// (Unhealthy) being the only place a kubelet says so. Empty when every
// running container is ready or no such Event is found.
func (p *Provider) unready(ctx context.Context, cl *cluster, tenantID string, pods []corev1.Pod) string {
	for _, pod := range pods {
		if pod.Status.Phase != corev1.PodRunning || !slices.ContainsFunc(pod.Status.ContainerStatuses, func(cs corev1.ContainerStatus) bool {
			return cs.State.Running != nil && !cs.Ready
		}) {
			continue
		}
		events, err := cl.kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + pod.Name + ",reason=Unhealthy"})
		if err != nil {
			p.log(tenantID).LogAttrs(ctx, slog.LevelWarn, "cannot read the readiness probe's events (does landlord's role allow listing events?)",
				slog.String("pod", pod.Namespace+"/"+pod.Name), slog.Any("error", err))
			return ""
		}
		var newest *corev1.Event
		for i := range events.Items {
			e := &events.Items[i]
			if e.InvolvedObject.UID == pod.UID && strings.HasPrefix(e.Message, "Readiness probe failed") && (newest == nil || eventTime(e).After(eventTime(newest))) {
				newest = e
			}
		}
		if newest != nil {
			return fmt.Sprintf("Pod %s is not ready: %s", pod.Name, strings.TrimSpace(newest.Message))
		}
	}
	return ""
}

// eventTime is when an Event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	default:
		return e.EventTime.Time
	}
}
