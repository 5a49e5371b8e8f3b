package main

import (
	"context"
	"io"
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
// 16 workers dial and close a connection per request), bodies drained on
// close so that connections are reused, and a count of connections opened
// to show that they were.
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

// RoundTrip sends req on a pooled connection.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Body = drainingBody{res.Body}
	return res, nil
}

// client returns an HTTP client on t.
func (t *countingTransport) client() *http.Client {
	return &http.Client{Transport: t, Timeout: requestTimeout}
}

// connections is how many connections were opened.
func (t *countingTransport) connections() int { return int(t.dials.Load()) }

// maxDrain bounds what Close reads of a body nobody finished.
const maxDrain = 64 << 10

// drainingBody reads what a JSON decoder leaves of an answer (the newline
// after the value, the last chunk of a chunked body) before closing it: a
// body closed before its end closes its connection too.
type drainingBody struct{ io.ReadCloser }

func (b drainingBody) Close() error {
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, maxDrain))
	return b.ReadCloser.Close()
}
