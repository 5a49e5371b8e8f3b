// Package sdk is the home of landlord's provider SDK: everything a compute
// provider needs to run under landlord, in tree or out of tree, and nothing
// else. It holds no code of its own; its packages are
//
//   - provider: the contract (the Provider interface, its optional
//     interfaces, the spec, results, status, drift and the sentinel errors)
//     and the helpers every provider uses (DecodeOptions, CheckConfig,
//     ValidateSpec, Diff, DriftCollector, Fingerprint, Retryable, Terminal);
//   - workload: the portable container workload that tenants write and
//     providers receive, its JSON Schema fragment, merging and durations;
//   - violation: a problem with a field, named by its JSON pointer;
//   - tenantlock: one operation at a time per tenant within a provider;
//   - providertest: the conformance and drift suites every provider passes;
//   - plugin: serving a provider as a separate program (a plugin) that
//     landlord starts and talks to over gRPC, and starting one.
//
// # Compatibility
//
// These packages are the stable surface of landlord's module: the in-tree
// providers (docker, ecs, kubernetes, nomad, mock) import them exactly as an
// out-of-tree one does, and import nothing else of landlord. Within a major
// version of the module, changes to them are additive: no exported
// identifier is removed, renamed or given another meaning; a struct gains
// fields whose zero value keeps the old behaviour; a new ability of
// providers arrives as a new optional interface, found by type assertion,
// never as a new method of Provider. Every other package of the module
// (under internal/, and cmd/) may change at any time. surface.txt lists
// the promised surface, and a test fails when a line of it goes or
// changes, as Go's api check does for the standard library.
//
// A plugin binary built with one version of this SDK runs under any landlord
// that speaks its plugin protocol version (see package plugin).
package sdk
