package api

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// The event feed (GET /v1/events and its stream) and the webhook
// subscriptions (/v1/subscriptions), over the outbox (internal/events).

// errEventsOff is the problem of the events routes on a server built
// without an events store.
var errEventsOff = problem(http.StatusNotImplemented, wire.CodeUnavailable, "this server keeps no events")

func (s *Server) needEvents() error {
	if s.opts.Events == nil || s.opts.EventEncoder == nil {
		return errEventsOff
	}
	return nil
}

// readEventsRequest reads the JSON body of a request to the events routes
// into req, strictly, with one of the content types given, once the
// server is known to keep events.
func (s *Server) readEventsRequest(w http.ResponseWriter, r *http.Request, req any, types ...string) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	body, err := s.readRaw(w, r, types...)
	if err != nil {
		return err
	}
	return decodeStrict(body, req)
}

// feedParams reads after= (or Last-Event-ID), type= and page_size=.
func feedParams(r *http.Request) (after int64, types []events.Type, size int, err error) {
	var ok bool
	q := r.URL.Query()
	cursor := q.Get("after")
	if last := r.Header.Get("Last-Event-ID"); last != "" && cursor == "" {
		cursor = last
	}
	if cursor == "latest" {
		after = latest
	} else if after, ok = events.ParsePosition(cursor); !ok {
		return 0, nil, 0, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("after %s is not a sequence this feed returned", wire.Quote(cursor)),
			wire.FieldError{Parameter: "after", Message: "must be the sequence of an event (a whole number), latest for what is written from now on, or absent for the oldest kept"})
	}
	for _, v := range q["type"] {
		for t := range strings.SplitSeq(v, ",") {
			if !events.Known(events.Type(t)) {
				return 0, nil, 0, problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("type %s is not an event type; docs/events.md lists them", wire.Quote(t)),
					wire.FieldError{Parameter: "type", Message: "must be an event type such as " + string(events.TenantReady)})
			}
			types = append(types, events.Type(t))
		}
	}
	if size, err = pageSize(r); err != nil {
		return 0, nil, 0, err
	}
	return after, types, cmp.Or(size, tenant.DefaultPageSize), nil
}

// encodeRecords writes records as CloudEvents.
func (s *Server) encodeRecords(recs []events.Record) ([]wire.CloudEvent, [][]byte, error) {
	out := make([]wire.CloudEvent, len(recs))
	raw := make([][]byte, len(recs))
	for i := range recs {
		b, err := s.opts.EventEncoder.Encode(&recs[i])
		if err != nil {
			return nil, nil, err
		}
		raw[i] = b
		if err := decodeTrusted(b, &out[i]); err != nil {
			return nil, nil, err
		}
	}
	return out, raw, nil
}

// latest is feedParams' after for after=latest: the feed's head when the
// request is served (resolved by readFeed).
const latest = -1

// readFeed reads the feed after a position. It first gives positions to
// what committed (events.Store.SequenceOutbox: a no-op on SQLite), so that
// the feed moves on PostgreSQL whether or not a dispatcher runs.
func (s *Server) readFeed(ctx context.Context, after int64, limit int, types []events.Type) ([]events.Record, error) {
	if _, err := s.opts.Events.SequenceOutbox(ctx, sequenceBatch); err != nil {
		return nil, err
	}
	return s.opts.Events.ReadOutbox(ctx, after, limit, types)
}

// resolveLatest returns after, or the feed's head when it is latest.
func (s *Server) resolveLatest(ctx context.Context, after int64) (int64, error) {
	if after != latest {
		return after, nil
	}
	if _, err := s.opts.Events.SequenceOutbox(ctx, sequenceBatch); err != nil {
		return 0, err
	}
	return s.opts.Events.OutboxHead(ctx)
}

// sequenceBatch bounds the events a read of the feed positions.
const sequenceBatch = 1000

func (s *Server) listFeed(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	after, types, size, err := feedParams(r)
	if err != nil {
		return err
	}
	if after, err = s.resolveLatest(r.Context(), after); err != nil {
		return err
	}
	recs, err := s.readFeed(r.Context(), after, size, types)
	if err != nil {
		return err
	}
	evs, _, err := s.encodeRecords(recs)
	if err != nil {
		return err
	}
	out := wire.EventFeed{Events: evs, Next: events.FormatPosition(after)}
	if len(recs) > 0 {
		out.Next = events.FormatPosition(recs[len(recs)-1].Position)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// eventStreamBody is the body of GET /v1/events/stream.
type eventStreamBody struct{}

func (eventStreamBody) openAPIContent() openapi3.Content {
	return openapi3.Content{"text/event-stream": openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())}
}

// streamKeepAlive is how often a quiet stream sends a comment, so that
// proxies keep it open and a client learns that it is.
const streamKeepAlive = 15 * time.Second

// streamFeed serves the feed as server-sent events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): each
// event's id is its sequence, so that a client that reconnects with
// Last-Event-ID resumes after the last it had.
func (s *Server) streamFeed(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	after, types, _, err := feedParams(r)
	if err != nil {
		return err
	}
	if after, err = s.resolveLatest(r.Context(), after); err != nil {
		return err
	}
	ctx := r.Context()
	// The first page is read before the answer starts, so that a database
	// that cannot be read is a problem (503), not a stream that ends.
	recs, err := s.readFeed(ctx, after, tenant.MaxPageSize, types)
	if err != nil {
		return err
	}
	var wake <-chan string
	if s.opts.Changes != nil {
		if ch, err := s.opts.Changes.Changes(ctx); err == nil {
			wake = ch
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if err := rc.Flush(); err != nil {
		return nil // the client is gone
	}
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	quiet := time.Now()
	for {
		_, raw, err := s.encodeRecords(recs)
		if err != nil {
			s.log.Warn("event stream: cannot encode an event", slog.Any("error", err))
			return nil
		}
		for i, rec := range recs {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", rec.Position, rec.Type, raw[i]); err != nil {
				return nil
			}
			after = rec.Position
		}
		switch {
		case len(recs) > 0:
			quiet = time.Now()
			if err := rc.Flush(); err != nil {
				return nil
			}
		case time.Since(quiet) >= streamKeepAlive:
			quiet = time.Now()
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
		}
		if len(recs) < tenant.MaxPageSize {
			select {
			case <-ctx.Done():
				return nil
			case <-poll.C:
			case _, ok := <-wake:
				if !ok {
					wake = nil
				}
			}
		}
		if recs, err = s.readFeed(ctx, after, tenant.MaxPageSize, types); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("event stream: cannot read the outbox", slog.Any("error", err))
				_, _ = fmt.Fprint(w, "event: error\ndata: {\"detail\":\"cannot read the events now; reconnect with Last-Event-ID\"}\n\n")
				_ = rc.Flush()
			}
			return nil
		}
	}
}

// renderSubscription is the API's view of a subscription: no secret.
func renderSubscription(sub *events.Subscription) wire.Subscription {
	out := wire.Subscription{ID: sub.ID, Name: sub.Name, URL: sub.URL, Labels: sub.Labels, Description: sub.Description,
		Enabled: sub.Enabled, DisabledReason: sub.DisabledReason, Version: sub.Version, CreatedAt: sub.CreatedAt, UpdatedAt: sub.UpdatedAt,
		CreatedBy: sub.CreatedBy, Secrets: make([]wire.SecretInfo, len(sub.Secrets)), Deliveries: &wire.DeliveryCount{Pending: sub.Pending}}
	for _, t := range sub.Types {
		out.Types = append(out.Types, string(t))
	}
	for i, sec := range sub.Secrets {
		out.Secrets[i] = wire.SecretInfo{CreatedAt: sec.CreatedAt, ExpiresAt: sec.ExpiresAt}
	}
	return out
}

// subscriptionRules checks what a subscription is given, each problem at
// its pointer.
func (s *Server) subscriptionRules(errs *violation.List, url *string, types *[]string, labels *map[string]string) []events.Type {
	if url != nil {
		if _, err := s.opts.EventGuard.CheckURL(*url); err != nil {
			errs.Add("/url", "%s", strings.TrimPrefix(err.Error(), events.ErrURL.Error()+": "))
		}
	}
	var out []events.Type
	if types != nil {
		for i, t := range *types {
			if !events.Known(events.Type(t)) {
				errs.Add(fmt.Sprintf("/types/%d", i), "%s is not an event type; docs/events.md lists them", wire.Quote(t))
			}
			out = append(out, events.Type(t))
		}
	}
	if labels != nil {
		if err := tenant.ValidateSelector(*labels); err != nil {
			for _, v := range violation.Of(err) {
				errs.Add("/labels"+strings.TrimPrefix(v.Pointer, "/label"), "%s", v.Message)
			}
		}
	}
	return out
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateSubscriptionRequest
	if err := s.readEventsRequest(w, r, &req, contentJSON); err != nil {
		return err
	}
	var errs violation.List
	switch {
	case req.Name == "":
		errs.Add("/name", "is required")
	case !subscriptionName.MatchString(req.Name):
		errs.Add("/name", "%s must be a lowercase DNS label: 1 to 63 of a-z, 0-9 and -, starting and ending with a letter or digit", wire.Quote(req.Name))
	case tenant.IsID(req.Name):
		errs.Add("/name", "%s reads as a subscription id; choose a name that is not a UUID", wire.Quote(req.Name))
	}
	if req.URL == "" {
		errs.Add("/url", "is required: the https URL deliveries are posted to")
	}
	checkSecret(&errs, req.Secret)
	types := s.subscriptionRules(&errs, &req.URL, &req.Types, &req.Labels)
	if len(errs) > 0 {
		return invalidSubscription(errs)
	}
	now := s.opts.Now().UTC()
	sub := &events.Subscription{ID: tenant.NewID(), Name: req.Name, URL: req.URL, Types: types, Labels: req.Labels,
		Description: req.Description, Enabled: req.Enabled == nil || *req.Enabled, CreatedBy: actor(r)}
	sealed, err := events.SealSecret(s.opts.EventKeys, sub.ID, req.Secret)
	if err != nil {
		return err
	}
	sub.Secrets = []events.Secret{{Value: sealed, CreatedAt: tenant.Timestamp(now)}}
	sub, err = s.opts.Events.CreateSubscription(r.Context(), sub)
	if err != nil {
		return err
	}
	s.log.Info("subscription created", slog.String("subscription", sub.Name), slog.String("url", sub.URL), slog.String("actor", actor(r)))
	w.Header().Set("Location", "/v1/subscriptions/"+sub.Name)
	w.Header().Set("ETag", etag(sub.Version))
	writeJSON(w, http.StatusCreated, renderSubscription(sub))
	return nil
}

// subscriptionName is the rule of a subscription's name: a lowercase DNS
// label, as tenants' and plans' names are.
var subscriptionName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkSecret adds the problem of a secret that is not whsec_ and the
// base64 of 24 to 64 bytes, without quoting it.
func checkSecret(errs *violation.List, secret string) {
	if _, err := events.SecretKey(secret); err != nil {
		errs.Add("/secret", "%s", err.Error())
	}
}

// invalidSubscription is the problem of a subscription's broken rules.
func invalidSubscription(errs violation.List) error {
	fields := make([]wire.FieldError, len(errs))
	for i, v := range errs {
		fields[i] = wire.FieldError{Pointer: v.Pointer, Message: v.Message}
	}
	return problem(http.StatusUnprocessableEntity, wire.CodeInvalidBody, "the subscription breaks the rules; each error names its field", fields...)
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	subs, err := s.opts.Events.Subscriptions(r.Context())
	if err != nil {
		return err
	}
	out := wire.SubscriptionList{Subscriptions: make([]wire.Subscription, len(subs))}
	for i, sub := range subs {
		out.Subscriptions[i] = renderSubscription(sub)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(sub.Version))
	writeJSON(w, http.StatusOK, renderSubscription(sub))
	return nil
}

// changeSubscription reads the subscription of the path, checks If-Match,
// applies change and writes it.
func (s *Server) changeSubscription(w http.ResponseWriter, r *http.Request, change func(sub *events.Subscription) error) error {
	versions, err := parseIfMatch(r)
	if err != nil {
		return err
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	if versions != nil && !slices.Contains(versions, sub.Version) {
		return problem(http.StatusPreconditionFailed, wire.CodePreconditionFailed,
			fmt.Sprintf("the subscription is at version %d, not the ETag in If-Match; read it again", sub.Version))
	}
	if err := change(sub); err != nil {
		return err
	}
	sub, err = s.opts.Events.UpdateSubscription(r.Context(), sub)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag(sub.Version))
	writeJSON(w, http.StatusOK, renderSubscription(sub))
	return nil
}

func (s *Server) updateSubscription(w http.ResponseWriter, r *http.Request) error {
	var req wire.UpdateSubscriptionRequest
	if err := s.readEventsRequest(w, r, &req, contentJSON); err != nil {
		return err
	}
	var errs violation.List
	types := s.subscriptionRules(&errs, req.URL, req.Types, req.Labels)
	if len(errs) > 0 {
		return invalidSubscription(errs)
	}
	return s.changeSubscription(w, r, func(sub *events.Subscription) error {
		if req.URL != nil {
			sub.URL = *req.URL
		}
		if req.Types != nil {
			sub.Types = types
		}
		if req.Labels != nil {
			sub.Labels = *req.Labels
		}
		if req.Description != nil {
			sub.Description = *req.Description
		}
		if req.Enabled != nil {
			if *req.Enabled && !sub.Enabled {
				sub.DisabledReason = ""
			}
			sub.Enabled = *req.Enabled
		}
		s.log.Info("subscription changed", slog.String("subscription", sub.Name), slog.Bool("enabled", sub.Enabled), slog.String("actor", actor(r)))
		return nil
	})
}

// DefaultPreviousSecret is how long a rotated-out secret keeps signing.
const DefaultPreviousSecret = 24 * time.Hour

func (s *Server) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	var req wire.RotateSecretRequest
	if err := s.readEventsRequest(w, r, &req, contentJSON); err != nil {
		return err
	}
	var errs violation.List
	checkSecret(&errs, req.Secret)
	keep := DefaultPreviousSecret
	if req.PreviousExpiresIn != "" {
		d, err := time.ParseDuration(req.PreviousExpiresIn)
		if err != nil || d < 0 || d > 30*24*time.Hour {
			errs.Add("/previous_expires_in", "%s is not a duration from 0s to 720h", wire.Quote(req.PreviousExpiresIn))
		}
		keep = d
	}
	if len(errs) > 0 {
		return invalidSubscription(errs)
	}
	now := tenant.Timestamp(s.opts.Now().UTC())
	return s.changeSubscription(w, r, func(sub *events.Subscription) error {
		sealed, err := events.SealSecret(s.opts.EventKeys, sub.ID, req.Secret)
		if err != nil {
			return err
		}
		until := now.Add(keep)
		next := []events.Secret{{Value: sealed, CreatedAt: now}}
		for _, old := range sub.Secrets {
			if old.ExpiresAt != nil && !now.Before(*old.ExpiresAt) {
				continue // expired already: dropped
			}
			if old.ExpiresAt == nil || old.ExpiresAt.After(until) {
				old.ExpiresAt = &until
			}
			next = append(next, old)
		}
		sub.Secrets = next
		s.log.Info("subscription secret rotated", slog.String("subscription", sub.Name), slog.Duration("previous_expires_in", keep), slog.String("actor", actor(r)))
		return nil
	})
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	if err := s.opts.Events.DeleteSubscription(r.Context(), sub.ID); err != nil {
		return err
	}
	s.log.Info("subscription deleted", slog.String("subscription", sub.Name), slog.String("actor", actor(r)))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func renderDelivery(d *events.Delivery, log []events.Attempt) wire.Delivery {
	out := wire.Delivery{EventID: d.EventID, Type: string(d.Type), Subject: d.Subject, Sequence: events.FormatPosition(d.Position),
		State: string(d.State), Attempts: d.Tries, NextAttemptAt: d.NextAttemptAt, LastStatus: d.LastStatus, LastError: d.LastError,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	for _, a := range log {
		out.Log = append(out.Log, wire.DeliveryAttempt{Number: a.Number, Time: a.Time, Status: a.Status,
			LatencyMS: float64(a.Latency.Microseconds()) / 1000, Error: a.Error, Response: a.Response})
	}
	return out
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	q := r.URL.Query()
	state := events.DeliveryState(q.Get("state"))
	switch state {
	case "", events.Pending, events.Delivered, events.Failed:
	default:
		return problem(http.StatusBadRequest, wire.CodeInvalidParameter, fmt.Sprintf("state %s is not pending, delivered or failed", wire.Quote(string(state))),
			wire.FieldError{Parameter: "state", Message: "must be pending, delivered or failed"})
	}
	size, err := pageSize(r)
	if err != nil {
		return err
	}
	page, err := s.opts.Events.Deliveries(r.Context(), sub.ID, events.DeliveryListOptions{State: state, PageSize: size, PageToken: q.Get("page_token")})
	if err != nil {
		return err
	}
	out := wire.DeliveryList{Deliveries: make([]wire.Delivery, len(page.Deliveries)), NextPageToken: page.NextPageToken}
	for i := range page.Deliveries {
		out.Deliveries[i] = renderDelivery(&page.Deliveries[i], nil)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getDelivery(w http.ResponseWriter, r *http.Request) error {
	if err := s.needEvents(); err != nil {
		return err
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	d, log, err := s.opts.Events.Delivery(r.Context(), sub.ID, r.PathValue("event"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderDelivery(d, log))
	return nil
}

// maxRedelivery bounds the range a redelivery may span.
const maxRedelivery = 7 * 24 * time.Hour

func (s *Server) redeliver(w http.ResponseWriter, r *http.Request) error {
	var req wire.RedeliverRequest
	if err := s.readEventsRequest(w, r, &req, contentJSON); err != nil {
		return err
	}
	var errs violation.List
	sel := events.Redelivery{EventID: req.EventID}
	switch {
	case req.EventID != "" && (req.Since != nil || req.Until != nil):
		errs.Add("/event_id", "give event_id or since and until, not both")
	case req.EventID == "" && req.Since == nil:
		errs.Add("/since", "is required without event_id: the start of the range of events to send again")
	case req.EventID == "":
		sel.Since, sel.Until = *req.Since, s.opts.Now()
		if req.Until != nil {
			sel.Until = *req.Until
		}
		if !sel.Until.After(sel.Since) {
			errs.Add("/until", "must be after since")
		} else if sel.Until.Sub(sel.Since) > maxRedelivery {
			errs.Add("/until", "is more than %s after since; redeliver a shorter range at a time", maxRedelivery)
		}
	}
	if len(errs) > 0 {
		return invalidSubscription(errs)
	}
	sub, err := s.opts.Events.Subscription(r.Context(), r.PathValue("subscription"))
	if err != nil {
		return err
	}
	n, err := s.opts.Events.Redeliver(r.Context(), sub.ID, sel)
	if err != nil {
		return err
	}
	s.log.Info("redelivery asked for", slog.String("subscription", sub.Name), slog.Int("deliveries", n), slog.String("actor", actor(r)))
	out := wire.RedeliverResponse{Deliveries: n}
	if !sub.Enabled {
		out.Note = "the subscription is disabled: these deliveries wait until it is enabled (PATCH it with {\"enabled\": true})"
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}

// decodeTrusted decodes JSON this server wrote.
func decodeTrusted(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("api: decode an event: %w", err)
	}
	return nil
}
