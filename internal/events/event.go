package events

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Type is a CloudEvents type: what an event reports.
type Type string

// The event types. A tenant's are written by the store, in the transaction
// of the change they report, for the history entries (tenant.Event) they
// stand for; a rollout's for its history entries (fleet.Event); a plan
// version's when it is published. docs/events.md is their catalogue.
const (
	TenantCreated           Type = "landlord.tenant.created"            // created through the API
	TenantChanged           Type = "landlord.tenant.changed"            // its desired state changed through the API
	TenantReady             Type = "landlord.tenant.ready"              // its workload runs and answers at its generation
	TenantFailed            Type = "landlord.tenant.failed"             // the controller gave up on its generation
	TenantDriftDetected     Type = "landlord.tenant.drift_detected"     // what runs differs from what is declared
	TenantDeletionRequested Type = "landlord.tenant.deletion_requested" // deletion was asked for
	TenantDeleted           Type = "landlord.tenant.deleted"            // its workload is destroyed, its record deleted
	TenantForgotten         Type = "landlord.tenant.forgotten"          // its record was deleted without destroying anything
	PlacementMoved          Type = "landlord.placement.moved"           // a placement's move switched to its target
	RolloutStarted          Type = "landlord.rollout.started"
	RolloutWaveCompleted    Type = "landlord.rollout.wave_completed" // every tenant of a wave changed; its bake begins
	RolloutHalted           Type = "landlord.rollout.halted"
	RolloutCompleted        Type = "landlord.rollout.completed"
	RolloutAborted          Type = "landlord.rollout.aborted"
	PlanVersionPublished    Type = "landlord.plan.version_published"
)

// Types lists every event type, in the catalogue's order.
var Types = []Type{
	TenantCreated, TenantChanged, TenantReady, TenantFailed, TenantDriftDetected,
	TenantDeletionRequested, TenantDeleted, TenantForgotten, PlacementMoved,
	RolloutStarted, RolloutWaveCompleted, RolloutHalted, RolloutCompleted, RolloutAborted,
	PlanVersionPublished,
}

// Known reports whether t is one of Types.
func Known(t Type) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// Record is one event of the outbox, as a store reads it back.
type Record struct {
	// Position orders the feed: it grows with each event, in the order
	// their transactions committed, and a reader that has read up to a
	// position never later finds an event before it. The events of one
	// key (one tenant, one rollout, one plan) are in the order they were
	// written.
	Position int64
	// ID is the event's id, the CloudEvents id and the webhook-id of its
	// deliveries: the same on every delivery and every read.
	ID   string
	Type Type
	// Subject is the id of the tenant or rollout, or the plan's name.
	Subject string
	// Key orders deliveries: a subscription's deliveries of one key are
	// made one at a time, in position order. A tenant's id, "rollout:ID"
	// or "plan:NAME".
	Key  string
	Time time.Time
	// Tenant is, for a tenant's event, the tenant as it was stored when
	// the event was written: its compute configs as stored (secrets
	// sealed, when a key seals them), to be redacted before it is shown.
	Tenant *tenant.Tenant
	// History is, for a tenant's event, the history entry it stands for.
	History *tenant.Event
	// Data is, for the events of rollouts and plans, their data as written.
	Data json.RawMessage
}

// Labels are the labels of the tenant a record is about, nil for others.
func (r *Record) Labels() map[string]string {
	if r.Tenant == nil {
		return nil
	}
	return r.Tenant.Labels
}

// FormatPosition and ParsePosition write and read a position as the feed's
// cursor (after=, Last-Event-ID).
func FormatPosition(p int64) string { return strconv.FormatInt(p, 10) }

// ParsePosition reads a cursor; "" is the start.
func ParsePosition(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	p, err := strconv.ParseInt(s, 10, 64)
	return p, err == nil && p >= 0
}

// IDKey returns the number an event id holds (its position on SQLite, its
// row's sequence on PostgreSQL), by which a store finds it: an id is
// "evt_", that number in 16 hex digits, and 16 more of random bits. False
// for a string that is not such an id.
func IDKey(id string) (int64, bool) {
	hex, ok := strings.CutPrefix(id, "evt_")
	if !ok || len(hex) != 32 {
		return 0, false
	}
	n, err := strconv.ParseUint(hex[:16], 16, 63)
	if err != nil || n == 0 {
		return 0, false
	}
	if _, err := strconv.ParseUint(hex[16:], 16, 64); err != nil {
		return 0, false
	}
	return int64(n), true
}
