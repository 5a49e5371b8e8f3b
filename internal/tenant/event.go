package tenant

import "time"

// EventType says what an event records.
type EventType string

// Event types.
const (
	// EventCreated: the tenant was created through the API.
	EventCreated EventType = "created"
	// EventUpdated: its desired state was changed through the API.
	EventUpdated EventType = "updated"
	// EventDeleteRequested: deletion was asked for through the API.
	EventDeleteRequested EventType = "delete_requested"
	// EventStatus: its status changed (From → To).
	EventStatus EventType = "status"
	// EventNote: anything else worth keeping (a retry, a repaired drift).
	EventNote EventType = "note"
)

// Event is one entry in a tenant's history.
type Event struct {
	// Seq orders a tenant's events; it increases with every event stored.
	Seq        int64     `json:"seq"`
	TenantID   string    `json:"tenant_id"`
	Time       time.Time `json:"time"`
	Type       EventType `json:"type"`
	From       Status    `json:"from,omitempty"`
	To         Status    `json:"to,omitempty"`
	Generation int64     `json:"generation"`
	Message    string    `json:"message,omitempty"`
	// Actor is who caused it: an API principal, or "controller".
	Actor string `json:"actor"`
}
