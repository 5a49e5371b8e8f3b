package kubernetes

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Inspect reads the tenant's objects where the spec places them, through
// the view of its cluster (the informer cache while a change watch runs
// it), and compares each with what Provision applies for spec, in the
// fields landlord sets (see compare.go): the Deployment's replicas (unless
// a scaling range leaves them to an autoscaler) and each container's
// image, command, arguments, env, Secret references, ports, resources and
// probes; the Secret's values (compared, never shown); the Service, the
// NetworkPolicy, the ResourceQuota, the Ingress and the copies of image
// pull secrets, each present and as landlord wrote it. An object the spec
// does not have that is still the tenant's is drift too: Update deletes
// it. Inspect changes nothing. The Deployment is the workload: without it
// the error wraps compute.ErrTenantNotFound.
func (p *Provider) Inspect(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.Inspection, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	fail := func(err error) (*provider.Inspection, error) {
		return nil, fmt.Errorf("kubernetes: inspect tenant %s: %w", spec.TenantID, err)
	}
	cl, d, err := p.prepare(spec)
	if err != nil {
		return fail(err)
	}
	v := viewOf(cl)
	pl := placementOf(cl, d.names)
	objects := v.objectsOf(d)
	deployment := objects[len(objects)-1]
	live, err := ownLive(ctx, deployment, spec.TenantID)
	if err != nil {
		return fail(err)
	}
	dep, ok := live.(*appsv1.Deployment)
	if !ok {
		return nil, errNoWorkload(spec.TenantID, pl)
	}
	st, err := p.statusOf(ctx, v, cl.context, spec.TenantID, dep)
	if err != nil {
		return nil, err
	}
	var c provider.DriftCollector
	for _, o := range objects {
		switch o.kind {
		case kindNamespace:
			// Gone, it takes the Deployment along: that is no drift but no
			// workload.
			continue
		case kindDeployment:
			o.compare(dep, &c)
			continue
		}
		live, err := ownLive(ctx, o, spec.TenantID)
		if err != nil {
			return fail(err)
		}
		switch {
		case o.want == nil && live == nil:
		case o.want == nil:
			c.Add(provider.Drift{Path: kindOf(o), Kind: provider.DriftSettings, Found: "present"})
		case live == nil || live.GetDeletionTimestamp() != nil:
			c.Missing(kindOf(o), "present")
		default:
			o.compare(live, &c)
		}
	}
	secrets := cl.kube.CoreV1().Secrets(d.names.namespace)
	for _, name := range d.pullSecrets {
		live, _, err := viewGet(ctx, v, kindSecret, d.names.namespace, name, secrets.Get)
		switch {
		case apierrors.IsNotFound(err):
			c.Missing("imagepullsecret/"+name, "present")
		case err != nil:
			return fail(apiError("read image pull secret "+d.names.namespace+"/"+name, err))
		case live.DeletionTimestamp != nil:
			c.Missing("imagepullsecret/"+name, "present")
		}
	}
	return &provider.Inspection{Status: st, Drift: c.Drift()}, nil
}

// ownLive reads the object through the view: nil when there is none, or
// the one there is not the tenant's.
func ownLive(ctx context.Context, o *object, tenantID string) (metav1.Object, error) {
	live, _, err := o.get(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, apiError("read "+o.String(), err)
	}
	if mine, _ := ownedBy(live.GetLabels(), tenantID); !mine {
		return nil, nil
	}
	return live, nil
}
