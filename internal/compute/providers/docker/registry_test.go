package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
)

// testRegistry is an in-memory OCI registry served by the test process on
// 127.0.0.1, which the Engine treats as an insecure registry it may reach
// over plain HTTP. Its Handler may be wrapped to fail in chosen ways.
type testRegistry struct {
	// Host is host:port, the registry part of image references.
	Host string
	cli  *client.Client
	srv  *http.Server
}

// stop stops serving the registry; its port is free again.
func (r *testRegistry) stop() { _ = r.srv.Close() }

// startRegistry serves handler (nil means a working registry) on a free
// loopback port until the test ends.
func startRegistry(t *testing.T, cli *client.Client, handler http.Handler) *testRegistry {
	t.Helper()
	if handler == nil {
		handler = newTestRegistry()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &testRegistry{Host: ln.Addr().String(), cli: cli, srv: srv}
}

// push writes img to the registry as repo:tag and returns its reference.
// Whatever the Engine pulls of it is removed when the test ends.
func (r *testRegistry) push(t *testing.T, repo, tag string, img v1.Image) string {
	t.Helper()
	ref := r.Host + "/" + repo + ":" + tag
	r.removeFromEngine(t, ref)
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(parsed, img); err != nil {
		t.Fatalf("push %s to the test registry: %v", ref, err)
	}
	return ref
}

// removeFromEngine removes ref from the Engine now and when the test ends.
func (r *testRegistry) removeFromEngine(t *testing.T, ref string) {
	t.Helper()
	remove := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = r.cli.ImageRemove(ctx, ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	}
	remove()
	t.Cleanup(remove)
}

// echoRegistryImage is the echo server as a registry image: the binary plus
// padding layers of random bytes, so that a pull has several layers to
// report on.
func echoRegistryImage(t *testing.T, padding int, paddingBytes int64) v1.Image {
	t.Helper()
	binary, err := dockertest.EchoBinary()
	if err != nil {
		t.Fatalf("build the echo server: %v", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "echo", Mode: 0o755, Size: int64(len(binary)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(binary); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.DockerLayer))
	if err != nil {
		t.Fatal(err)
	}
	layers := []v1.Layer{layer}
	for range padding {
		l, err := random.Layer(paddingBytes, types.DockerLayer)
		if err != nil {
			t.Fatal(err)
		}
		layers = append(layers, l)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layers...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", runtime.GOARCH
	cfg.Config.Entrypoint = []string{"/echo"}
	cfg.Config.Labels = map[string]string{"landlord-test": "echo-registry"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// countingHandler counts the manifest requests a registry answers: one per
// pull the Engine attempts.
type countingHandler struct {
	next      http.Handler
	manifests atomic.Int64
}

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "/manifests/") && r.Method != http.MethodPut {
		h.manifests.Add(1)
	}
	h.next.ServeHTTP(w, r)
}

// slowBlobs serves blobs at about chunk bytes per tick, so that a pull lasts
// long enough to report progress.
func slowBlobs(next http.Handler, chunk int, tick time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			w = &slowWriter{ResponseWriter: w, chunk: chunk, tick: tick}
		}
		next.ServeHTTP(w, r)
	})
}

type slowWriter struct {
	http.ResponseWriter
	chunk int
	tick  time.Duration
}

func (w *slowWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		part := b[:min(len(b), w.chunk)]
		m, err := w.ResponseWriter.Write(part)
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		b = b[len(part):]
		time.Sleep(w.tick)
	}
	return n, nil
}

// newTestRegistry returns a working in-memory registry handler.
func newTestRegistry() http.Handler { return registry.New(registry.Logger(log.New(io.Discard, "", 0))) }
