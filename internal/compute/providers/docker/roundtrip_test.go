package docker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// engineCalls records the Engine API requests of a Provider.
type engineCalls struct {
	mu      sync.Mutex
	calls   []string
	started map[string]time.Time
	timings []string
}

func (c *engineCalls) respHook(resp *http.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start, ok := c.started[resp.Request.Header.Get("X-Test-Seq")]; ok {
		c.timings = append(c.timings, fmt.Sprintf("%s %s %s", resp.Request.Method, resp.Request.URL.Path, time.Since(start).Round(time.Millisecond)))
	}
}

func (c *engineCalls) hook(req *http.Request) error {
	path := req.URL.Path
	if i := strings.Index(path[1:], "/"); i >= 0 && strings.HasPrefix(path, "/v1.") {
		path = path[i+1:] // drop the version
	}
	c.mu.Lock()
	c.calls = append(c.calls, req.Method+" "+path)
	if c.started == nil {
		c.started = map[string]time.Time{}
	}
	seq := fmt.Sprint(len(c.started))
	req.Header.Set("X-Test-Seq", seq)
	c.started[seq] = time.Now()
	c.mu.Unlock()
	return nil
}

func (c *engineCalls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = nil
	if os.Getenv("LANDLORD_TEST_TIMINGS") != "" {
		fmt.Println(strings.Join(c.timings, "\n"))
	}
	c.timings = nil
	return out
}

// countingProvider is a test provider whose Engine requests are recorded.
func countingProvider(t *testing.T) (*Provider, *engineCalls) {
	t.Helper()
	p := mustProvider(t, &providertest.LogBuffer{})
	calls := &engineCalls{}
	cli, err := client.New(client.FromEnv, client.WithHTTPRequestHook(calls.hook), client.WithHTTPResponseHook(calls.respHook))
	if err != nil {
		t.Fatal(err)
	}
	_ = p.client.Close()
	p.client = cli
	return p, calls
}

// The Engine round trips of one tenant's Provision, repeated Provision,
// status, Inspect and Destroy, the benchmark's and the controller's
// operations: each costs time, so they are counted and bounded.
func TestEngineRoundTrips(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	p, calls := countingProvider(t)
	ctx := context.Background()
	id := benchID(9000)
	// The first request negotiates the API version.
	if err := p.CheckHealth(ctx); err != nil {
		t.Fatal(err)
	}
	calls.take()
	steps := []struct {
		name string
		max  int
		run  func() error
	}{
		{"provision", 8, func() error { _, err := p.Provision(ctx, benchSpec(id, image)); return err }},
		{"provision again", 3, func() error { _, err := p.Provision(ctx, benchSpec(id, image)); return err }},
		{"status", 2, func() error { _, err := p.GetStatus(ctx, id); return err }},
		// The controller's drift check of a ready tenant, at every resync:
		// the image's configuration is read once per image and process.
		{"inspect", 3, func() error { _, err := p.Inspect(ctx, benchSpec(id, image)); return err }},
		{"destroy", 5, func() error { return p.Destroy(ctx, id) }},
		{"destroy again", 2, func() error { return p.Destroy(ctx, id) }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := calls.take()
		t.Logf("%s: %d requests: %s", s.name, len(got), strings.Join(got, ", "))
		if len(got) > s.max {
			t.Errorf("%s made %d Engine requests, want at most %d", s.name, len(got), s.max)
		}
	}
}
