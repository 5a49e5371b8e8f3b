package events_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
)

func TestCheckURL(t *testing.T) {
	g := events.NewGuard(nil)
	allowLoopback := events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	for _, tc := range []struct {
		guard *events.Guard
		url   string
		ok    bool
	}{
		{g, "https://hooks.example.com/landlord", true},
		{g, "https://93.184.215.14:8443/x", true},
		{g, "http://hooks.example.com/landlord", false}, // http off loopback
		{g, "ftp://hooks.example.com/", false},
		{g, "https://user:pass@hooks.example.com/", false}, // credentials would show
		{g, "https://hooks.example.com/#frag", false},
		{g, "/relative", false},
		{g, "https://10.1.2.3/", false},          // private
		{g, "https://169.254.169.254/", false},   // link-local: cloud metadata
		{g, "https://[fd00::1]/", false},         // unique local
		{g, "https://100.64.0.1/", false},        // shared address space
		{g, "https://[::ffff:10.0.0.1]/", false}, // IPv4-mapped private
		{g, "https://0.0.0.0/", false},
		{g, "http://127.0.0.1:9000/", false}, // loopback, not allowed
		{g, "http://localhost:9000/", false}, // the same, by name
		{g, "https://app.localhost/", false}, // RFC 6761: loopback too
		{allowLoopback, "http://127.0.0.1:9000/", true},
		{allowLoopback, "http://localhost:9000/", true}, // name: checked at dial
		{allowLoopback, "https://10.0.0.1/", false},
	} {
		_, err := tc.guard.CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%s): %v, want ok %v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, events.ErrURL) {
			t.Errorf("CheckURL(%s): %v does not wrap ErrURL", tc.url, err)
		}
	}
}

// TestGuardDials checks that the client refuses to connect to an address
// that is not allowed, however the URL names it, and connects once its
// network is allowed.
func TestGuardDials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	get := func(g *events.Guard, url string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := g.Client(5 * time.Second).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	// A name that resolves to loopback is refused at the dial.
	named := "http://localhost:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	if err := get(events.NewGuard(nil), named); !errors.Is(err, events.ErrForbiddenAddress) {
		t.Errorf("GET %s without loopback allowed: %v, want ErrForbiddenAddress", named, err)
	}
	if err := get(events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}), named); err != nil {
		t.Errorf("GET %s with loopback allowed: %v", named, err)
	}
}

// TestRedirectNotFollowed: a 3xx is the answer, not a new request.
func TestRedirectNotFollowed(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	defer srv.Close()
	g := events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	resp, err := g.Client(5 * time.Second).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits != 1 {
		t.Errorf("status %d after %d requests, want the 302 itself", resp.StatusCode, hits)
	}
}

func TestBackoff(t *testing.T) {
	n := events.MaxAttempts(events.DefaultInitial, events.DefaultMaxWait, events.DefaultHorizon)
	var sum time.Duration
	for i := 1; i < n; i++ {
		w := events.Backoff(i, events.DefaultInitial, events.DefaultMaxWait)
		full := min(events.DefaultInitial<<(i-1), events.DefaultMaxWait)
		if i > 20 {
			full = events.DefaultMaxWait
		}
		if w < full/2 || w > full {
			t.Errorf("wait %d is %v, want within [%v, %v]", i, w, full/2, full)
		}
		sum += full
	}
	// The schedule spans the horizon (a day), and not much more.
	if sum < events.DefaultHorizon || sum > events.DefaultHorizon+events.DefaultMaxWait {
		t.Errorf("%d attempts span %v of waits at most, want the horizon %v", n, sum, events.DefaultHorizon)
	}
	t.Logf("%d attempts over %v", n, sum)
}
