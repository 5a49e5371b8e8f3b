package nomad_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// apiProxy stands between landlord and the agent: it counts landlord's API
// requests by method and path (IDs made placeholders), and can slow job
// registers down, so that a test can kill landlord between two of them.
type apiProxy struct {
	URL string

	mu       sync.Mutex
	requests map[string]int
	delay    time.Duration

	// streams counts the event stream requests written to the agent: the
	// agent tells a stream of every event after it has its request.
	streams atomic.Int64
}

func newAPIProxy(t testing.TB, target string) *apiProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{requests: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // the event stream
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + placeholder(r.URL.Path)
		p.mu.Lock()
		p.requests[key]++
		delay := p.delay
		p.mu.Unlock()
		if delay > 0 && r.Method == http.MethodPut && key == "PUT /v1/jobs" {
			time.Sleep(delay)
		}
		if key == "GET /v1/event/stream" {
			r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { p.streams.Add(1) },
			}))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

var (
	uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	jobPattern  = regexp.MustCompile(`^(/v1/job)/[^/]+`)
	varPattern  = regexp.MustCompile(`^(/v1/var)/.+`)
)

// placeholder replaces the IDs in a path, so that requests of a kind count
// together.
func placeholder(path string) string {
	path = uuidPattern.ReplaceAllString(path, ":id")
	path = jobPattern.ReplaceAllString(path, "$1/:job")
	return varPattern.ReplaceAllString(path, "$1/:path")
}

// slowRegisters delays every job register by d (0: not at all).
func (p *apiProxy) slowRegisters(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// counts returns the requests so far, by kind, and resets them.
func (p *apiProxy) counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := maps.Clone(p.requests)
	clear(p.requests)
	return out
}
