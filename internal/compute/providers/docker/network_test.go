package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/moby/moby/client"
)

// Tenants that share an operator-named network, provisioned in parallel,
// create it once: Docker would accept several networks of one name.
func TestSharedNetworkCreatedOnce(t *testing.T) {
	cli := engine(t)
	image := echoImage(t)[0]
	const shared = testPrefix + "-shared-once"
	block := json.RawMessage(`{"label_prefix": "` + testPrefix + `", "stop_timeout": "1s", "network_name": "` + shared + `"}`)
	p, err := New(context.Background(), Options{Block: block, HashKey: testHashKey, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Close()
		cleanupByLabel(t, cli)
		if ns, err := cli.NetworkList(context.Background(), client.NetworkListOptions{Filters: client.Filters{}.Add("name", shared)}); err == nil {
			for _, n := range ns.Items {
				_, _ = cli.NetworkRemove(context.Background(), n.ID, client.NetworkRemoveOptions{})
			}
		}
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = p.Provision(ctx, benchSpec(fmt.Sprintf("%08x-0000-4000-8000-000000000e70", 0x5e700000+i), image))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("tenant %d: %v", i, err)
		}
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("name", shared)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, nw := range ns.Items {
		if nw.Name == shared {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d networks named %s after parallel provisions, want 1", n, shared)
	}
	for i := range errs {
		_ = p.Destroy(ctx, fmt.Sprintf("%08x-0000-4000-8000-000000000e70", 0x5e700000+i))
	}
}
