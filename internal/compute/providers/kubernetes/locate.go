package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// placement is where a tenant's objects are: which cluster, which
// namespace, which name.
type placement struct {
	context, namespace, object string
}

func (pl placement) String() string {
	s := pl.namespace + "/" + pl.object
	if pl.context != "" {
		s = "context " + pl.context + ", " + s
	}
	return s
}

// Resource id keys of ProvisionResult and UpdateResult.
const (
	resourceContext    = "context"
	resourceNamespace  = "namespace"
	resourceDeployment = "deployment"
)

func placementOf(cl *cluster, n names) placement {
	return placement{context: cl.context, namespace: n.namespace, object: n.object}
}

func placementOfIDs(ids map[string]string) placement {
	return placement{context: ids[resourceContext], namespace: ids[resourceNamespace], object: ids[resourceDeployment]}
}

func resourceIDs(cl *cluster, n names) map[string]string {
	ids := map[string]string{resourceNamespace: n.namespace, resourceDeployment: n.object}
	if cl.context != "" {
		ids[resourceContext] = cl.context
	}
	return ids
}

// placementOfRef is where the tenant's objects are: where its recorded
// resource ids say, else where its stored config (over the block's
// defaults) puts them. A stored config always decodes; should it not, the
// defaults stand in, rather than fail a destroy.
func (p *Provider) placementOfRef(t provider.TenantRef) placement {
	o := p.base
	if merged, err := workload.Merge(p.defaults, t.Config); err == nil {
		var stored tenantOptions
		if json.Unmarshal(merged, &stored) == nil {
			o = stored
		}
	}
	n := namesOf(o, t.Name)
	pl := placement{context: p.clients.effective(o.Context), namespace: n.namespace, object: n.object}
	if recorded := placementOfIDs(t.ResourceIDs); recorded.namespace != "" && recorded.object != "" {
		pl = recorded
		if pl.context == "" {
			pl.context = p.clients.effective("")
		}
	}
	return pl
}

// locate finds a tenant known only by id: where it was last seen, else by
// its label among the Deployments of the current context. ok is false when
// it has none there.
func (p *Provider) locate(ctx context.Context, tenantID string) (pl placement, ok bool, err error) {
	if v, found := p.hints.Load(tenantID); found {
		return v.(placement), true, nil
	}
	cl, err := p.clients.get(p.base.Context)
	if err != nil {
		return placement{}, false, err
	}
	own := map[string]string{labelTenantID: tenantID, labelManagedBy: managedBy}
	// The cache's answer is taken when it finds the Deployment; that it
	// has none may mean only that it has not heard of it yet.
	if deps, ok := cl.cacheOf().list(kindDeployment, metav1.NamespaceAll, own); ok && len(deps) > 0 {
		if d, err := metaOf(deps[0]); err == nil {
			return placement{context: cl.context, namespace: d.GetNamespace(), object: d.GetName()}, true, nil
		}
	}
	list, err := cl.kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		LabelSelector: labelTenantID + "=" + tenantID + "," + labelManagedBy + "=" + managedBy,
	})
	if err != nil {
		return placement{}, false, apiError("list the tenant's Deployments", err)
	}
	for _, d := range list.Items {
		return placement{context: cl.context, namespace: d.Namespace, object: d.Name}, true, nil
	}
	// No Deployment: a per-tenant namespace may still be there (a
	// provision that failed after creating it, or a destroy under way).
	nss, err := cl.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: labelTenantID + "=" + tenantID})
	if err != nil {
		return placement{}, false, apiError("list the tenant's namespaces", err)
	}
	for _, ns := range nss.Items {
		return placement{context: cl.context, namespace: ns.Name}, true, nil
	}
	return placement{context: cl.context}, false, nil
}

// errNoWorkload says the tenant has no Deployment where it was looked for.
func errNoWorkload(tenantID string, pl placement) error {
	where := "the current context"
	if pl.namespace != "" {
		where = pl.String()
	}
	return fmt.Errorf("kubernetes: no Deployment of tenant %s at %s: %w", tenantID, where, provider.ErrTenantNotFound)
}
