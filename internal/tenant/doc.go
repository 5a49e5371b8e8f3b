// Package tenant is landlord's tenant domain: the Tenant type, its lifecycle
// states and the one table of allowed transitions, the rules for names,
// labels and ids, events, and the Store contract that every database adapter
// implements (internal/store/sqlite, internal/store/postgres) and that one
// conformance suite checks (internal/store/storetest).
//
// A tenant has a desired state, written by the API (compute_config, labels,
// annotations, deletion; each change bumps Generation and Version), and an
// observed state, written by the controller (status, message, resource ids,
// endpoints, ObservedGeneration). The two never overwrite each other: desired
// writes are guarded by Version (optimistic concurrency), observed writes by
// Generation, so a controller acting on an old generation cannot record its
// result over a newer desired state.
package tenant
