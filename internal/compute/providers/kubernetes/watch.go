package kubernetes

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// WatchChanges tells changed of every change to an object landlord
// manages, of every kind it writes (namespaces, quotas, network policies,
// Secrets, Services, Ingresses, Deployments) and of its Pods, on every
// cluster landlord talks to, until ctx ends: a Service deleted by hand
// wakes the tenant's reconcile as a crashed Pod does. It runs the informer
// cache GetStatus, Inspect, Provision and Update read from (see view), and
// hears its events; it stays quiet about what the informers list at start.
// It returns nil: a cluster it cannot reach is the health check's to
// report, and its tenants are read from the API server meanwhile.
func (p *Provider) WatchChanges(ctx context.Context, changed func(tenantID string)) error {
	var (
		mu       sync.Mutex
		stopped  bool
		releases = map[*cluster]func(){}
	)
	notify := func(obj any) {
		// Removing a handler takes effect a moment later: nothing is told
		// after WatchChanges has returned.
		if ctx.Err() != nil {
			return
		}
		if m, err := metaOf(obj); err == nil {
			if id := m.GetLabels()[labelTenantID]; id != "" {
				changed(id)
			}
		}
	}
	handler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial {
				notify(obj)
			}
		},
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: notify,
	}
	watch := func(cl *cluster) {
		mu.Lock()
		defer mu.Unlock()
		if stopped || releases[cl] != nil {
			return
		}
		releases[cl] = cl.useCache(handler)
	}
	stopNew := p.clients.watchNew(watch)
	// The block's context is watched from the start; others from when a
	// tenant of theirs is first looked at (at the latest, the controller's
	// first resync). Without a block context to reach, the others still are.
	if _, err := p.clients.get(p.base.Context); err != nil {
		// Looking at a tenant of it tries again (and fails saying why):
		// the context is watched from when that succeeds.
		p.logger.Warn("cannot watch changes on the block's Kubernetes context", "context", p.base.Context, "error", err)
	}
	<-ctx.Done()
	stopNew()
	mu.Lock()
	stopped = true
	mu.Unlock()
	var wg sync.WaitGroup
	for _, release := range releases {
		wg.Go(release)
	}
	wg.Wait()
	return nil
}

// metaOf reads an informer object's metadata, tombstones included.
func metaOf(obj any) (metav1.Object, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	return meta.Accessor(obj)
}
