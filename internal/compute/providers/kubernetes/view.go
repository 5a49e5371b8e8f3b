package kubernetes

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// view reads one cluster's objects: from its informer cache when a change
// watch runs one and it may answer (synced, and holding landlord's last
// write to the object), else from the API server.
//
// GetStatus's contract asks for a live read, never a cached one. An
// informer's cache is kept current by a watch, within milliseconds of
// each change, and is what controller-runtime's clients read by default;
// a status read from it is as live as one read from the API server a few
// milliseconds earlier, and costs the API server nothing. What the cache
// cannot know (landlord's own write not yet heard back, a cache not yet
// synced or not running) is asked of the API server.
type view struct {
	cl *cluster
	c  *informerCache // nil: every read asks the API server
}

// viewOf returns the view of cl.
func viewOf(cl *cluster) view { return view{cl: cl, c: cl.cacheOf()} }

// wrote records a write of landlord's (see informerCache.wrote).
func (v view) wrote(kind, namespace, name, resourceVersion string) {
	v.c.wrote(kind, namespace, name, resourceVersion, time.Now())
}

// viewGet reads an object of kind: from the cache when it may answer, else
// with direct. cached says which answered; an object the cache does not
// hold is a NotFound error, as the API server's.
func viewGet[T metav1.Object](ctx context.Context, v view, kind, namespace, name string,
	direct func(context.Context, string, metav1.GetOptions) (T, error)) (obj T, cached bool, err error) {
	if o, exists, ok := v.c.lookup(kind, namespace, name, time.Now()); ok {
		if !exists {
			return obj, true, apierrors.NewNotFound(resourceOf(kind), name)
		}
		if t, isT := o.(T); isT {
			return t, true, nil
		}
	}
	obj, err = direct(ctx, name, metav1.GetOptions{})
	return obj, false, err
}

// viewList lists objects of kind in namespace ("" for every namespace)
// that carry the labels of selector, from the cache when it has synced,
// else with direct. The cache holds only landlord's objects: selector
// must ask for landlord's label.
func viewList[T any](ctx context.Context, v view, kind, namespace string, selector map[string]string,
	direct func(context.Context, metav1.ListOptions) ([]T, error)) ([]T, error) {
	if items, ok := v.c.list(kind, namespace, selector); ok {
		out := make([]T, 0, len(items))
		for _, item := range items {
			if t, isT := item.(*T); isT {
				out = append(out, *t)
			}
		}
		return out, nil
	}
	return direct(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: selector})})
}

// resourceOf names a kind's resource, for NotFound errors.
func resourceOf(kind string) schema.GroupResource {
	switch kind {
	case kindDeployment:
		return schema.GroupResource{Group: "apps", Resource: "deployments"}
	case kindNetworkPolicy:
		return schema.GroupResource{Group: "networking.k8s.io", Resource: "networkpolicies"}
	case kindIngress:
		return schema.GroupResource{Group: "networking.k8s.io", Resource: "ingresses"}
	case kindResourceQuota:
		return schema.GroupResource{Resource: "resourcequotas"}
	case kindNamespace:
		return schema.GroupResource{Resource: "namespaces"}
	case kindSecret:
		return schema.GroupResource{Resource: "secrets"}
	case kindService:
		return schema.GroupResource{Resource: "services"}
	default:
		return schema.GroupResource{Resource: "pods"}
	}
}
