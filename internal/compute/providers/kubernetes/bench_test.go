package kubernetes_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientset "k8s.io/client-go/kubernetes"

	llclient "github.com/jaxxstorm/landlord/client"
)

// benchTenants is how many tenants BenchmarkLifecycle runs a round.
const benchTenants = 50

// BenchmarkLifecycle creates 50 tenants through `landlord serve` with a
// kubernetes block, against the real API server, waits until all are
// ready, deletes them and waits until all are deleted. It reports the API
// requests one tenant's create → ready → delete costs (from the API
// server's audit log, in all and by verb), the time from the first create
// until all are ready and until all are deleted, and how long after its
// Deployment became available (as a watch of this benchmark saw it) each
// tenant was ready: the controller's poll and resync are an hour, so only
// the change watch can make it ready. Run it alone, once:
//
//	go test -run '^$' -bench Lifecycle -benchtime 1x ./internal/compute/providers/kubernetes/
func BenchmarkLifecycle(b *testing.B) {
	c, kubeconfig := start(b)
	l := startServe(b, kubeconfig, "workers: 16", "poll_interval: 1h", "resync: 1h", "lease_ttl: 3s")
	tenants := l.Client().Tenants()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var ready, deleted time.Duration
	var lags []time.Duration
	byVerb := map[string]int{}
	requests, round := 0, 0
	for b.Loop() {
		round++
		prefix := fmt.Sprintf("bench-%d-", round)
		before, err := c.Requests()
		if err != nil {
			b.Fatal(err)
		}
		available := watchAvailable(ctx, b, c.Client)
		start := time.Now()
		ids := make([]string, benchTenants)
		parallel(benchTenants, func(i int) {
			tn, err := tenants.Create(ctx, llclient.CreateTenantRequest{Name: fmt.Sprintf("%s%02d", prefix, i), ComputeConfig: appConfig("registry.example/app:1")}, llclient.CreateOptions{})
			if err != nil {
				b.Errorf("create: %v", err)
				return
			}
			ids[i] = tn.ID
		})
		if b.Failed() {
			b.FailNow()
		}
		waitAll(ctx, b, tenants, ids, llclient.UntilReady)
		ready += time.Since(start)
		availableAt := available()
		for i, id := range ids {
			at, ok := availableAt[fmt.Sprintf("landlord-%s%02d", prefix, i)]
			if !ok {
				b.Fatalf("the watch never saw tenant %d's Deployment available", i)
			}
			lags = append(lags, readyAt(ctx, b, tenants, id, 1).Sub(at))
		}

		start = time.Now()
		parallel(benchTenants, func(i int) {
			if _, err := tenants.Delete(ctx, ids[i], llclient.DeleteOptions{}); err != nil {
				b.Errorf("delete: %v", err)
			}
		})
		waitAll(ctx, b, tenants, ids, llclient.UntilDeleted)
		deleted += time.Since(start)
		after, err := c.Requests()
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range after[len(before):] {
			byVerb[r.Verb]++
			requests++
		}
	}
	n := float64(round * benchTenants)
	b.ReportMetric(float64(requests)/n, "requests/tenant")
	for _, verb := range slices.Sorted(maps.Keys(byVerb)) {
		b.ReportMetric(float64(byVerb[verb])/n, verb+"/tenant")
	}
	b.ReportMetric(ready.Seconds()/float64(round), "s-to-all-ready")
	b.ReportMetric(deleted.Seconds()/float64(round), "s-to-all-deleted")
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	b.ReportMetric(float64(lags[len(lags)/2].Milliseconds()), "ms-available-to-ready-p50")
	b.ReportMetric(float64(lags[len(lags)*99/100].Milliseconds()), "ms-available-to-ready-p99")
	b.ReportMetric(float64(lags[len(lags)-1].Milliseconds()), "ms-available-to-ready-max")
}

// watchAvailable watches landlord's Deployments and returns a function
// that stops and says when each (by namespace) first became available.
func watchAvailable(ctx context.Context, tb testing.TB, client clientset.Interface) func() map[string]time.Time {
	ctx, cancel := context.WithCancel(ctx)
	w, err := client.AppsV1().Deployments("").Watch(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=landlord"})
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]time.Time{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type == watch.Deleted || !isAvailable(d) {
				continue
			}
			if _, already := seen[d.Namespace]; !already {
				seen[d.Namespace] = time.Now()
			}
		}
	}()
	return func() map[string]time.Time {
		cancel()
		w.Stop()
		<-done
		return seen
	}
}

// waitAll waits until done holds for every tenant.
func waitAll(ctx context.Context, tb testing.TB, tenants *llclient.Tenants, ids []string, done func(llclient.Tenant) (bool, error)) {
	parallel(len(ids), func(i int) {
		// A deleted tenant may already read as not found.
		if _, err := tenants.Wait(ctx, ids[i], done, nil); err != nil && !llclient.IsNotFound(err) {
			tb.Errorf("tenant %s: %v", ids[i], err)
		}
	})
	if tb.Failed() {
		tb.FailNow()
	}
}

// parallel runs fn for i in [0, n), 16 at a time, as API clients would.
func parallel(n int, fn func(i int)) {
	var wg sync.WaitGroup
	limit := make(chan struct{}, 16)
	for i := range n {
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			fn(i)
		})
	}
	wg.Wait()
}
