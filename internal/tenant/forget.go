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

// ProviderMissing is the status message the controller gives a tenant whose
// provider is not enabled where it runs: what landlord does about it
// (nothing) and what the operator can.
func ProviderMissing(t *Tenant) string {
	if t.DeletionRequestedAt != nil {
		return fmt.Sprintf("the deletion waits: compute provider %s is not enabled on this server, so nothing can be destroyed; "+
			"enable it again, or remove the record without destroying anything with: landlord delete %s --forget", t.Provider, t.Name)
	}
	return fmt.Sprintf("compute provider %s is not enabled on this server: the tenant is left as it is (its workload, if any, untouched); "+
		"enable the provider again, or remove the record with: landlord delete %s --forget", t.Provider, t.Name)
}

// LeftAlone reports whether the controller leaves t alone whatever its
// provider: it recorded that the provider is not enabled where it runs
// (ProviderMissing, before or after a deletion was requested), or t failed
// at its generation. A tenant may be forgotten only then: a replica without
// the provider may answer while the leader still manages it.
func LeftAlone(t *Tenant) bool {
	if !t.Simple() {
		// Every placement whose workload may still run is left alone: a
		// placement destroyed already does not hold the tenant.
		for _, p := range t.Placements {
			if p.Status == StatusDeleted {
				continue
			}
			v, err := t.View(p.Name)
			if err != nil {
				return false
			}
			v.Name = t.Name // the controller's message names the tenant
			if !LeftAlone(v) {
				return false
			}
		}
		return true
	}
	missing := ProviderMissing(&Tenant{Provider: t.Provider, Name: t.Name})
	return t.StatusMessage == ProviderMissing(t) || t.StatusMessage == missing ||
		(t.Status == StatusFailed && t.ObservedGeneration == t.Generation)
}

// ProviderCounter is implemented by stores that can count tenants by
// compute provider (so that start-up can say how many tenants use a
// provider that is not enabled).
type ProviderCounter interface {
	// CountByProvider counts the tenants that are not deleted, by provider:
	// a tenant counts once under each provider its placements run on.
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
	next := deletionOf(cur, StatusDeleted, message, now)
	next.ObservedGeneration = next.Generation
	next.DeletedAt = &now
	next.Endpoints = nil
	for i := range next.Placements {
		// As the tenant's: a Simple tenant's placement is read back from
		// the tenant's columns. A move is forgotten with the tenant: its
		// workload is named in message, as what may still run.
		next.Placements[i].ObservedGeneration, next.Placements[i].Endpoints = next.Generation, nil
		next.Placements[i].Move = nil
	}
	events := []Event{
		{TenantID: cur.ID, Time: now, Type: EventForgotten, Generation: next.Generation, Message: message, Actor: actor},
		{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: StatusDeleted, Generation: next.Generation, Message: message, Actor: actor},
	}
	return &next, events, nil
}
