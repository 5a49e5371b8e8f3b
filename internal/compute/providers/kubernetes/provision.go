package kubernetes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Provision applies the tenant's objects (server-side apply, field manager
// landlord), creating what is missing and converging what differs; after a
// crash it finds them again by name and label. It returns as soon as the
// API server has them; GetStatus follows the rollout. On failure it
// deletes what this call created.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.ProvisionResult, error) {
		return nil, fmt.Errorf("kubernetes: provision tenant %s: %w: %w", spec.TenantID, provider.ErrProvisionFailed, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(spec.TenantID)()
	cl, d, err := p.prepare(spec)
	if err != nil {
		return fail(err)
	}
	changes, writes, err := p.apply(ctx, cl, d, spec.TenantID, nil)
	if err != nil {
		p.undo(ctx, writes, spec.TenantID)
		return fail(err)
	}
	if len(changes) > 0 {
		p.log(spec.TenantID).Info("objects applied", "namespace", d.names.namespace, "deployment", d.names.object, "changed", changeList(changes), "generation", spec.Generation)
		p.recordApplied(ctx, cl, spec, writes, nil)
	}
	p.hints.Store(spec.TenantID, placementOf(cl, d.names))
	return &provider.ProvisionResult{
		TenantID: spec.TenantID, ProviderType: Name, Status: provider.ProvisionStatusInProgress,
		ResourceIDs: resourceIDs(cl, d.names), Endpoints: p.serviceEndpoints(d.names, d.ports),
		Message: "Deployment " + d.names.namespace + "/" + d.names.object + " is rolling out", ProvisionedAt: p.now(),
	}, nil
}

// Update applies the tenant's objects, as Provision does, to an existing
// workload: one whose Deployment exists. A spec the objects already match
// writes nothing.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.UpdateResult, error) {
		return nil, fmt.Errorf("kubernetes: update tenant %s: %w: %w", tenantID, provider.ErrUpdateFailed, err)
	}
	if spec.TenantID != tenantID {
		return nil, provider.Invalid("/tenant_id", "is %q; the update is for tenant %q", spec.TenantID, tenantID)
	}
	if err := ctx.Err(); err != nil {
		return fail(provider.Retryable(err))
	}
	defer p.lock(tenantID)()
	cl, d, err := p.prepare(spec)
	if err != nil {
		return fail(err)
	}
	deployments := cl.kube.AppsV1().Deployments(d.names.namespace)
	dep, cached, err := viewGet(ctx, viewOf(cl), kindDeployment, d.names.namespace, d.names.object, deployments.Get)
	if apierrors.IsNotFound(err) && cached {
		// Gone from the cache of landlord's objects: gone, or no longer
		// labelled as landlord's, which Provision must find and refuse.
		dep, err = deployments.Get(ctx, d.names.object, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("kubernetes: update tenant %s: no Deployment %s/%s: %w", tenantID, d.names.namespace, d.names.object, provider.ErrTenantNotFound)
	}
	if err != nil {
		return fail(apiError("read Deployment "+d.names.namespace+"/"+d.names.object, err))
	}
	changes, writes, err := p.apply(ctx, cl, d, tenantID, dep)
	if err != nil {
		p.undo(ctx, writes, tenantID)
		return fail(err)
	}
	p.hints.Store(tenantID, placementOf(cl, d.names))
	res := &provider.UpdateResult{TenantID: tenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess, Changes: changes,
		ResourceIDs: resourceIDs(cl, d.names), Endpoints: p.serviceEndpoints(d.names, d.ports), UpdatedAt: p.now()}
	if len(changes) > 0 {
		p.log(tenantID).Info("objects applied", "namespace", d.names.namespace, "deployment", d.names.object, "changed", changeList(changes), "generation", spec.Generation)
		p.recordApplied(ctx, cl, spec, writes, dep)
		res.Status, res.Message = provider.ProvisionStatusInProgress, "Deployment "+d.names.namespace+"/"+d.names.object+" is rolling out"
	}
	return res, nil
}

// prepare finds the tenant's cluster and builds its objects, refusing a
// placement that is not where the tenant's recorded objects are.
func (p *Provider) prepare(spec *provider.TenantComputeSpec) (*cluster, *desired, error) {
	o := optionsOf(spec)
	cl, err := p.clients.get(o.Context)
	if err != nil {
		if p.clients.missing != nil {
			// The operator's to fix, by a restart with a kubeconfig; the
			// tenant waits in backoff rather than failing.
			return nil, nil, provider.Retryable(err)
		}
		return nil, nil, provider.Terminal(fmt.Errorf("%w: %w", err, provider.ErrInvalidSpec))
	}
	d := p.desiredOf(spec, o)
	was, now := placementOfIDs(spec.ResourceIDs), placementOf(cl, d.names)
	if was.namespace != "" && (was.namespace != now.namespace || was.object != now.object || was.context != now.context) {
		return nil, nil, provider.Terminal(fmt.Errorf("the tenant's objects are %s, and its config now places them at %s: objects cannot move between clusters, namespaces or names; "+
			"put context, namespace_mode, namespace and namespace_prefix back, or delete the tenant and create it again: %w", was, now, provider.ErrInvalidSpec))
	}
	return cl, d, nil
}

// apply syncs the tenant's objects in order. deployment, if not nil, is
// the tenant's Deployment as the caller has just read it. It returns what
// changed, and the writes it made, for undo.
func (p *Provider) apply(ctx context.Context, cl *cluster, d *desired, tenantID string, deployment *appsv1.Deployment) ([]provider.Change, []*write, error) {
	var changes []provider.Change
	var writes []*write
	v := viewOf(cl)
	objects := v.objectsOf(d)
	for _, o := range objects {
		if o.kind == kindDeployment && deployment != nil {
			o.known = deployment
		}
	}
	if d.namespace != nil {
		// Copies of pull secrets the config no longer names go before the
		// namespace's record of them changes, so that a crash between the
		// two cannot strand one.
		objects[0].before = func(ctx context.Context, live metav1.Object) error {
			return pruneCopies(ctx, v, d, live, tenantID)
		}
	}
	for i := 0; i < len(objects); i++ {
		o := objects[i]
		w, err := o.sync(ctx, tenantID)
		if w != nil {
			writes = append(writes, w)
		}
		if err != nil {
			return changes, writes, err
		}
		if w != nil {
			changes = append(changes, provider.Change{Field: kindOf(o) + "/" + o.name})
		}
		if o.kind == kindNamespace && len(d.pullSecrets) > 0 {
			copies, err := p.pullSecrets(ctx, v, d)
			if err != nil {
				return changes, writes, err
			}
			objects = slices.Insert(objects, i+1, copies...)
		}
		if o.kind == kindNamespace && w != nil && w.created() {
			// Nothing can be in a namespace this call made: the objects to
			// come need no look for someone else's of their name.
			for _, later := range objects[i+1:] {
				later.absent = true
			}
		}
	}
	return changes, writes, nil
}

// pullSecrets are copies, in a namespace of the tenant's own, of the
// Secrets image_pull_secrets names, read from the block's
// pull_secrets_namespace.
func (p *Provider) pullSecrets(ctx context.Context, v view, d *desired) ([]*object, error) {
	from := p.settings.PullSecretsNamespace
	cl := v.cl
	core := cl.kube.CoreV1()
	var out []*object
	for _, name := range d.pullSecrets {
		src, err := cl.kube.CoreV1().Secrets(from).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, provider.Terminal(fmt.Errorf("image pull secret %s/%s does not exist: create it in %s (the kubernetes block's pull_secrets_namespace), or drop it from image_pull_secrets: %w",
				from, name, from, provider.ErrInvalidSpec))
		}
		if err != nil {
			return nil, apiError("read image pull secret "+from+"/"+name, err)
		}
		if src.Type != corev1.SecretTypeDockerConfigJson && src.Type != corev1.SecretTypeDockercfg {
			return nil, provider.Terminal(fmt.Errorf("secret %s/%s is of type %s, not an image pull secret (%s): %w", from, name, src.Type, corev1.SecretTypeDockerConfigJson, provider.ErrInvalidSpec))
		}
		to := d.names.namespace
		want := corev1ac.Secret(name, to).WithLabels(d.namespace.Labels).WithType(src.Type).WithData(src.Data)
		out = append(out, typedObject(v, kindSecret, to, name, want, true,
			core.Secrets(to).Get, corev1ac.ExtractSecret, core.Secrets(to).Apply, core.Secrets(to).Delete))
	}
	return out, nil
}

// waitQuotaEnforced waits until the quota controller has filled in a new
// or changed ResourceQuota's status: the API server enforces only the
// limits the status lists, and Pods created before would escape it.
func waitQuotaEnforced(ctx context.Context, v view, o *object) error {
	quotas := v.cl.kube.CoreV1().ResourceQuotas(o.namespace)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		q, _, err := viewGet(ctx, v, kindResourceQuota, o.namespace, o.name, quotas.Get)
		if err != nil {
			return apiError("read "+o.String(), err)
		}
		if equality.Semantic.DeepEqual(q.Spec.Hard, q.Status.Hard) {
			return nil
		}
		select {
		case <-ctx.Done():
			return provider.Retryable(fmt.Errorf("%s is not enforced yet: %w", o, ctx.Err()))
		case <-time.After(wait):
		}
	}
}

// pruneCopies deletes the copies of pull secrets the namespace (as live)
// records and the config no longer names, where they are the tenant's.
func pruneCopies(ctx context.Context, v view, d *desired, live metav1.Object, tenantID string) error {
	core := v.cl.kube.CoreV1().Secrets(d.names.namespace)
	for name := range strings.SplitSeq(live.GetAnnotations()[annotPullSecrets], ",") {
		if name == "" || slices.Contains(d.pullSecrets, name) {
			continue
		}
		var gone *corev1ac.SecretApplyConfiguration
		o := typedObject(v, kindSecret, d.names.namespace, name, gone, false, core.Get, corev1ac.ExtractSecret, core.Apply, core.Delete)
		if _, err := o.sync(ctx, tenantID); err != nil {
			return err
		}
	}
	return nil
}

// undo takes back the writes of a failed Provision or Update, last first,
// even when ctx is cancelled: what it created is deleted (a namespace it
// created takes the rest along), what it changed is set back, so that a
// Pod that restarts meanwhile does not get the new Secret under the old
// template.
func (p *Provider) undo(ctx context.Context, writes []*write, tenantID string) {
	if len(writes) == 0 {
		return
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	if writes[0].o.kind == kindNamespace && writes[0].created() {
		writes = writes[:1]
	}
	for _, w := range slices.Backward(writes) {
		if err := w.undo(ctx, tenantID); err != nil {
			// Going on could pair what is left of the new spec with parts of
			// the old (a new template, an old Secret): stop, and let the
			// next Provision or Update converge.
			p.log(tenantID).Warn("cannot take back a write of a failed provision or update; the next one converges it", "object", w.o.String(), "error", err)
			return
		}
	}
}

// changeList words changes for a log line.
func changeList(changes []provider.Change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.Field
	}
	return out
}

// serviceEndpoints are the cluster DNS addresses of the Service's ports.
func (p *Provider) serviceEndpoints(n names, ports []servicePort) []provider.Endpoint {
	var out []provider.Endpoint
	for _, sp := range ports {
		out = append(out, provider.Endpoint{Container: sp.container, Name: sp.name, ContainerPort: sp.containerPort, Protocol: sp.protocol,
			Address: fmt.Sprintf("%s.%s.svc.%s:%d", n.object, n.namespace, p.settings.ClusterDomain, sp.port)})
	}
	return out
}
