// Package store holds landlord's database adapters, one package per
// database: sqlite (the embedded default) and postgres. Both implement
// tenant.Store and pass the one conformance suite in storetest.
package store
