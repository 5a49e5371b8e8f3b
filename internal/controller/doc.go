// Package controller turns desired tenants into running workloads and keeps
// them so.
//
// It is level-triggered: Reconcile reads a tenant from the store every time
// and acts on the difference between its desired state (generation, config,
// deletion) and its observed state (observed generation, status, attempts,
// the provider's live status); it never acts on an event payload. It is
// event-driven with a safety net: store announcements (tenant.Watcher) wake
// it for a tenant at once, a jittered resync re-checks every live tenant
// against its provider (drift repair), and a slower sweep picks up whatever
// needs work (tenant.Store.ListWork), including everything left in progress
// by a controller that crashed.
//
// A work queue (client-go's workqueue) collapses duplicate wake-ups and
// gives each tenant to one worker at a time. Failed attempts back off
// exponentially with jitter; the attempt count and the time of the next try
// live in the store, so a restart neither forgets nor hurries a retry.
//
// Replicas that share a database share the tenants: the tenants fall into
// tenant.Partitions partitions, each with a lease (tenant.LeaseStore), and
// each replica's controller, a member with a lease of its own, works the
// partitions it holds. Every replica assigns the partitions alike from the
// live members (Assign), takes its own when they are free, and hands over
// the others once their in-flight work is done. The epoch of a partition's
// lease fences every write the controller makes to its tenants, so a
// replica that lost a partition cannot overwrite its successor's results;
// a fenced write drops that partition alone.
package controller
