package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// StreamOptions configure a Stream. Zero values take the defaults.
type StreamOptions struct {
	// After is the sequence to stream after: "" from the oldest event the
	// server keeps, else the Sequence of the last event read.
	After string
	// Types keeps the events of these types (EventTypes) only; none keeps
	// every type.
	Types []string
	// MinBackoff and MaxBackoff bound the wait before a reconnection: it
	// starts at MinBackoff (default 500ms, or what the server's retry:
	// field asks for) and doubles, up to MaxBackoff (default 30s), while
	// connections bring nothing, less a random part of up to half of it so
	// that clients dropped together do not all come back at once.
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout is how long a connection may bring nothing, not even the
	// keep-alive comment the server sends every 15 seconds, before it is
	// taken for dropped (a proxy or a network that lost it silently) and
	// another is made. Default 45s.
	IdleTimeout time.Duration
	// Disconnected, when set, is called each time a connection ends or
	// cannot be made and Stream will try again: with why, and how long it
	// waits first. It is how a program shows that it is reconnecting; the
	// client itself never logs.
	Disconnected func(err error, wait time.Duration)
}

// The defaults of StreamOptions.
const (
	// DefaultStreamMinBackoff is the first wait before a reconnection.
	DefaultStreamMinBackoff = 500 * time.Millisecond
	// DefaultStreamMaxBackoff is the longest wait before a reconnection.
	DefaultStreamMaxBackoff = 30 * time.Second
	// DefaultStreamIdleTimeout is how long a connection may bring
	// nothing: three of the server's keep-alive intervals.
	DefaultStreamIdleTimeout = 45 * time.Second
)

// maxStreamEventBytes bounds one line of the stream: a CloudEvent carries
// a tenant with its configs, which the API bounds well below this.
const maxStreamEventBytes = 16 << 20

// Stream follows the feed as server-sent events
// (GET /v1/events/stream), yielding each event after opts.After as it is
// written, oldest first, until ctx ends or the loop stops: the end of ctx
// ends the iteration without an error.
//
// A dropped connection, a silent one (see IdleTimeout), a failure to reach
// the API and an answer of 429 or 5xx (but 501) are retried: Stream
// reconnects after a backoff with the sequence of the last event it
// yielded (Last-Event-ID), so that no event is missed or yielded twice.
// Any other answer (a 400 for a type that is not an event type, 401, 403,
// a 501 from a server that keeps no events) and an event that cannot be
// read are yielded as the one error, and the iteration stops.
//
// A Config.HTTPClient with a Timeout ends every connection at that
// timeout, and Stream then reconnects each time: give the stream a client
// without one.
func (s *Events) Stream(ctx context.Context, opts StreamOptions) iter.Seq2[CloudEvent, error] {
	return func(yield func(CloudEvent, error) bool) {
		st := &stream{c: s.c, opts: opts, cursor: opts.After, yield: yield,
			minBackoff: cmp.Or(opts.MinBackoff, DefaultStreamMinBackoff)}
		failures := 0
		for ctx.Err() == nil {
			brought, err := st.connect(ctx)
			switch {
			case errors.Is(err, errStopped) || ctx.Err() != nil:
				return
			case err != nil && !retryable(err):
				yield(CloudEvent{}, err)
				return
			}
			if brought {
				failures = 0
			}
			wait := backoff(failures, st.minBackoff, cmp.Or(opts.MaxBackoff, DefaultStreamMaxBackoff))
			failures++
			if err == nil {
				err = errors.New("client: the event stream ended")
			}
			if opts.Disconnected != nil {
				opts.Disconnected(err, wait)
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// errStopped: the loop over a Stream stopped.
var errStopped = errors.New("client: the loop over the stream stopped")

// fatalStreamError is an error of a stream that another connection would
// meet again.
type fatalStreamError struct{ err error }

func (e *fatalStreamError) Error() string { return e.err.Error() }
func (e *fatalStreamError) Unwrap() error { return e.err }

// retryable reports whether a connection that ended with err is tried
// again: the API could not be reached, the connection dropped, or the API
// answered 429 or 5xx but 501.
func retryable(err error) bool {
	var fatal *fatalStreamError
	if errors.As(err, &fatal) {
		return false
	}
	var ce *Error
	if !errors.As(err, &ce) {
		return true
	}
	return ce.Status == http.StatusTooManyRequests || (ce.Status >= 500 && ce.Status != http.StatusNotImplemented)
}

// backoff is the wait after failures connections in a row that brought
// nothing: min doubled that many times, at most max, less a random part of
// up to half.
func backoff(failures int, minWait, maxWait time.Duration) time.Duration {
	wait := minWait
	for range failures {
		if wait >= maxWait/2 {
			wait = maxWait
			break
		}
		wait *= 2
	}
	wait = min(wait, maxWait)
	return wait - rand.N(wait/2+1)
}

// stream is the state of a Stream across its connections.
type stream struct {
	c          *Client
	opts       StreamOptions
	cursor     string // the last event's id, sent as Last-Event-ID
	minBackoff time.Duration
	yield      func(CloudEvent, error) bool
}

// connect makes one connection and yields its events until it ends. It
// reports whether the connection brought anything (an event or a comment),
// which starts the backoff over, and why it ended: errStopped when the loop
// stopped, a *fatalStreamError or a non-retryable *Error when it must not
// be tried again.
func (st *stream) connect(ctx context.Context) (brought bool, err error) {
	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := cmp.Or(st.opts.IdleTimeout, DefaultStreamIdleTimeout)
	var idled atomic.Bool
	timer := time.AfterFunc(idle, func() { idled.Store(true); cancel() })
	defer timer.Stop()

	req := request{method: "GET", path: "/v1/events/stream", query: feedQuery(st.cursor, st.opts.Types), accept: "text/event-stream"}
	if st.cursor != "" {
		req.header = http.Header{"Last-Event-ID": {st.cursor}}
	}
	res, err := st.c.send(connCtx, req)
	if err != nil {
		if idled.Load() {
			return false, fmt.Errorf("client: GET /v1/events/stream: no answer in %s", idle)
		}
		return false, err
	}
	defer func() { _ = res.Body.Close() }() // unread: the stream never ends by itself
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, &fatalStreamError{fmt.Errorf("client: GET /v1/events/stream: the answer is %q, not an event stream; is the address landlord's API?", res.Header.Get("Content-Type"))}
	}

	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamEventBytes)
	sc.Split(scanStreamLines)
	var (
		data      bytes.Buffer
		eventType string
		id        = st.cursor
	)
	for sc.Scan() {
		timer.Reset(idle)
		line := sc.Bytes()
		if len(line) == 0 {
			ev, dispatched, err := st.dispatch(eventType, &data, id)
			eventType = ""
			if err != nil {
				return brought, err
			}
			if !dispatched {
				continue
			}
			brought = true
			timer.Stop() // a slow loop is not a silent server
			if !st.yield(ev, nil) {
				return brought, errStopped
			}
			timer.Reset(idle)
			continue
		}
		if line[0] == ':' {
			brought = true // a comment: the server's keep-alive
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			eventType = string(value)
		case "data":
			data.Write(value)
			data.WriteByte('\n')
		case "id":
			if !bytes.ContainsRune(value, 0) {
				id = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 32); err == nil && ms > 0 {
				st.minBackoff = time.Duration(ms) * time.Millisecond
			}
		}
	}
	err = sc.Err()
	switch {
	case idled.Load():
		return brought, fmt.Errorf("client: GET /v1/events/stream: nothing came for %s, not even a keep-alive", idle)
	case ctx.Err() != nil:
		return brought, ctx.Err()
	case errors.Is(err, bufio.ErrTooLong):
		return brought, &fatalStreamError{fmt.Errorf("client: GET /v1/events/stream: an event is longer than %d bytes", maxStreamEventBytes)}
	case err != nil:
		return brought, fmt.Errorf("client: GET /v1/events/stream: %w", err)
	}
	return brought, fmt.Errorf("client: GET /v1/events/stream: %w", io.ErrUnexpectedEOF)
}

// dispatch reads the message that a blank line ended: an event to yield,
// nothing (no data), or the error the server sent (event: error) before it
// ended the stream. It moves the cursor to the event's id.
func (st *stream) dispatch(eventType string, data *bytes.Buffer, id string) (CloudEvent, bool, error) {
	if data.Len() == 0 {
		return CloudEvent{}, false, nil
	}
	raw := bytes.TrimSuffix(data.Bytes(), []byte("\n"))
	defer data.Reset()
	if eventType == "error" {
		var p struct {
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(raw, &p)
		return CloudEvent{}, false, fmt.Errorf("client: the event stream ended: %s", cmp.Or(p.Detail, strings.TrimSpace(string(raw))))
	}
	var ev CloudEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return CloudEvent{}, false, &fatalStreamError{fmt.Errorf("client: GET /v1/events/stream: an event after sequence %s is not a CloudEvent: %w", cmp.Or(st.cursor, "0"), err)}
	}
	// The event's sequence is the server's id for it; the id field stands
	// in for an event without one.
	st.cursor = cmp.Or(ev.Sequence, id)
	return ev, true, nil
}

// scanStreamLines splits a stream into lines as server-sent events end
// them (https://html.spec.whatwg.org/multipage/server-sent-events.html#parsing-an-event-stream):
// at CRLF, LF or CR.
func scanStreamLines(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			switch {
			case i+1 < len(data) && data[i+1] == '\n':
				return i + 2, data[:i], nil
			case i+1 < len(data) || atEOF:
				return i + 1, data[:i], nil
			}
			return 0, nil, nil // a LF may follow
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
