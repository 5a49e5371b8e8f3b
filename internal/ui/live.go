package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// Live updates: the store announces the ids of tenants that changed, on
// every replica (tenant.ChangeFeed); the hub hands each to the streams of
// the pages that show it, and each stream reads the tenant again through
// the API, as its user, and sends the parts of the page that show it,
// rendered by the templates that made the page, as a server-sent event.
// Nothing polls but a rollout's page, whose changes the feed does not
// announce (rolloutlive.go).

// hub fans announcements out to streams.
type hub struct {
	mu     sync.Mutex
	subs   map[*stream]struct{}
	closed bool
}

// stream is one page's subscription.
type stream struct {
	ids map[string]bool
	ch  chan string
	// missed says announcements were dropped for want of room: the stream
	// reads all of its tenants again.
	missed bool
}

// streamBuffer is how many announcements a stream may fall behind by.
const streamBuffer = 256

func newHub() *hub { return &hub{subs: map[*stream]struct{}{}} }

// run hands out announcements until ch closes.
func (h *hub) run(ch <-chan string) {
	for id := range ch {
		h.publish(id)
	}
	h.close()
}

func (h *hub) publish(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if id != "" && !s.ids[id] {
			continue
		}
		select {
		case s.ch <- id:
		default:
			s.missed = true
		}
	}
}

// subscribe returns a stream of the announcements of ids; nil when the hub
// is closed.
func (h *hub) subscribe(ids []string) *stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	s := &stream{ids: map[string]bool{}, ch: make(chan string, streamBuffer)}
	for _, id := range ids {
		s.ids[id] = true
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// takeMissed reports and clears the stream's missed mark.
func (h *hub) takeMissed(s *stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := s.missed
	s.missed = false
	return m
}

// close ends every stream.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.ch)
	}
}

// maxStreamTenants bounds the tenants one stream follows.
const maxStreamTenants = 200

// heartbeat keeps a stream's connection from looking idle to proxies.
const heartbeat = 25 * time.Second

// update is the data of one event: the tenant's parts of the page, by
// element id.
type update struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Status    string            `json:"status"`
	Fragments map[string]string `json:"fragments"`
}

func (c *Console) liveStream(x *call) error {
	q := x.r.URL.Query()
	view := q.Get("view")
	if view == "rollout" {
		return c.rolloutStream(x, q.Get("rollout"))
	}
	ids := slices.Clone(q["tenant"])
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if (view != "list" && view != "tenant") || len(ids) > maxStreamTenants || (view == "tenant" && len(ids) != 1) {
		http.Error(x.w, fmt.Sprintf("follow one tenant with view=tenant, at most %d with view=list, or a rollout with view=rollout", maxStreamTenants), http.StatusBadRequest)
		return nil
	}
	s := c.live.subscribe(ids)
	if s == nil {
		http.Error(x.w, "landlord is stopping", http.StatusServiceUnavailable)
		return nil
	}
	defer c.live.unsubscribe(s)
	rc, err := openStream(x.w)
	if err != nil {
		return nil
	}
	// What changed between the page's render and this subscription would
	// be missed: send the tenants as they are now, once.
	for _, id := range ids {
		if err := c.sendUpdate(x, rc, view, id); err != nil {
			return nil
		}
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-x.r.Context().Done():
			return nil
		case <-c.ctx.Done():
			return nil
		case <-tick.C:
			if !c.stillSignedIn(x, rc) {
				return nil
			}
			if err := send(rc, x.w, ": ping\n\n"); err != nil {
				return nil
			}
		case id, ok := <-s.ch:
			if !ok || !c.stillSignedIn(x, rc) {
				return nil
			}
			// Coalesce what else is waiting.
			pending := []string{id}
			for more := true; more; {
				select {
				case next, ok := <-s.ch:
					if !ok {
						return nil
					}
					pending = append(pending, next)
				default:
					more = false
				}
			}
			if c.live.takeMissed(s) || slices.Contains(pending, "") {
				pending = slices.Clone(ids)
			}
			slices.Sort(pending)
			for _, id := range slices.Compact(pending) {
				if err := c.sendUpdate(x, rc, view, id); err != nil {
					return nil // the stream ends; the browser connects again
				}
			}
		}
	}
}

// sendUpdate reads a tenant and sends its parts of the page.
func (c *Console) sendUpdate(x *call, rc *http.ResponseController, view, id string) error {
	u := update{ID: id, Fragments: map[string]string{}}
	var err error
	if view == "list" {
		var t *client.Tenant
		t, err = x.api.Tenants().Get(x.r.Context(), id, client.GetOptions{IncludeDeleted: true})
		if err == nil {
			u.Name, u.Status = t.Name, t.Status
			u.Fragments["t-"+id], err = c.fragment("tenantRow", tenantRow{*t})
		}
	} else {
		var v *tenantView
		v, err = c.tenantView(x, id, false)
		if err == nil {
			u.Name, u.Status = v.T.Name, v.T.Status
			for _, part := range []string{"summary", "actions", "history"} {
				if u.Fragments[part], err = c.fragment(part, v); err != nil {
					break
				}
			}
		}
	}
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
		return nil
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusUnauthorized:
		_ = send(rc, x.w, signedOut)
		return err
	case err != nil:
		c.log.WarnContext(x.r.Context(), "console: live update", "tenant_id", id, "error", err)
		return nil
	}
	data, _ := json.Marshal(u)
	return send(rc, x.w, "event: tenant\ndata: "+string(data)+"\n\n")
}

// signedOut tells a page that its session ended: it reloads, and is sent
// to sign in.
const signedOut = "event: signedout\ndata: {}\n\n"

// stillSignedIn says the stream's session is still recorded, and tells the
// page when it is not: a stream opened before a sign-out, here or in
// another browser, ends with it rather than going on with the token. A
// session that cannot be checked now goes on until the next check.
func (c *Console) stillSignedIn(x *call, rc *http.ResponseController) bool {
	if x.sess.ID == "" {
		return true
	}
	sess, err := c.recorded(x.r.Context(), x.sess)
	if err != nil || sess != nil {
		return true
	}
	_ = send(rc, x.w, signedOut)
	return false
}

// streamWriteTimeout bounds each write of a stream: the server's write
// timeout is for requests, not streams, but a browser that stops reading
// must not hold a stream, and its subscription, for ever.
const streamWriteTimeout = 10 * time.Second

// send writes one event of a stream and flushes it, within
// streamWriteTimeout.
// openStream answers a stream of server-sent events: its headers, and the
// client's reconnection delay as the first event. An error means the client
// has gone.
func openStream(w http.ResponseWriter) (*http.ResponseController, error) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return rc, send(rc, w, "retry: 2000\n\n")
}

func send(rc *http.ResponseController, w http.ResponseWriter, event string) error {
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := io.WriteString(w, event); err != nil {
		return err
	}
	return rc.Flush()
}
