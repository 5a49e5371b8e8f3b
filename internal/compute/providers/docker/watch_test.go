package docker

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// cutAfterFirstWrite ends a proxied response after its first body write,
// as an Engine whose connection breaks mid-stream would.
type cutAfterFirstWrite struct {
	http.ResponseWriter
	cancel context.CancelFunc
}

func (c *cutAfterFirstWrite) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	c.cancel()
	return n, err
}

func (c *cutAfterFirstWrite) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// When the container event stream breaks, WatchChanges opens it again from
// the time of the last event it delivered: a change made while no stream
// was open is still reported, from the Engine's replay. When ctx ends it
// returns nil.
func TestWatchChangesResumesAfterABrokenStream(t *testing.T) {
	cli := dockertest.Engine(t)
	image := dockertest.EchoImage(t)[0]
	cleanupByLabel(t, cli)
	var opened atomic.Int32
	var resumedSince atomic.Value
	release := make(chan struct{})
	engine := engineProxy(t)
	p := behindProxy(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/events") {
			return false
		}
		if !strings.Contains(r.URL.Query().Get("filters"), `"container"`) {
			// Only the container stream is under test: the network one
			// would report the stop too.
			engineAnswers(w, http.StatusServiceUnavailable, "not in this test")
			return true
		}
		switch opened.Add(1) {
		case 1:
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			engine.ServeHTTP(&cutAfterFirstWrite{ResponseWriter: w, cancel: cancel}, r.WithContext(ctx))
			return true
		case 2:
			resumedSince.Store(r.URL.Query().Get("since"))
			<-release
		}
		return false
	})

	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 1024)
	done := make(chan error, 1)
	go func() { done <- p.WatchChanges(ctx, func(id string) { heard <- id }) }()

	direct := mustProvider(t, &providertest.LogBuffer{})
	id := benchID(0x3a7c)
	// The first stream delivers one event of the Provision, then breaks.
	expectNotified(t, heard, id, "after Provision", func() {
		if err := provisionRunning(context.Background(), direct, id, image); err != nil {
			t.Fatal(err)
		}
	})
	eventually(t, "the watch to open the stream again", func() bool { return opened.Load() >= 2 })
	// No stream is open while the container stops.
	if err := direct.stopContainer(context.Background(), tenantContainers(t, cli, id)[0]); err != nil {
		t.Fatal(err)
	}
	for len(heard) > 0 {
		<-heard
	}
	expectNotified(t, heard, id, "after the container stopped while the stream was down", func() { close(release) })
	if since, _ := resumedSince.Load().(string); since == "" {
		t.Errorf("the stream was opened again without since")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchChanges returned %v when its context ended, want nil", err)
	}
	_ = direct.Destroy(context.Background(), id)
}

// expectNotified runs do and waits until heard has id.
func expectNotified(t *testing.T, heard chan string, id, when string, do func()) {
	t.Helper()
	do()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-heard:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("no notification for tenant %s %s", id, when)
		}
	}
}
