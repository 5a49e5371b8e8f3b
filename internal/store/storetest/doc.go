// Package storetest is the conformance suite of tenant.Store, and of the
// contracts the stores keep beside it (tenant.LeaseStore, fleet.Store,
// events.Store, …): one exported function, Run, that every database
// adapter passes, so that SQLite and PostgreSQL behave identically. It also
// holds the store benchmarks.
package storetest
