package main

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// requestTimeout bounds one request, so that a stuck server fails the run
// instead of hanging it.
const requestTimeout = time.Minute

// countingTransport is the load tool's HTTP transport: enough idle
// connections for every worker (the default keeps 2 per host, which makes
// 16 workers dial and close a connection per request) and a count of
// connections opened, to show that they were reused (the client reads every
// answer to its end, which keeps a connection open).
type countingTransport struct {
	base  *http.Transport
	dials atomic.Int64
}

// newTransport returns a transport that keeps conns idle connections.
func newTransport(conns int) *countingTransport {
	t := &countingTransport{}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		t.dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	base.MaxIdleConns = conns
	base.MaxIdleConnsPerHost = conns
	base.IdleConnTimeout = 5 * time.Minute
	t.base = base
	return t
}

// client returns an HTTP client on t.
func (t *countingTransport) client() *http.Client {
	return &http.Client{Transport: t.base, Timeout: requestTimeout}
}

// connections is how many connections were opened.
func (t *countingTransport) connections() int { return int(t.dials.Load()) }
