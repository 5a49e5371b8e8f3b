package kubernetes

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watched are the kinds whose changes concern a tenant's status: the
// Deployment's rollout and its Pods' containers. Only their metadata is
// kept, so the watch costs little memory per tenant.
var watched = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Resource: "pods"},
}

// WatchChanges tells changed of every change to a Deployment or Pod
// landlord manages, on every cluster landlord talks to, until ctx ends. It
// watches metadata only, filtered by landlord's label, and stays quiet
// about what it lists at start. It returns nil: a cluster it cannot reach
// is the health check's to report, and its tenants are polled.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	ctx, cancel := context.WithCancel(ctx)
	var (
		mu      sync.Mutex
		running = map[string]bool{}
		wg      sync.WaitGroup
	)
	defer wg.Wait()
	defer cancel()
	watch := func(cl *cluster) {
		mu.Lock()
		defer mu.Unlock()
		if running[cl.context] || ctx.Err() != nil {
			return
		}
		running[cl.context] = true
		factory := metadatainformer.NewFilteredSharedInformerFactory(cl.meta, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
			o.LabelSelector = labelManagedBy + "=" + managedBy
		})
		notify := func(obj any) {
			if m, err := metaOf(obj); err == nil {
				if id := m.GetLabels()[labelTenantID]; id != "" {
					changed(id)
				}
			}
		}
		for _, gvr := range watched {
			_, _ = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
				AddFunc: func(obj any, initial bool) {
					if !initial {
						notify(obj)
					}
				},
				UpdateFunc: func(_, obj any) { notify(obj) },
				DeleteFunc: notify,
			})
		}
		wg.Go(func() {
			factory.Start(ctx.Done())
			<-ctx.Done()
			factory.Shutdown()
		})
	}
	defer p.clients.watchNew(watch)()
	// The block's context is watched from the start; others from when a
	// tenant of theirs is first looked at (at the latest, the controller's
	// first resync). Without a block context to reach, the others still are.
	_, _ = p.clients.get(p.base.Context)
	<-ctx.Done()
	return nil
}

// metaOf reads an informer object's metadata, tombstones included.
func metaOf(obj any) (metav1.Object, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	return meta.Accessor(obj)
}
