package tenant

import (
	"context"
	"fmt"
	"time"
)

// EventForgotten: the tenant's record was deleted at once, without its
// workload being destroyed, because its provider is not enabled; Message
// says what may be left running.
const EventForgotten EventType = "forgotten"

// Forgetter is implemented by stores that can forget a tenant: delete its
// record at once, with nothing destroyed, when the controller cannot reach
// its workload because its provider is not enabled (landlord was switched to
// another provider).
type Forgetter interface {
	// Forget applies ApplyForget to the tenant with that id and writes the
	// result and its events in one transaction. It returns ErrNotFound for
	// an unknown id and ErrConflict when version is not 0 and not the
	// tenant's version.
	Forget(ctx context.Context, id string, version int64, actor, message string) (*Tenant, error)
}

// ProviderCounter is implemented by stores that can count tenants by
// compute provider (so that start-up can say how many tenants use a
// provider that is not enabled).
type ProviderCounter interface {
	// CountByProvider counts the tenants that are not deleted, by provider.
	CountByProvider(ctx context.Context) (map[string]int, error)
}

// ApplyForget returns cur deleted at once, by actor, and its events: a
// "forgotten" event whose message says what may be left running, then the
// status change. Nothing checks the lifecycle's transitions: forgetting is
// the way out of every status. The tenant keeps its resource ids, which
// name what may still run; its endpoints are dropped. version 0 skips the
// version check. A deleted tenant is ErrNotFound, as it is to every other
// change.
func ApplyForget(cur *Tenant, version int64, actor, message string, now time.Time) (*Tenant, []Event, error) {
	if cur.Status == StatusDeleted {
		return nil, nil, fmt.Errorf("%w: tenant %s is deleted", ErrNotFound, cur.ID)
	}
	if version != 0 && version != cur.Version {
		return nil, nil, fmt.Errorf("%w: tenant %s is at version %d, not %d", ErrConflict, cur.ID, cur.Version, version)
	}
	now = Timestamp(now)
	next := *cur
	if next.DeletionRequestedAt == nil {
		next.DeletionRequestedAt = &now
	}
	next.Generation++
	next.Version++
	next.ObservedGeneration = next.Generation
	next.UpdatedAt = now
	next.Status = StatusDeleted
	next.StatusChangedAt = now
	next.StatusMessage = message
	next.DeletedAt = &now
	next.Endpoints = nil
	next.Attempts, next.RetryAt = 0, nil
	events := []Event{
		{TenantID: cur.ID, Time: now, Type: EventForgotten, Generation: next.Generation, Message: message, Actor: actor},
		{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: StatusDeleted, Generation: next.Generation, Message: message, Actor: actor},
	}
	return &next, events, nil
}
