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
// Open migrates the schema with goose from migrations embedded in the
// binary, each in its own transaction, under a PostgreSQL advisory lock so
// that replicas starting together migrate once. The migration history is in
// the table landlord_schema_migrations.
package postgres
