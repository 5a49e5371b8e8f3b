package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Events is the event feed of the API: every CloudEvent landlord publishes
// (docs/events.md is the catalogue), oldest first, by sequence. List reads
// it a page at a time; Stream follows it as events are written. Webhooks
// (Subscriptions) deliver the same events.
type Events struct {
	c *Client
}

// Events is the event feed.
func (c *Client) Events() *Events { return &Events{c: c} }

// The event types, the values of CloudEvent.Type, as docs/events.md
// catalogues them. The server's own list is internal/events' Types, which
// TestEventTypesAreTheServers holds these to.
const (
	EventTenantCreated           = "landlord.tenant.created"
	EventTenantChanged           = "landlord.tenant.changed"
	EventTenantReady             = "landlord.tenant.ready"
	EventTenantFailed            = "landlord.tenant.failed"
	EventTenantDriftDetected     = "landlord.tenant.drift_detected"
	EventTenantDeletionRequested = "landlord.tenant.deletion_requested"
	EventTenantDeleted           = "landlord.tenant.deleted"
	EventTenantForgotten         = "landlord.tenant.forgotten"
	EventPlacementMoved          = "landlord.placement.moved"
	EventRolloutStarted          = "landlord.rollout.started"
	EventRolloutWaveCompleted    = "landlord.rollout.wave_completed"
	EventRolloutHalted           = "landlord.rollout.halted"
	EventRolloutCompleted        = "landlord.rollout.completed"
	EventRolloutAborted          = "landlord.rollout.aborted"
	EventPlanVersionPublished    = "landlord.plan.version_published"
)

// eventTypes are the event types in the catalogue's order.
var eventTypes = []string{
	EventTenantCreated, EventTenantChanged, EventTenantReady, EventTenantFailed, EventTenantDriftDetected,
	EventTenantDeletionRequested, EventTenantDeleted, EventTenantForgotten, EventPlacementMoved,
	EventRolloutStarted, EventRolloutWaveCompleted, EventRolloutHalted, EventRolloutCompleted, EventRolloutAborted,
	EventPlanVersionPublished,
}

// EventTypes returns every event type, in the catalogue's order.
func EventTypes() []string { return slices.Clone(eventTypes) }

// IsEventType reports whether t is one of EventTypes: the API refuses
// any other in a filter with a 400 or 422 *Error.
func IsEventType(t string) bool { return slices.Contains(eventTypes, t) }

// Delivery states, the values of Delivery.State and of
// DeliveryListOptions.State.
const (
	// DeliveryPending: not yet delivered; NextAttemptAt says when it is
	// tried next.
	DeliveryPending = "pending"
	// DeliveryDelivered: the receiver answered 2xx.
	DeliveryDelivered = "delivered"
	// DeliveryFailed: given up on after the retry horizon (a day, by
	// default); Subscriptions().Redeliver sends it again.
	DeliveryFailed = "failed"
)

// EventListOptions choose a page of the feed.
type EventListOptions struct {
	// After is the sequence to read after: "" (or "0") from the oldest
	// event the server keeps, else the Next of the page before, or the
	// Sequence of the last event read.
	After string
	// Types keeps the events of these types (EventTypes) only; none keeps
	// every type.
	Types []string
	// PageSize is how many events a page holds at most (1–500); 0 means
	// the server's default (50).
	PageSize int
}

// List returns the events after opts.After, oldest first. A page is never
// told apart as the last: the feed goes on as events are written, and a
// page shorter than asked for holds every event there was. Read on from
// its Next. A type that is not an event type, or an After that is not a
// sequence, is a 400 *Error; a server that keeps no events answers 501.
func (s *Events) List(ctx context.Context, opts EventListOptions) (*EventFeed, error) {
	q := feedQuery(opts.After, opts.Types)
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	var out EventFeed
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/events", query: q}, &out); err != nil {
		return nil, err
	}
	if out.Events == nil {
		out.Events = []CloudEvent{}
	}
	return &out, nil
}

// All iterates over the events after opts.After that there are now, oldest
// first, fetching pages as it goes, and stops at the end of the feed;
// Stream goes on waiting for more. It yields an error at most once, then
// stops.
func (s *Events) All(ctx context.Context, opts EventListOptions) iter.Seq2[CloudEvent, error] {
	return func(yield func(CloudEvent, error) bool) {
		size := opts.PageSize
		if size <= 0 {
			size = DefaultPageSize
		}
		for {
			page, err := s.List(ctx, opts)
			if err != nil {
				yield(CloudEvent{}, err)
				return
			}
			for _, e := range page.Events {
				if !yield(e, nil) {
					return
				}
			}
			if len(page.Events) < size || page.Next == opts.After {
				return
			}
			opts.After = page.Next
		}
	}
}

// feedQuery is the query of the feed and its stream: after= when it is
// set, and the types as one comma-separated type=.
func feedQuery(after string, types []string) url.Values {
	q := url.Values{}
	setNonEmpty(q, "after", after)
	if len(types) > 0 {
		q.Set("type", strings.Join(types, ","))
	}
	return q
}

// TenantOf returns the Data of a tenant's event (every landlord.tenant.*
// type and landlord.placement.moved): the tenant as the API showed it when
// the event was written, and the entry of its history the event stands
// for. For another event it returns false.
func TenantOf(e CloudEvent) (*TenantEventData, bool) {
	if !strings.HasPrefix(e.Type, "landlord.tenant.") && e.Type != EventPlacementMoved {
		return nil, false
	}
	var d TenantEventData
	if err := json.Unmarshal(e.Data, &d); err != nil || d.Tenant.ID == "" {
		return nil, false
	}
	return &d, true
}
