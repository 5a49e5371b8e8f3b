package kubernetes_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/computetest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/kubernetes"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Without any cluster configured the provider still starts (discovery
// works), and every call that needs a cluster says how to give it one.
func TestNoClusterConfigured(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", filepath.Join(home, "absent"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	p, err := kubernetes.New(context.Background(), kubernetes.Options{HashKey: hashKey})
	if err != nil {
		t.Fatalf("New without a kubeconfig: %v", err)
	}
	if err := p.CheckHealth(context.Background()); err == nil || !strings.Contains(err.Error(), "set kubeconfig in the kubernetes block") {
		t.Errorf("CheckHealth = %v, want it to say how to configure a cluster", err)
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{})
	res, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "1b4e28ba-2fa1-41d2-883f-0016d3cca427", TenantName: "acme", ComputeConfig: json.RawMessage(`{"image": "app:1"}`)})
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	_, err = p.Provision(context.Background(), res.Spec)
	if !provider.IsRetryable(err) || errors.Is(err, provider.ErrInvalidSpec) || !strings.Contains(err.Error(), "no cluster to talk to") {
		t.Errorf("Provision = %v, want a retryable error (a restart with a kubeconfig fixes it) that is not the tenant's config's fault", err)
	}
	// A kubeconfig the block names that is not there stops start-up.
	if _, err := kubernetes.New(context.Background(), kubernetes.Options{HashKey: hashKey, Block: json.RawMessage(`{"kubeconfig": "/nonexistent/kubeconfig"}`)}); err == nil {
		t.Error("New with a kubeconfig that does not exist succeeded")
	}
	if _, err := os.Stat(filepath.Join(home, ".kube")); !os.IsNotExist(err) {
		t.Errorf("the provider wrote into HOME: %v", err)
	}
}

// The block's settings and tenant defaults are told apart, and unknown
// keys refused with their pointer.
func TestBlock(t *testing.T) {
	for block, pointer := range map[string]string{
		`{"kubeconfig": "/nonexistent", "bogus": 1}`: "/bogus",
		`{"qps": "fast"}`:                  "/qps",
		`{"namespace_mode": "everywhere"}`: "/namespace_mode",
	} {
		// Settings are checked by New, tenant defaults when the provider is
		// registered.
		p, err := kubernetes.New(context.Background(), kubernetes.Options{HashKey: hashKey, Block: json.RawMessage(block)})
		if err == nil {
			err = compute.NewRegistry().Register(p)
		}
		if err == nil || !strings.Contains(err.Error(), pointer) {
			t.Errorf("block %s = %v, want an error at %s", block, err, pointer)
		}
	}
}

// replicas is a count, or the range an autoscaler keeps the count in;
// anything else is refused at /replicas.
func TestReplicasSchema(t *testing.T) {
	p, err := kubernetes.New(context.Background(), kubernetes.Options{HashKey: hashKey, Block: json.RawMessage(`{"kubeconfig": ""}`)})
	if err != nil {
		t.Fatal(err)
	}
	m := computetest.Manager(t, p, compute.ManagerOptions{HashKey: hashKey})
	for config, ok := range map[string]bool{
		`{"image": "app:1", "replicas": 3}`:                            true,
		`{"image": "app:1", "replicas": {"min": 0, "max": 10}}`:        true,
		`{"image": "app:1", "replicas": {"min": 2, "max": 2}}`:         true,
		`{"image": "app:1", "replicas": {"min": 5, "max": 2}}`:         false,
		`{"image": "app:1", "replicas": {"min": 1}}`:                   false,
		`{"image": "app:1", "replicas": {"min": 1, "max": 2, "x": 1}}`: false,
		`{"image": "app:1", "replicas": {"min": 1, "max": 1001}}`:      false,
		`{"image": "app:1", "replicas": -1}`:                           false,
		`{"image": "app:1", "replicas": "3"}`:                          false,
	} {
		_, err := m.Resolve(context.Background(), compute.ResolveRequest{TenantID: "1b4e28ba-2fa1-41d2-883f-0016d3cca427", TenantName: "acme", ComputeConfig: json.RawMessage(config)})
		var pointers []string
		for _, v := range violation.Of(err) {
			pointers = append(pointers, v.Pointer)
		}
		switch {
		case ok && err != nil:
			t.Errorf("%s: %v", config, err)
		case !ok && !slices.ContainsFunc(pointers, func(p string) bool { return strings.HasPrefix(p, "/replicas") }):
			t.Errorf("%s = %v (at %v), want a violation at /replicas", config, err, pointers)
		}
	}
}
