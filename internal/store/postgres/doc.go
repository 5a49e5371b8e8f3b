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
//
// Desired state and provider data are JSONB (compute_config, labels,
// annotations, resource_ids, endpoints); times are timestamptz with the
// microsecond precision tenant.Timestamp gives them, returned in UTC. A
// partial unique index on name among tenants that are not deleted enforces
// ErrNameTaken, and listings are keyset-paginated on the (time-ordered) id.
//
// The controller is elected with leases (tenant.LeaseStore): a row per
// lease in the table leases, read FOR UPDATE and changed as tenant.ApplyLease
// says, its epoch growing every time it changes hands. UpdateObserved with
// an Epoch reads the controller lease FOR KEY SHARE in its transaction and
// refuses a stale epoch (tenant.CheckFence); the share lock makes an
// AcquireLease that would change hands wait for the observation to commit,
// so an observation is either fenced or committed before the new holder's
// epoch exists. Lease expiry is judged by the clock of the replica that
// asks (Options.Now), as in the SQLite store, not the database's: replicas'
// clocks are assumed synchronised (NTP) to well under the lease TTL. A
// replica whose clock runs ahead could take over a lease that has not yet
// expired by its holder's clock; the epoch still fences the former holder's
// writes, but both would act for up to the skew.
//
// Changes to desired state (Create, UpdateDesired, RequestDeletion) are
// announced with pg_notify on the channel landlord_tenants, in the writing
// transaction, so only committed changes are announced; Watch listens on a
// connection of its own (tenant.Watcher).
//
// Open migrates the schema with goose from migrations embedded in the
// binary, each in its own transaction, under a PostgreSQL advisory lock so
// that replicas starting together migrate once. The migration history is in
// the table landlord_schema_migrations.
package postgres
