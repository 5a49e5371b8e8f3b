// Package store holds landlord's database adapters, one package per
// database: sqlite (the embedded default) and postgres. Both implement
// tenant.Store and fleet.Store and pass the one conformance suite in
// storetest. The rules they apply in their transactions are the domain's
// (tenant.NewTenant, fleet.NewRollout, fleet.CheckFollow, ...); this
// package holds only what the two share about storage itself: the log line
// of a migration.
package store
