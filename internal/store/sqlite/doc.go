// Package sqlite is the embedded tenant.Store: one SQLite file, pure Go
// (modernc.org/sqlite, no cgo), nothing to install. It runs in WAL mode with
// a busy timeout and foreign keys on, one writer connection (writes are
// serialised, as SQLite allows only one writer) and a pool of readers that
// never block behind it. It migrates itself on Open.
//
// One landlord process at a time should serve a SQLite file; a second one
// can read it, and the controller's leader election (in the controller
// package) keeps a second process from reconciling.
package sqlite
