package wire

import (
	"encoding/json"
	"time"
)

// CloudEvent is an event as landlord publishes it: a CloudEvents 1.0 event
// in the structured JSON format, as webhooks deliver it and the feed
// (GET /v1/events) lists it.
type CloudEvent struct {
	SpecVersion string `json:"specversion"`
	// ID is the event's id: the same on every delivery and every read;
	// webhooks carry it as webhook-id too.
	ID     string `json:"id"`
	Source string `json:"source"`
	// Type is one of the catalogue's (docs/events.md), landlord.tenant.ready
	// for instance.
	Type string `json:"type"`
	// Subject is the tenant's or rollout's id, or the plan's name.
	Subject         string    `json:"subject,omitempty"`
	Time            time.Time `json:"time"`
	DataContentType string    `json:"datacontenttype"`
	// Sequence is the event's position in the feed (the CloudEvents
	// sequence extension), a decimal integer that grows with each event.
	Sequence string          `json:"sequence"`
	Data     json.RawMessage `json:"data"`
}

// TenantEventData is the data of a tenant's events: the tenant as the API
// shows it (secrets redacted) when the event was written, and the entry of
// its history the event stands for, whose message says what changed.
type TenantEventData struct {
	Tenant Tenant `json:"tenant"`
	Event  Event  `json:"event"`
	// Changed names, for landlord.tenant.changed, the fields of the
	// desired state the change changed.
	Changed []string `json:"changed,omitempty"`
}

// EventFeed is a page of the feed.
type EventFeed struct {
	Events []CloudEvent `json:"events"`
	// Next is the cursor to pass as after= for the events that follow:
	// the last event's sequence, or the one given when none came.
	Next string `json:"next"`
}

// Subscription is a webhook subscription as the API shows it: its secrets
// by their dates only.
type Subscription struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	URL         string            `json:"url"`
	Types       []string          `json:"types,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Description string            `json:"description,omitempty"`
	Enabled     bool              `json:"enabled"`
	// DisabledReason says why landlord disabled it.
	DisabledReason string         `json:"disabled_reason,omitempty"`
	Secrets        []SecretInfo   `json:"secrets"`
	Version        int64          `json:"version"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
	CreatedBy      string         `json:"created_by,omitempty"`
	Deliveries     *DeliveryCount `json:"deliveries,omitempty"`
}

// SecretInfo describes one of a subscription's signing secrets, never its
// value.
type SecretInfo struct {
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// DeliveryCount counts a subscription's deliveries not yet made.
type DeliveryCount struct {
	Pending int `json:"pending"`
}

// CreateSubscriptionRequest creates a subscription.
type CreateSubscriptionRequest struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Secret is whsec_ and the base64 of 24 to 64 random bytes: the key
	// deliveries are signed with. It is never shown again.
	Secret      string            `json:"secret"`
	Types       []string          `json:"types,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Description string            `json:"description,omitempty"`
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
}

// UpdateSubscriptionRequest changes a subscription: what is left out is
// kept. Enabling one clears its disabled_reason.
type UpdateSubscriptionRequest struct {
	URL         *string            `json:"url,omitempty"`
	Types       *[]string          `json:"types,omitempty"`
	Labels      *map[string]string `json:"labels,omitempty"`
	Description *string            `json:"description,omitempty"`
	Enabled     *bool              `json:"enabled,omitempty"`
}

// RotateSecretRequest gives a subscription a new secret; the ones it had
// keep signing until previous_expires_in from now (a Go duration, default
// 24h; "0s" ends them at once).
type RotateSecretRequest struct {
	Secret            string `json:"secret"`
	PreviousExpiresIn string `json:"previous_expires_in,omitempty"`
}

// RedeliverRequest sends events again: one by id, or those written in
// [since, until) that pass the subscription's filters.
type RedeliverRequest struct {
	EventID string     `json:"event_id,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
}

// RedeliverResponse counts the deliveries made pending.
type RedeliverResponse struct {
	Deliveries int `json:"deliveries"`
	// Note says why they will not be sent at once, when they will not.
	Note string `json:"note,omitempty"`
}

// SubscriptionList lists subscriptions.
type SubscriptionList struct {
	Subscriptions []Subscription `json:"subscriptions"`
}

// Delivery is one event sent, or to send, to a subscription.
type Delivery struct {
	EventID       string    `json:"event_id"`
	Type          string    `json:"type"`
	Subject       string    `json:"subject"`
	Sequence      string    `json:"sequence"`
	State         string    `json:"state"`
	Attempts      int       `json:"attempts"`
	NextAttemptAt time.Time `json:"next_attempt_at"`
	// LastStatus is the HTTP status of the last attempt, absent when it
	// had no answer; LastError what went wrong.
	LastStatus int       `json:"last_status,omitempty"`
	LastError  string    `json:"last_error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// Attempts of this delivery, oldest first (GET of one delivery only).
	Log []DeliveryAttempt `json:"log,omitempty"`
}

// DeliveryAttempt is one try at a delivery.
type DeliveryAttempt struct {
	Number    int       `json:"number"`
	Time      time.Time `json:"time"`
	Status    int       `json:"status,omitempty"`
	LatencyMS float64   `json:"latency_ms"`
	Error     string    `json:"error,omitempty"`
	// Response is the start of the receiver's answer (at most 512 bytes).
	Response string `json:"response,omitempty"`
}

// DeliveryList is a page of a subscription's deliveries, newest first.
type DeliveryList struct {
	Deliveries    []Delivery `json:"deliveries"`
	NextPageToken string     `json:"next_page_token,omitempty"`
}
