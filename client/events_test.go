package client_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// The client's event types are the server's, in the catalogue's order.
func TestEventTypesAreTheServers(t *testing.T) {
	var server []string
	for _, ty := range events.Types {
		server = append(server, string(ty))
	}
	if got := client.EventTypes(); !slices.Equal(got, server) {
		t.Errorf("client.EventTypes() = %q\nthe server's events.Types = %q", got, server)
	}
	if !client.IsEventType(client.EventTenantReady) || client.IsEventType("landlord.tenant.readied") {
		t.Error("IsEventType does not tell an event type from another string")
	}
}

// A secret from NewSecret is one the server takes, and no two are alike.
func TestNewSecret(t *testing.T) {
	a, b := client.NewSecret(), client.NewSecret()
	if _, err := events.SecretKey(a); err != nil {
		t.Errorf("NewSecret() = %q: %v", a, err)
	}
	if a == b {
		t.Errorf("NewSecret() returned %q twice", a)
	}
}

// mustSequence is e's sequence as a number.
func mustSequence(t *testing.T, e client.CloudEvent) int64 {
	t.Helper()
	n, err := strconv.ParseInt(e.Sequence, 10, 64)
	if err != nil {
		t.Fatalf("event %s: sequence %q is not a whole number", e.ID, e.Sequence)
	}
	return n
}

// eventTypes are the types of es.
func eventTypes(es []client.CloudEvent) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

// The feed lists every event after a sequence, oldest first, filtered by
// type and paged; a tenant's events carry it.
func TestEventFeed(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Events: true, Controller: true}).Client(t, "")
	feed := c.Events()
	empty, err := feed.List(ctx, client.EventListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Events) != 0 || empty.Next != "0" {
		t.Errorf("the feed of a new server = %+v, want no events and next 0", empty)
	}
	for _, name := range []string{"acme", "beta"} {
		created := mustCreate(t, c, name, appConfig, map[string]string{"tier": "gold"})
		if _, err := c.Tenants().Wait(ctx, created.ID, client.UntilReady, nil); err != nil {
			t.Fatal(err)
		}
	}

	all, err := feed.List(ctx, client.EventListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{client.EventTenantCreated, client.EventTenantReady, client.EventTenantCreated, client.EventTenantReady}
	if got := eventTypes(all.Events); !slices.Equal(got, want) {
		t.Fatalf("feed types = %q, want %q", got, want)
	}
	for i, e := range all.Events {
		if e.SpecVersion != "1.0" || e.ID == "" || e.Source == "" || e.Time.IsZero() || e.Sequence == "" {
			t.Errorf("event %d is not a whole CloudEvent: %+v", i, e)
		}
		d, ok := client.TenantOf(e)
		if !ok || d.Tenant.ID != e.Subject || d.Tenant.Labels["tier"] != "gold" {
			t.Errorf("event %d: TenantOf = %+v, %v; want the tenant %s", i, d, ok, e.Subject)
		}
		if i > 0 && mustSequence(t, e) <= mustSequence(t, all.Events[i-1]) {
			t.Errorf("event %d's sequence %s does not follow %s", i, e.Sequence, all.Events[i-1].Sequence)
		}
	}
	if all.Next != all.Events[3].Sequence {
		t.Errorf("next = %s, want the last event's sequence %s", all.Next, all.Events[3].Sequence)
	}
	if d, ok := client.TenantOf(all.Events[3]); !ok || d.Tenant.Status != client.StatusReady || d.Event.To != client.StatusReady {
		t.Errorf("the ready event's data = %+v, want the tenant ready", d)
	}

	ready, err := feed.List(ctx, client.EventListOptions{Types: []string{client.EventTenantReady}})
	if err != nil || !slices.Equal(eventTypes(ready.Events), []string{client.EventTenantReady, client.EventTenantReady}) {
		t.Errorf("the ready events = %q, %v", eventTypes(ready.Events), err)
	}
	after, err := feed.List(ctx, client.EventListOptions{After: all.Events[1].Sequence, PageSize: 1})
	if err != nil || len(after.Events) != 1 || after.Events[0].ID != all.Events[2].ID || after.Next != all.Events[2].Sequence {
		t.Errorf("a page of one after the second event = %+v, %v; want the third", after, err)
	}

	var paged []string
	for e, err := range feed.All(ctx, client.EventListOptions{PageSize: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, e.ID)
	}
	var ids []string
	for _, e := range all.Events {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(paged, ids) {
		t.Errorf("All in pages of 3 = %q, want %q", paged, ids)
	}

	_, err = feed.List(ctx, client.EventListOptions{Types: []string{"landlord.tenant.readied"}})
	if e := mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalidParameter); len(e.Problem.Errors) != 1 || e.Problem.Errors[0].Parameter != "type" {
		t.Errorf("an unknown type: %v, want a 400 naming the parameter type", err)
	}
	_, err = feed.List(ctx, client.EventListOptions{After: "yesterday"})
	mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalidParameter)
}

// A fake API that answers the stream with problems (RFC 9457, as the
// API's errors are written; a server built without an events store
// answers 501 unavailable, internal/api's errEventsOff): a 503 is retried,
// a 501 is the stream's one error.
func TestEventStreamRetriesOnlyWhatMayPass(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"code":"storage_unavailable","detail":"the database cannot be read now"}`)
			return
		}
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprint(w, `{"code":"unavailable","detail":"this server keeps no events"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var drops, errs []error
	for _, err := range c.Events().Stream(ctx, client.StreamOptions{MinBackoff: time.Millisecond,
		Disconnected: func(err error, _ time.Duration) { drops = append(drops, err) }}) {
		errs = append(errs, err)
	}
	if len(drops) != 1 || !strings.Contains(drops[0].Error(), "cannot be read now") {
		t.Errorf("drops %v, want the 503", drops)
	}
	if len(errs) != 1 {
		t.Fatalf("errors %v, want the 501", errs)
	}
	mustAPIError(t, errs[0], http.StatusNotImplemented, client.CodeUnavailable)
}

// streamed collects a stream's events in the background.
type streamed struct {
	mu     sync.Mutex
	events []client.CloudEvent
	errs   []error
	drops  []string
	done   chan struct{}
}

func startStream(t *testing.T, c *client.Client, opts client.StreamOptions) (*streamed, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &streamed{done: make(chan struct{})}
	opts.Disconnected = func(err error, _ time.Duration) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.drops = append(s.drops, err.Error())
	}
	go func() {
		defer close(s.done)
		for e, err := range c.Events().Stream(ctx, opts) {
			s.mu.Lock()
			if err != nil {
				s.errs = append(s.errs, err)
			} else {
				s.events = append(s.events, e)
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-s.done })
	return s, cancel
}

// waitFor waits until the stream has n events and returns their types.
func (s *streamed) waitFor(t *testing.T, n int) []client.CloudEvent {
	t.Helper()
	var got []client.CloudEvent
	poll.Until(t, fmt.Sprintf("%d events streamed", n), 10*time.Second, func() (bool, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		got = slices.Clone(s.events)
		return len(got) >= n, fmt.Sprintf("%q, errors %v, drops %q", eventTypes(got), s.errs, s.drops)
	})
	return got
}

// The stream yields the events there are, then each as it is written,
// of the types asked for, until its context ends.
func TestEventStream(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Events: true}).Client(t, "")
	mustCreate(t, c, "acme", appConfig, nil)
	all, cancel := startStream(t, c, client.StreamOptions{})
	created, _ := startStream(t, c, client.StreamOptions{Types: []string{client.EventTenantCreated, client.EventTenantDeletionRequested}})
	all.waitFor(t, 1)
	if _, err := c.Tenants().Patch(ctx, "acme", []byte(`{"labels":{"tier":"gold"}}`), client.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "beta", appConfig, nil)
	got := all.waitFor(t, 3)
	if types := eventTypes(got); !slices.Equal(types, []string{client.EventTenantCreated, client.EventTenantChanged, client.EventTenantCreated}) {
		t.Errorf("streamed %q", types)
	}
	if got := eventTypes(created.waitFor(t, 2)); !slices.Equal(got, []string{client.EventTenantCreated, client.EventTenantCreated}) {
		t.Errorf("streamed with a filter %q", got)
	}
	cancel()
	<-all.done
	if len(all.errs) != 0 || len(all.drops) != 0 {
		t.Errorf("a stream that ended with its context: errors %v, drops %q", all.errs, all.drops)
	}

	after, _ := startStream(t, c, client.StreamOptions{After: got[1].Sequence})
	if rest := after.waitFor(t, 1); rest[0].ID != got[2].ID {
		t.Errorf("streamed after %s: %+v, want the event after it", got[1].Sequence, rest[0])
	}

	for _, err := range c.Events().Stream(ctx, client.StreamOptions{Types: []string{"landlord.tenant.readied"}}) {
		mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalidParameter)
	}
}

// cutAfterOne ends each answer of the event stream after its first event,
// as a proxy or a network that drops connections does, and records the
// Last-Event-ID each connection was asked with.
type cutAfterOne struct {
	mu   sync.Mutex
	last []string
}

func (p *cutAfterOne) proxy(t *testing.T, upstream string) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		res.Body = &oneEvent{r: bufio.NewReader(res.Body), c: res.Body}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.last = append(p.last, r.Header.Get("Last-Event-ID"))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// oneEvent reads a stream up to the blank line after its first event.
type oneEvent struct {
	r       *bufio.Reader
	c       io.Closer
	pending []byte
	seen    bool
	done    bool
}

func (o *oneEvent) Read(p []byte) (int, error) {
	if len(o.pending) == 0 {
		if o.done {
			return 0, io.EOF
		}
		line, err := o.r.ReadString('\n')
		if err != nil && line == "" {
			return 0, err
		}
		o.seen = o.seen || strings.HasPrefix(line, "id:")
		o.done = o.seen && line == "\n"
		o.pending = []byte(line)
	}
	n := copy(p, o.pending)
	o.pending = o.pending[n:]
	return n, nil
}

func (o *oneEvent) Close() error { return o.c.Close() }

// A stream whose connection drops reconnects with the sequence of the
// last event it yielded, and yields every event once.
func TestEventStreamReconnects(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Events: true})
	api := srv.Client(t, "")
	for i := range 4 {
		mustCreate(t, api, fmt.Sprintf("t%d", i), appConfig, nil)
	}
	cut := &cutAfterOne{}
	c, err := client.New(client.Config{Address: cut.proxy(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := startStream(t, c, client.StreamOptions{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	got := s.waitFor(t, 4)
	want, err := api.Events().List(ctx, client.EventListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs, wantIDs []string
	for i := range want.Events {
		gotIDs, wantIDs = append(gotIDs, got[i].ID), append(wantIDs, want.Events[i].ID)
	}
	if !slices.Equal(gotIDs, wantIDs) || len(got) != 4 {
		t.Errorf("streamed %q, want %q once each", gotIDs, wantIDs)
	}
	cut.mu.Lock()
	defer cut.mu.Unlock()
	if len(cut.last) < 4 || cut.last[0] != "" || cut.last[1] != want.Events[0].Sequence || cut.last[3] != want.Events[2].Sequence {
		t.Errorf("connections asked with Last-Event-ID %q, want none, then each event's sequence in turn", cut.last)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) != 0 || len(s.drops) < 4 {
		t.Errorf("errors %v, drops %q; want no error and a drop per connection", s.errs, s.drops)
	}
}

// A fake event stream that writes what the server-sent events
// specification allows
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
// lines ended by CR, LF or CRLF, comments, data over several lines, a
// field without a space after its colon, and a message without data,
// which dispatches nothing. It then falls silent, as a lost connection
// does, and the stream takes it for dropped after IdleTimeout.
func TestEventStreamReadsTheFormat(t *testing.T) {
	var connections []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connections = append(connections, r.Header.Get("Last-Event-ID"))
		n := len(connections)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		if n == 1 {
			fmt.Fprint(w, ": keep-alive\r\n\r\n")
			fmt.Fprint(w, "id: 7\revent: landlord.tenant.created\rdata: {\"specversion\":\"1.0\",\r\ndata:\"id\":\"evt_1\",\"type\":\"landlord.tenant.created\",\"sequence\":\"7\"}\r\n\r\n")
			fmt.Fprint(w, "event: nothing\n\n")
			fmt.Fprint(w, "id: 9\nevent: landlord.tenant.ready\ndata: {\"id\":\"evt_2\",\"type\":\"landlord.tenant.ready\",\"sequence\":\"9\"}\n\n")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := startStream(t, c, client.StreamOptions{IdleTimeout: 200 * time.Millisecond, MinBackoff: time.Millisecond})
	got := s.waitFor(t, 2)
	if got[0].ID != "evt_1" || got[0].SpecVersion != "1.0" || got[1].ID != "evt_2" {
		t.Errorf("read %+v", got)
	}
	poll.Until(t, "a reconnection after the silence", 5*time.Second, func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(connections) >= 2, fmt.Sprint(connections)
	})
	mu.Lock()
	if connections[1] != "9" {
		t.Errorf("reconnected with Last-Event-ID %q, want 9", connections[1])
	}
	mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.drops) == 0 || !strings.Contains(s.drops[0], "nothing came for 200ms") {
		t.Errorf("drops %q, want one for the silence", s.drops)
	}
}

// An answer that is not an event stream ends the stream with an error
// saying so, and no retry.
func TestEventStreamRefusesAnotherAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>a proxy's page</html>")
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, err := range c.Events().Stream(ctx, client.StreamOptions{}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"text/html", not an event stream`) {
		t.Errorf("errors %v", errs)
	}
}
