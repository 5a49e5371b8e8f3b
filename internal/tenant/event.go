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
	// EventAttempt: an attempt at an operation failed; Message says why and
	// which attempt it was.
	EventAttempt EventType = "attempt_failed"
	// EventDrift: what runs was found to differ from the declared state
	// (a field changed, an object deleted, the workload gone or failed
	// behind landlord's back); Message lists every difference and says
	// whether it is being repaired or only observed.
	EventDrift EventType = "drift_detected"
	// EventPaused and EventResumed: reconciliation was paused or resumed by
	// the landlord.io/paused annotation.
	EventPaused  EventType = "paused"
	EventResumed EventType = "resumed"
	// EventNote: anything else worth keeping.
	EventNote EventType = "note"
)

// Event is one entry in a tenant's history.
type Event struct {
	// Seq orders a tenant's events; it increases with every event stored.
	Seq      int64  `json:"seq"`
	TenantID string `json:"tenant_id"`
	// Placement names the placement the event is about, for a tenant of
	// several placements; "" for the tenant as a whole.
	Placement  string    `json:"placement,omitempty"`
	Time       time.Time `json:"time"`
	Type       EventType `json:"type"`
	From       Status    `json:"from,omitempty"`
	To         Status    `json:"to,omitempty"`
	Generation int64     `json:"generation"`
	Message    string    `json:"message,omitempty"`
	// Actor is who caused it: an API principal, or the identity of the
	// controller replica that wrote it.
	Actor string `json:"actor"`
	// Changed names, for an "updated" event, the fields of the desired
	// state the change changed (compute_config or placements, labels,
	// annotations, plan, maintenance_window). It is kept for the event
	// published (internal/events), not shown in the history.
	Changed []string `json:"changed,omitempty"`
	// Epoch, when not 0, is the epoch of the tenant's partition lease
	// (FenceLease) the writer holds; AppendEvent refuses it with ErrFenced
	// when the lease has moved on, as UpdateObserved does. It is not stored.
	Epoch int64 `json:"-"`
}
