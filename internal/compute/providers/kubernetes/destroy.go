package kubernetes

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Destroy removes the tenant's objects, finding them by the tenant id
// alone: where the tenant was last seen, else by label in the current
// context. The Manager calls DestroyOf, which knows where the tenant runs.
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	defer p.lock(tenantID)()
	pl, ok, err := p.locate(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("kubernetes: destroy tenant %s: %w", tenantID, err)
	}
	if !ok {
		return nil
	}
	return p.destroy(ctx, pl, tenantID)
}

// DestroyOf removes the tenant's objects where they are. It finishes even
// when ctx is cancelled, and is done when they are gone, or were never
// there.
func (p *Provider) DestroyOf(ctx context.Context, t provider.TenantRef) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	defer p.lock(t.ID)()
	return p.destroy(ctx, p.placementOfRef(t), t.ID)
}

// destroy deletes a namespace of the tenant's own, which takes everything
// in it along, or else each of the tenant's objects in a shared one, with
// foreground propagation (a Deployment is gone once its Pods are), and
// waits until they are gone.
func (p *Provider) destroy(ctx context.Context, pl placement, tenantID string) error {
	fail := func(err error) error { return fmt.Errorf("kubernetes: destroy tenant %s: %w", tenantID, err) }
	cl, err := p.clients.get(pl.context)
	if err != nil {
		return fail(err)
	}
	foreground := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{PropagationPolicy: &foreground}
	namespaces := cl.kube.CoreV1().Namespaces()
	ns, cached, err := viewGet(ctx, viewOf(cl), kindNamespace, "", pl.namespace, namespaces.Get)
	if apierrors.IsNotFound(err) && cached {
		// The cache holds landlord's namespaces only: a shared one, or one
		// the cache has not heard of yet, is asked for.
		ns, err = namespaces.Get(ctx, pl.namespace, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		p.hints.Delete(tenantID)
		return nil
	case err != nil:
		return fail(apiError("read namespace "+pl.namespace, err))
	}
	if mine, _ := ownedBy(ns.Labels, tenantID); mine {
		if ns.DeletionTimestamp == nil {
			if err := cl.kube.CoreV1().Namespaces().Delete(ctx, pl.namespace, opts); err != nil && !apierrors.IsNotFound(err) {
				return fail(apiError("delete namespace "+pl.namespace, err))
			}
			p.log(tenantID).Info("namespace deleted", "namespace", pl.namespace)
		}
		if err := waitNamespaceGone(ctx, cl, ns); err != nil {
			return fail(err)
		}
		// The cache hears of the namespace's objects going a moment later:
		// until it has, a status is read from the API server.
		v := viewOf(cl)
		v.wrote(kindNamespace, "", pl.namespace, "")
		if pl.object != "" {
			v.wrote(kindDeployment, pl.namespace, pl.object, "")
		}
		p.hints.Delete(tenantID)
		return nil
	}
	// A shared namespace: the tenant's objects, by name, where they carry
	// its label.
	if pl.object == "" {
		p.hints.Delete(tenantID)
		return nil
	}
	var objects []*object
	for _, o := range viewOf(cl).objectsOf(p.removal(pl)) {
		if o.kind == kindNamespace {
			continue
		}
		live, _, err := o.get(ctx)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fail(apiError("read "+o.String(), err))
		}
		if mine, _ := ownedBy(live.GetLabels(), tenantID); !mine {
			continue
		}
		if live.GetDeletionTimestamp() == nil {
			exactly := deleteExactly(live)
			exactly.PropagationPolicy = &foreground
			if err := o.delete(ctx, exactly); err != nil && !apierrors.IsNotFound(err) {
				return fail(apiError("delete "+o.String(), err))
			}
		}
		objects = append(objects, o)
	}
	for _, o := range objects {
		if err := waitGone(ctx, o.String(), func(ctx context.Context) (bool, error) {
			live, _, err := o.get(ctx)
			if err != nil {
				return apierrors.IsNotFound(err), ignoreNotFound(err)
			}
			// A new object of the name that is someone else's counts as gone.
			mine, _ := ownedBy(live.GetLabels(), tenantID)
			return !mine, nil
		}); err != nil {
			return fail(err)
		}
	}
	if len(objects) > 0 {
		p.log(tenantID).Info("objects deleted", "namespace", pl.namespace, "deployment", pl.object, "count", len(objects))
	}
	p.hints.Delete(tenantID)
	return nil
}

// removal names every object the tenant may have at pl, for deletion.
func (p *Provider) removal(pl placement) *desired {
	n := names{namespace: pl.namespace, object: pl.object, secret: shorten(pl.object+"-secrets", maxLabel)}
	return &desired{names: n}
}

// waitNamespaceGone watches the namespace, as read at ns, until it is
// deleted: the namespace controller takes a few seconds to empty it, and a
// watch hears the end at once for one request.
func waitNamespaceGone(ctx context.Context, cl *cluster, ns *corev1.Namespace) error {
	what := "namespace " + ns.Name
	for {
		w, err := cl.kube.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + ns.Name, ResourceVersion: ns.ResourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				return provider.Retryable(fmt.Errorf("%s is still being deleted: %w", what, ctx.Err()))
			}
			return apiError("watch "+what, err)
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Deleted:
				w.Stop()
				return nil
			case watch.Error:
				// The resource version is too old: read the namespace again.
				w.Stop()
			}
		}
		w.Stop()
		// The watch ended (error, timeout or a closed connection): is the
		// namespace still there?
		current, err := cl.kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case ctx.Err() != nil:
			return provider.Retryable(fmt.Errorf("%s is still being deleted: %w", what, ctx.Err()))
		case err != nil:
			return apiError("read "+what, err)
		}
		ns = current
	}
}

// waitGone polls gone until it says so.
func waitGone(ctx context.Context, what string, gone func(context.Context) (bool, error)) error {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		done, err := gone(ctx)
		if err != nil {
			return apiError("read "+what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return provider.Retryable(fmt.Errorf("%s is still being deleted: %w", what, ctx.Err()))
		case <-time.After(wait):
		}
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
