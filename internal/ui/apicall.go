package ui

import (
	"bytes"
	"net/http"

	"github.com/jaxxstorm/landlord/client"
)

// The console reads and writes through the API, in the same process: it
// is one more client, with no second path to the store and no rules of its
// own.

// apiAddress is the base URL of in-process calls; nothing is dialled.
const apiAddress = "http://landlord.internal"

// handlerTransport sends a request to an http.Handler in the process.
type handlerTransport struct {
	h http.Handler
	// requestID is the console request's id, sent along so that the API's
	// log lines of its calls carry it.
	requestID string
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// The API's router writes to the request it serves: give it a copy.
	req = req.Clone(req.Context())
	if t.requestID != "" {
		req.Header.Set("X-Request-ID", t.requestID)
	}
	rec := &recorder{header: http.Header{}}
	t.h.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: http.StatusText(rec.status), StatusCode: rec.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: readCloser{bytes.NewReader(rec.body.Bytes())},
		ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// recorder is the http.ResponseWriter of an in-process call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// apiAs returns a client that calls the API with token; requestID is the
// console request's.
func (c *Console) apiAs(token, requestID string) *client.Client {
	cl, _ := client.New(client.Config{Address: apiAddress, Token: token,
		HTTPClient: &http.Client{Transport: handlerTransport{h: c.opts.API, requestID: requestID}}})
	return cl
}

var _ http.RoundTripper = handlerTransport{}
