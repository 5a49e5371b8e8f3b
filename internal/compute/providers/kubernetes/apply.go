package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	networkingv1ac "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// object is one of a tenant's objects, of any kind: what it should be
// (nil: it should not exist), and how to read, compare, apply and delete
// it.
type object struct {
	kind, namespace, name string
	// want is the apply configuration; nil when the object should not exist.
	want any
	// get reads the live object through the view (cached says whether the
	// cache answered), direct from the API server; extract is what
	// landlord's field manager set of it, as an apply configuration; apply
	// applies one (want, or what extract gave, to put it back) and returns
	// the object as written.
	get     func(ctx context.Context) (live metav1.Object, cached bool, err error)
	direct  func(ctx context.Context) (metav1.Object, error)
	extract func(live metav1.Object) (any, error)
	apply   func(ctx context.Context, config any) (metav1.Object, error)
	delete  func(ctx context.Context, opts metav1.DeleteOptions) error
	// compare records how the live object differs from want, in the fields
	// landlord sets (see drift.go); nil compares nothing.
	compare func(live metav1.Object, c *provider.DriftCollector)
	// before, if set, runs on the live object before it is written; after,
	// once it is applied.
	before func(ctx context.Context, live metav1.Object) error
	after  func(ctx context.Context) error
	// handover, if set, runs before want is applied over live (nil when
	// there is none), for the Deployment of a scaling range (see
	// replicas.go).
	handover func(ctx context.Context, live metav1.Object, prev any) error
	// known, if set, is the live object as the caller has just read it, in
	// place of another read. absent says the object cannot exist, as its
	// namespace was made a moment ago by the same apply: it is not read.
	known  metav1.Object
	absent bool
	// seen is the tenant's object as sync found it, before any write; nil
	// when there was none.
	seen metav1.Object
}

func (o *object) String() string {
	if o.namespace == "" {
		return o.kind + " " + o.name
	}
	return o.kind + " " + o.namespace + "/" + o.name
}

// typedObject builds an object from a kind's typed client functions,
// reading through v.
func typedObject[L metav1.Object, A any](v view, kind, namespace, name string, want A, present bool,
	get func(context.Context, string, metav1.GetOptions) (L, error),
	extract func(L, string) (A, error),
	apply func(context.Context, A, metav1.ApplyOptions) (L, error),
	del func(context.Context, string, metav1.DeleteOptions) error,
) *object {
	o := &object{kind: kind, namespace: namespace, name: name,
		get: func(ctx context.Context) (metav1.Object, bool, error) {
			live, cached, err := viewGet(ctx, v, kind, namespace, name, get)
			if err != nil {
				return nil, cached, err
			}
			return live, cached, nil
		},
		direct: func(ctx context.Context) (metav1.Object, error) {
			live, err := get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return live, nil
		},
		extract: func(live metav1.Object) (any, error) {
			return extract(live.(L), fieldManager)
		},
		apply: func(ctx context.Context, config any) (metav1.Object, error) {
			live, err := apply(ctx, config.(A), metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
			if err != nil {
				return nil, err
			}
			v.wrote(kind, namespace, name, live.GetResourceVersion())
			return live, nil
		},
		delete: func(ctx context.Context, opts metav1.DeleteOptions) error {
			err := del(ctx, name, opts)
			if err == nil || apierrors.IsNotFound(err) {
				v.wrote(kind, namespace, name, "")
			}
			return err
		},
	}
	if present {
		o.want = want
	}
	return o
}

// comparing sets o's compare from a function of the typed live object.
func comparing[L metav1.Object](o *object, fn func(live L, c *provider.DriftCollector)) {
	o.compare = func(live metav1.Object, c *provider.DriftCollector) {
		if l, ok := live.(L); ok {
			fn(l, c)
		}
	}
}

// objectsOf lists the tenant's objects in the order they are applied: the
// namespace first, the Deployment last. The Deployment records the
// generation it was applied at, so one at a generation says that every
// object of that generation was applied before it: a controller resuming
// after a crash only waits for such a Deployment, and must not miss a
// Service that was never made.
func (v view) objectsOf(d *desired) []*object {
	cl := v.cl
	ns, name := d.names.namespace, d.names.object
	core, apps, net := cl.kube.CoreV1(), cl.kube.AppsV1(), cl.kube.NetworkingV1()
	var out []*object
	if d.namespace != nil {
		out = append(out, typedObject(v, kindNamespace, "", ns, d.namespace, true,
			core.Namespaces().Get, corev1ac.ExtractNamespace, core.Namespaces().Apply, core.Namespaces().Delete))
	}
	quota := typedObject(v, kindResourceQuota, ns, name, d.quota, d.quota != nil,
		core.ResourceQuotas(ns).Get, corev1ac.ExtractResourceQuota, core.ResourceQuotas(ns).Apply, core.ResourceQuotas(ns).Delete)
	quota.after = func(ctx context.Context) error { return waitQuotaEnforced(ctx, v, quota) }
	comparing(quota, d.compareQuota)
	policy := typedObject(v, kindNetworkPolicy, ns, name, d.policy, d.policy != nil,
		net.NetworkPolicies(ns).Get, networkingv1ac.ExtractNetworkPolicy, net.NetworkPolicies(ns).Apply, net.NetworkPolicies(ns).Delete)
	comparing(policy, d.comparePolicy)
	secret := typedObject(v, kindSecret, ns, d.names.secret, d.secret, d.secret != nil,
		core.Secrets(ns).Get, corev1ac.ExtractSecret, core.Secrets(ns).Apply, core.Secrets(ns).Delete)
	comparing(secret, d.compareSecret)
	service := typedObject(v, kindService, ns, name, d.service, d.service != nil,
		core.Services(ns).Get, corev1ac.ExtractService, core.Services(ns).Apply, core.Services(ns).Delete)
	comparing(service, d.compareService)
	ing := typedObject(v, kindIngress, ns, name, d.ingress, d.ingress != nil,
		net.Ingresses(ns).Get, networkingv1ac.ExtractIngress, net.Ingresses(ns).Apply, net.Ingresses(ns).Delete)
	comparing(ing, d.compareIngress)
	deployment := typedObject(v, kindDeployment, ns, name, d.deployment, true,
		apps.Deployments(ns).Get, appsv1ac.ExtractDeployment, apps.Deployments(ns).Apply, apps.Deployments(ns).Delete)
	comparing(deployment, d.compareDeployment)
	deployment.before = func(ctx context.Context, live metav1.Object) error {
		var want appsv1.Deployment
		dep, ok := live.(*appsv1.Deployment)
		if !ok || d.deployment == nil || !typed(d.deployment, &want) {
			return nil
		}
		if err := clearRivals(ctx, apps.Deployments(ns), &want, dep); err != nil {
			return apiError("clear what rivals landlord's fields of "+deployment.String(), err)
		}
		return nil
	}
	if d.scaling != nil {
		deployment.handover = handover(v, d)
	}
	return append(out, quota, policy, secret, service, ing, deployment)
}

// read gets the live object, nil when there is none. An object of the
// name that is not the tenant's is a conflict when the tenant needs the
// name, and none of its business when it does not; one being deleted is
// waited out (a retryable error).
func (o *object) read(ctx context.Context, tenantID string) (metav1.Object, error) {
	if o.absent {
		return nil, nil
	}
	live, err := o.known, error(nil)
	if live == nil {
		var cached bool
		live, cached, err = o.get(ctx)
		if apierrors.IsNotFound(err) && cached && o.want != nil && !o.absent {
			// The cache holds landlord's objects only: whether one of the
			// name is someone else's, only the API server knows.
			live, err = o.direct(ctx)
		}
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apiError("read "+o.String(), err)
	}
	if mine, whose := ownedBy(live.GetLabels(), tenantID); !mine {
		if o.want == nil {
			return nil, nil
		}
		return nil, provider.Terminal(fmt.Errorf("%s already exists and is not this tenant's (it belongs to %s); landlord never takes over an object: remove or rename it, or choose another namespace or namespace_prefix: %w",
			o, whose, provider.ErrProviderConflict))
	}
	if live.GetDeletionTimestamp() != nil {
		return nil, provider.Retryable(fmt.Errorf("%s is being deleted; it is applied again once it is gone", o))
	}
	return live, nil
}

// write is one change sync made (or may have made: a request that failed
// may still have been carried out), and how to take it back.
type write struct {
	o *object
	// prev is what landlord had set of the object before; nil when there
	// was no object, so that taking the write back deletes it.
	prev any
	// live is the object as written; nil for a deletion, or a write that
	// failed.
	live metav1.Object
	// drift is how the object differed, in the fields landlord sets, from
	// what it should be before the write; nil for an object that was not
	// there.
	drift []provider.Drift
}

// sync makes the object what it should be: applied when it is missing, or
// differs from what it should be in landlord's share of it (what landlord
// last set, read from the managed fields) or in the values of the fields
// landlord sets; deleted when it should not exist. It returns the write it
// made, nil when there was nothing to do.
//
// Both comparisons are needed for a no-op update to write nothing and a
// drifted object to be put back: a field another manager changes leaves
// landlord's share (kubectl scale, set image), which the first sees; the
// second sees any change that leaves the managed fields as they were.
func (o *object) sync(ctx context.Context, tenantID string) (*write, error) {
	live, err := o.read(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	o.seen = live
	var prev any
	var found provider.DriftCollector
	if live != nil {
		if o.before != nil {
			if err := o.before(ctx, live); err != nil {
				return nil, err
			}
		}
		if prev, err = o.extract(live); err != nil {
			return nil, fmt.Errorf("kubernetes: read what landlord set of %s: %w", o, err)
		}
		if o.want != nil && o.compare != nil {
			o.compare(live, &found)
		}
	}
	switch {
	case o.want == nil && live == nil:
		return nil, nil
	case o.want == nil:
		w := &write{o: o, prev: prev}
		if err := o.delete(ctx, deleteExactly(live)); err != nil && !apierrors.IsNotFound(err) {
			return w, apiError("delete "+o.String(), err)
		}
		return w, nil
	case live != nil && same(prev, o.want) && len(found.Drift()) == 0:
		return nil, nil
	}
	w := &write{o: o, prev: prev, drift: found.Drift()}
	if o.handover != nil {
		if err := o.handover(ctx, live, prev); err != nil {
			return w, apiError("hand the replicas of "+o.String()+" over", err)
		}
	}
	if w.live, err = o.apply(ctx, o.want); err != nil {
		return w, apiError("apply "+o.String(), err)
	}
	if o.after != nil {
		return w, o.after(ctx)
	}
	return w, nil
}

// created reports whether the write made the object (or may have).
func (w *write) created() bool { return w.prev == nil }

// undo takes the write back: deletes the object it created, when it is
// still the tenant's, or applies again what landlord had set of it.
func (w *write) undo(ctx context.Context, tenantID string) error {
	if !w.created() {
		if _, err := w.o.apply(ctx, w.prev); err != nil {
			return apiError("restore "+w.o.String(), err)
		}
		return nil
	}
	live, err := w.o.direct(ctx)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return apiError("read "+w.o.String(), err)
	}
	if mine, _ := ownedBy(live.GetLabels(), tenantID); !mine {
		return nil
	}
	if err := w.o.delete(ctx, deleteExactly(live)); err != nil && !apierrors.IsNotFound(err) {
		return apiError("delete "+w.o.String(), err)
	}
	return nil
}

// deleteExactly deletes the object read as live and no other of its name
// that may have replaced it since.
func deleteExactly(live metav1.Object) metav1.DeleteOptions {
	uid := live.GetUID()
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
}

// same reports whether two apply configurations set the same fields to the
// same values, the recorded generation aside (a new generation whose
// objects are the same writes nothing).
func same(a, b any) bool {
	return reflect.DeepEqual(normal(a), normal(b))
}

func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return err.Error()
	}
	if meta, ok := out["metadata"].(map[string]any); ok {
		if a, ok := meta["annotations"].(map[string]any); ok {
			delete(a, annotGeneration)
		}
	}
	return out
}

// kindOf names what an object is for change lists: "deployment".
func kindOf(o *object) string { return strings.ToLower(o.kind) }
