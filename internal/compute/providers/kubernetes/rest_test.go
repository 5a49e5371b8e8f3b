package kubernetes_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// TestRequestsAtRest counts the API requests of the checks the controller
// makes of ready tenants at every resync (an Inspect each), with the
// change watch running as in landlord serve: once the informer cache has
// caught up, none. What the cache costs at rest is its watches, one per
// kind and cluster whatever the number of tenants, which client-go's
// reflectors reopen every 5 to 10 minutes. For comparison it counts the
// same checks, and the GetStatusOf that resyncs made before Inspect, on a
// provider without the watch, which reads the API server. It logs each
// figure per check and per tenant per hour at the default resync (60 s).
func TestRequestsAtRest(t *testing.T) {
	t.Parallel()
	c, kubeconfig := start(t)
	ctx := context.Background()
	block := blockOf(kubeconfig, "")
	cached, direct := newProvider(t, block, nil), newProvider(t, block, nil)
	watching(t, cached, nil)
	config := `{"image": "registry.example/app:1", "ports": [{"container_port": 8080}], "secrets": {"K": "v"},
		"resource_quota": {"pods": "3"}, "ingress": {"host": "{name}.example.com"}}`
	const n, rounds = 5, 10
	var specs []*provider.TenantComputeSpec
	namespaces := map[string]bool{}
	for i := range n {
		tn := newTenant(t, cached, fmt.Sprintf("rest-%d", i))
		spec := tn.spec(t, 1, config, nil)
		if _, err := cached.Provision(ctx, spec); err != nil {
			t.Fatal(err)
		}
		tn.waitState(t, running)
		specs = append(specs, spec)
		namespaces["landlord-"+tn.name] = true
	}
	count := func() (int, map[string]int) {
		reqs, err := c.Requests()
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]int{}
		total := 0
		for _, r := range reqs {
			if namespaces[r.Namespace] || (r.Resource == "namespaces" && namespaces[r.Name]) {
				by[r.Verb+" "+r.Resource]++
				total++
			}
		}
		return total, by
	}
	eventually(t, "an Inspect of every tenant that makes no request (the cache has caught up)", func() (bool, string) {
		before, _ := count()
		for _, spec := range specs {
			if _, err := cached.Inspect(ctx, spec); err != nil {
				return false, err.Error()
			}
		}
		after, _ := count()
		return after == before, fmt.Sprintf("%d requests", after-before)
	})
	measure := func(what string, check func(spec *provider.TenantComputeSpec) error) float64 {
		before, was := count()
		for range rounds {
			for _, spec := range specs {
				if err := check(spec); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
		}
		after, now := count()
		for k, v := range was {
			now[k] -= v
			if now[k] == 0 {
				delete(now, k)
			}
		}
		perCheck := float64(after-before) / (n * rounds)
		t.Logf("%s: %.2f requests a check, %.0f a tenant an hour at the default 60 s resync (%s)", what, perCheck, perCheck*60, describeCounts(now))
		return perCheck
	}
	inspect := func(p *kubernetes.Provider) func(*provider.TenantComputeSpec) error {
		return func(spec *provider.TenantComputeSpec) error {
			in, err := p.Inspect(ctx, spec)
			if err == nil && len(in.Drift) > 0 {
				err = fmt.Errorf("drift %v", in.Drift)
			}
			return err
		}
	}
	if got := measure("Inspect from the informer cache", inspect(cached)); got != 0 {
		t.Errorf("checks of ready tenants made %.2f requests each; with the informer cache they make none", got)
	}
	measure("Inspect from the API server (no change watch)", inspect(direct))
	measure("GetStatusOf from the API server (no change watch; what a resync cost before Inspect)", func(spec *provider.TenantComputeSpec) error {
		_, err := direct.GetStatusOf(ctx, provider.TenantRef{ID: spec.TenantID, Name: spec.TenantName, Provider: kubernetes.Name})
		return err
	})
}

func describeCounts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}
