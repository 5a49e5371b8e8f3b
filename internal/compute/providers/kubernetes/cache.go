package kubernetes

import (
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Kinds of the informer cache: every kind landlord writes, and the Pods
// its Deployments run.
const (
	kindNamespace     = "Namespace"
	kindResourceQuota = "ResourceQuota"
	kindNetworkPolicy = "NetworkPolicy"
	kindSecret        = "Secret"
	kindService       = "Service"
	kindIngress       = "Ingress"
	kindDeployment    = "Deployment"
	kindPod           = "Pod"
)

// expectWithin bounds how long a write of landlord's may be missing from
// the cache before the cache is trusted again: a watch delivers an event
// within milliseconds, and a relist that skipped landlord's version (the
// object changed again meanwhile) would otherwise keep the object read
// from the API server for good.
const expectWithin = 5 * time.Second

// informerCache holds, for one cluster, shared informers of the objects
// landlord owns (filtered by its managed-by label) of every kind it
// writes, and of its Pods: once synced, GetStatus, Inspect, Provision and
// Update read from it instead of asking the API server, and the change
// watch hears every event from it. A watch keeps it current: what
// controller-runtime's clients read by default, and live enough for a
// status (see view).
type informerCache struct {
	factory informers.SharedInformerFactory
	kinds   map[string]cache.SharedIndexInformer
	stop    chan struct{}
	synced  atomic.Bool

	mu sync.Mutex
	// expected are landlord's own writes the cache may not hold yet, by
	// object key: until it does, that object is read from the API server,
	// so that a read after a write never sees the state before it.
	expected map[string]expectation
}

// expectation is a write of landlord's the cache must show before it is
// read: the object at resourceVersion or later, or gone.
type expectation struct {
	resourceVersion string // "" for a deletion
	until           time.Time
}

// newInformerCache makes, but does not start, the cache of the cluster's
// objects labelled as landlord's.
func newInformerCache(cl *cluster) *informerCache {
	f := informers.NewSharedInformerFactoryWithOptions(cl.kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = labelManagedBy + "=" + managedBy }),
		informers.WithTransform(slimPods))
	c := &informerCache{factory: f, stop: make(chan struct{}), expected: map[string]expectation{}}
	c.kinds = map[string]cache.SharedIndexInformer{
		kindNamespace:     f.Core().V1().Namespaces().Informer(),
		kindResourceQuota: f.Core().V1().ResourceQuotas().Informer(),
		kindNetworkPolicy: f.Networking().V1().NetworkPolicies().Informer(),
		kindSecret:        f.Core().V1().Secrets().Informer(),
		kindService:       f.Core().V1().Services().Informer(),
		kindIngress:       f.Networking().V1().Ingresses().Informer(),
		kindDeployment:    f.Apps().V1().Deployments().Informer(),
		kindPod:           f.Core().V1().Pods().Informer(),
	}
	return c
}

// slimPods drops what landlord never reads of a Pod (who set which of its
// fields), the larger part of a small Pod, from the cache. The other
// kinds keep their managed fields: Provision and Update read landlord's
// own share of each object from them.
func slimPods(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.ManagedFields = nil
	}
	return obj, nil
}

// start runs the informers until shutdown, and marks the cache synced
// once every kind has been listed.
func (c *informerCache) start() {
	c.factory.Start(c.stop)
	go func() {
		synced := make([]cache.InformerSynced, 0, len(c.kinds))
		for _, inf := range c.kinds {
			synced = append(synced, inf.HasSynced)
		}
		if cache.WaitForCacheSync(c.stop, synced...) {
			c.synced.Store(true)
		}
	}()
}

// shutdown stops the informers and waits until they have.
func (c *informerCache) shutdown() {
	c.synced.Store(false)
	close(c.stop)
	c.factory.Shutdown()
}

// objectKey identifies an object of the cache.
func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// wrote records that landlord wrote the object, at resourceVersion ("":
// deleted it), so that reads of it skip the cache until it has caught up.
func (c *informerCache) wrote(kind, namespace, name, resourceVersion string, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.expected) >= sweepAt {
		// Expectations of objects no one reads again (a destroyed
		// tenant's) are dropped once they have expired.
		for k, e := range c.expected {
			if now.After(e.until) {
				delete(c.expected, k)
			}
		}
	}
	c.expected[objectKey(kind, namespace, name)] = expectation{resourceVersion: resourceVersion, until: now.Add(expectWithin)}
}

// sweepAt is how many expectations are kept before expired ones are
// looked for.
const sweepAt = 256

// lookup returns what the cache holds of an object, and ok when the cache
// may answer: it has synced, and holds landlord's last write to the object.
func (c *informerCache) lookup(kind, namespace, name string, now time.Time) (obj any, exists, ok bool) {
	if c == nil || !c.synced.Load() {
		return nil, false, false
	}
	key := namespace + "/" + name
	if namespace == "" {
		key = name
	}
	obj, exists, err := c.kinds[kind].GetIndexer().GetByKey(key)
	if err != nil {
		return nil, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := objectKey(kind, namespace, name)
	want, pending := c.expected[k]
	if !pending {
		return obj, exists, true
	}
	if now.After(want.until) || holds(obj, exists, want.resourceVersion) {
		delete(c.expected, k)
		return obj, exists, true
	}
	return nil, false, false
}

// holds reports whether the cached object shows a write at
// resourceVersion, or the deletion of the object (""): that it is gone,
// not only being deleted.
func holds(obj any, exists bool, resourceVersion string) bool {
	if resourceVersion == "" {
		return !exists
	}
	if !exists {
		return false
	}
	m, err := metaOf(obj)
	if err != nil {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(m.GetResourceVersion(), resourceVersion)
	return err == nil && cmp >= 0
}

// list returns the cached objects of kind in namespace ("" for all) whose
// labels match selector, and ok when the cache may answer.
func (c *informerCache) list(kind, namespace string, selector map[string]string) (out []any, ok bool) {
	if c == nil || !c.synced.Load() {
		return nil, false
	}
	idx := c.kinds[kind].GetIndexer()
	var items []any
	if namespace == "" {
		items = idx.List()
	} else {
		var err error
		if items, err = idx.ByIndex(cache.NamespaceIndex, namespace); err != nil {
			return nil, false
		}
	}
	for _, obj := range items {
		m, err := metaOf(obj)
		if err != nil || !matches(m.GetLabels(), selector) {
			continue
		}
		out = append(out, obj)
	}
	return out, true
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// cacheOf returns the cluster's informer cache, nil when no change watch
// runs it.
func (cl *cluster) cacheOf() *informerCache {
	cl.cacheMu.Lock()
	defer cl.cacheMu.Unlock()
	return cl.cache
}

// useCache starts the cluster's informer cache, or joins the one running,
// and has handler hear its events; release leaves it, and stops it when no
// one else uses it.
func (cl *cluster) useCache(handler cache.ResourceEventHandler) (release func()) {
	cl.cacheMu.Lock()
	c := cl.cache
	if c == nil {
		c = newInformerCache(cl)
		cl.cache = c
	}
	cl.cacheUsers++
	var handles []func()
	for _, inf := range c.kinds {
		h, err := inf.AddEventHandler(handler)
		if err == nil {
			handles = append(handles, func() { _ = inf.RemoveEventHandler(h) })
		}
	}
	if cl.cacheUsers == 1 {
		c.start()
	}
	cl.cacheMu.Unlock()
	return func() {
		for _, remove := range handles {
			remove()
		}
		cl.cacheMu.Lock()
		cl.cacheUsers--
		last := cl.cacheUsers == 0
		if last {
			cl.cache = nil
		}
		cl.cacheMu.Unlock()
		if last {
			c.shutdown()
		}
	}
}
