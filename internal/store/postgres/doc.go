// Package postgres is the PostgreSQL adapter of tenant.Store, for
// production deployments where several landlord replicas share one database.
//
// It is thin on purpose: the store rules live in package tenant. Every write
// runs in one READ COMMITTED transaction that locks the tenant's row
// (SELECT … FOR UPDATE), asks the domain (tenant.NewTenant, ApplyDesired,
// ApplyDeletion, ApplyObservation) what the row and its events become, and
// writes both. Concurrent writers of one tenant therefore queue on its row,
// and each sees the row its predecessor committed, so optimistic concurrency
// (Version) and the generation guard of observations hold across processes.
// A write to an existing tenant is two round trips: BEGIN goes with the
// fence and the row lock as one pipeline, the writes with COMMIT as another.
//
// Desired state and provider data are JSONB (compute_config, labels,
// annotations, resource_ids, endpoints), but for a tenant's placements
// (tenant.PlacementsText): text, so that the sealed configs of its
// placements are kept byte for byte, and '[]' for a tenant of one
// placement, which the other columns describe as they did before
// placements. Times are timestamptz with the microsecond precision
// tenant.Timestamp gives them, returned in UTC. A partial unique index on
// name among tenants that are not deleted enforces ErrNameTaken, and
// listings are keyset-paginated on the (time-ordered) id.
// The name-prefix filter is a range in byte order (COLLATE "C") on an index
// of its own.
//
// Two clocks are used. The times recorded on tenants and events (CreatedAt,
// StatusChangedAt, event times, …) come from the replica that writes them
// (Options.Now): they are informative, and a little skew between replicas
// only blurs their order. Leases are judged by the database's clock
// (clock_timestamp(), read after the lease's row is locked): acquiring,
// renewing and releasing compute "now" and the expiry there, so that
// replicas on different hosts agree on when a lease has expired whatever
// their own clocks say. Lease.ExpiresAt is therefore a time on the
// database's clock: a holder should time its renewals from when it asked,
// by its own monotonic clock, rather than compare ExpiresAt with its own
// wall clock.
//
// The controller is elected with leases (tenant.LeaseStore): a row per
// lease in the table leases, read FOR UPDATE and changed as tenant.ApplyLease
// says, its epoch growing every time it changes hands. UpdateObserved and
// AppendEvent with an Epoch read the controller lease FOR KEY SHARE in their
// transaction and refuse a stale epoch (tenant.CheckFence); the share lock
// makes an AcquireLease that would change hands wait for the write to
// commit, so a fenced write is either refused or committed before the new
// holder's epoch exists.
//
// Changes to desired state (Create, UpdateDesired, RequestDeletion) are
// announced with pg_notify on the channel landlord_tenants, in the writing
// transaction, so only committed changes are announced; Watch listens on a
// connection of its own (tenant.Watcher). A watcher that falls behind, or
// whose connection breaks, loses announcements and is told so with an empty
// id as soon as its channel has room. Writes of the controller that record
// an event (UpdateObserved with a status transition, AppendEvent) are
// announced on a second channel, landlord_changes, one notification per
// transaction naming every tenant it wrote; Changes (tenant.ChangeFeed)
// listens on both channels, Watch on landlord_tenants alone, so that the
// controller is not woken by its own observations.
//
// Responses to requests sent with an Idempotency-Key
// (tenant.IdempotencyStore) are rows of the table idempotency_keys, keyed by
// actor and key. SaveIdempotent is one round trip: an INSERT … ON CONFLICT
// DO UPDATE that replaces only an expired row (older than
// tenant.IdempotencyTTL by Options.Now), a read of the row it kept, and a
// DELETE of up to 100 other expired rows (FOR UPDATE SKIP LOCKED), so
// expired rows are cleaned up by the saves themselves, with no background
// job. Concurrent saves of one key queue on its primary key: exactly one
// keeps its response and all get that one back.
//
// The events landlord publishes (events.Store) are rows of the table
// outbox, written by AFTER INSERT triggers on events, rollout_events and
// plan_versions in the transaction of the change they report, a tenant's
// with its row as it then was. Transactions commit out of the order in
// which they drew their seq, so rows are written without a position, and
// SequenceOutbox gives positions to committed rows, one run at a time
// under an advisory lock: a reader paging by position never misses one,
// and a tenant's events, written under its row lock, keep their order (see
// outbox.go). The dispatcher's writes (FanOut, RecordAttempt) read its
// lease FOR KEY SHARE and refuse a lease no longer held, as fenced
// observations do.
//
// Open migrates the schema with goose from migrations embedded in the
// binary, each in its own transaction, under a PostgreSQL advisory lock so
// that replicas starting together migrate once. The migration history is in
// the table landlord_schema_migrations.
package postgres
