package kubernetes

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// userAgent is how landlord's requests appear in the API server's audit log.
const userAgent = "landlord"

// clients holds one client per kubeconfig context in use.
type clients struct {
	// source describes where the configuration came from, for messages.
	source string
	// kubeconfig is the loaded kubeconfig; nil in a Pod, where inCluster
	// is the one configuration.
	kubeconfig *clientcmdapi.Config
	inCluster  *rest.Config
	// missing says why there is no configuration at all; every call
	// answers it (the health check of GET /v1/compute/providers shows it).
	missing error

	mu    sync.Mutex
	byCtx map[string]*cluster
	// onNew are told of every cluster client made from now on (a change
	// watch starts informers on it), by key of watchNew.
	onNew   map[int]func(*cluster)
	watches int
	// qps and burst bound each client's requests.
	qps   float32
	burst int
}

// cluster is the client of one context.
type cluster struct {
	// context is the kubeconfig context's name; empty in a Pod.
	context string
	kube    kubernetes.Interface

	// cache is the informer cache of landlord's objects on the cluster,
	// run while a change watch uses it (cacheUsers of them); nil otherwise.
	cacheMu    sync.Mutex
	cache      *informerCache
	cacheUsers int
}

// newClients loads the kubeconfig at path; with no path, the in-cluster
// configuration when landlord runs in a Pod, else the kubeconfig that
// $KUBECONFIG or ~/.kube/config names. A kubeconfig that cannot be read is
// an error; finding none at all is not (discovery works without a
// cluster), but every call that needs one says so.
func newClients(path string, qps float32, burst int) (*clients, error) {
	c := &clients{byCtx: map[string]*cluster{}, qps: qps, burst: burst}
	if path == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			c.inCluster, c.source = cfg, "the Pod's service account"
			return c, nil
		} else if !errors.Is(err, rest.ErrNotInCluster) {
			return nil, fmt.Errorf("kubernetes: in-cluster configuration: %w", err)
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	kc, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: load kubeconfig: %w", err)
	}
	if len(kc.Contexts) == 0 {
		where := "$KUBECONFIG or ~/.kube/config"
		if path != "" {
			return nil, fmt.Errorf("kubernetes: kubeconfig %s has no context", path)
		}
		c.missing = fmt.Errorf("kubernetes: no cluster to talk to: %s has no context, and landlord does not run in a Pod; set kubeconfig in the kubernetes block of landlord's configuration", where)
		return c, nil
	}
	c.kubeconfig, c.source = kc, "kubeconfig "+strings.Join(rules.GetLoadingPrecedence(), ":")
	if path != "" {
		c.source = "kubeconfig " + path
	}
	return c, nil
}

// contexts lists the kubeconfig's contexts.
func (c *clients) contexts() []string {
	if c.kubeconfig == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.kubeconfig.Contexts))
}

// effective is the context a tenant's context option means: itself, or
// the kubeconfig's current context.
func (c *clients) effective(context string) string {
	if context == "" && c.kubeconfig != nil {
		return c.kubeconfig.CurrentContext
	}
	return context
}

// checkContext reports a context the kubeconfig does not have.
func (c *clients) checkContext(context string) error {
	if c.missing != nil {
		return c.missing
	}
	if context == "" {
		if c.kubeconfig != nil && c.kubeconfig.Contexts[c.kubeconfig.CurrentContext] == nil {
			return fmt.Errorf("%s has no current context; name one with context", c.source)
		}
		return nil
	}
	if c.kubeconfig == nil {
		return fmt.Errorf("landlord runs in a Pod with its service account and has no kubeconfig contexts; leave context out")
	}
	if c.kubeconfig.Contexts[context] == nil {
		return fmt.Errorf("%s has no context %q; it has %s", c.source, context, strings.Join(c.contexts(), ", "))
	}
	return nil
}

// get returns the client of a context ("" for the current one).
func (c *clients) get(context string) (*cluster, error) {
	context = c.effective(context)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl := c.byCtx[context]; cl != nil {
		return cl, nil
	}
	if err := c.checkContext(context); err != nil {
		return nil, err
	}
	cfg := c.inCluster
	if cfg == nil {
		var err error
		cfg, err = clientcmd.NewNonInteractiveClientConfig(*c.kubeconfig, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: context %s: %w", context, err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = userAgent
	cfg.QPS, cfg.Burst = c.qps, c.burst
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: context %s: %w", context, err)
	}
	cl := &cluster{context: context, kube: kube}
	c.byCtx[context] = cl
	for _, fn := range c.onNew {
		fn(cl)
	}
	return cl, nil
}

// watchNew has fn told of every client, those made so far included,
// until the returned function is called.
func (c *clients) watchNew(fn func(*cluster)) (stop func()) {
	c.mu.Lock()
	if c.onNew == nil {
		c.onNew = map[int]func(*cluster){}
	}
	c.watches++
	key := c.watches
	c.onNew[key] = fn
	existing := slices.Collect(maps.Values(c.byCtx))
	c.mu.Unlock()
	for _, cl := range existing {
		fn(cl)
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.onNew, key)
	}
}
