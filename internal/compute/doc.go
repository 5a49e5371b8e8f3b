// Package compute is landlord's side of the compute framework: the
// Registry of enabled providers, the Manager that the controller and the
// service call, and resolution. The contract every provider implements
// (provider.Provider, the spec, results and sentinels) is public, in
// package provider of the SDK (github.com/jaxxstorm/landlord/sdk/provider),
// so that a provider outside this module, served as a plugin, implements
// the same one.
//
// The package holds no HTTP and no database. A tenant's compute_config is a
// JSON object owned by its provider: the provider publishes a JSON Schema
// (draft 2020-12) for it and optional defaults. Manager.Resolve is the one
// step from a tenant's compute_config, labels and annotations to a validated
// provider.TenantComputeSpec; everything downstream uses the spec and never parses
// the config again:
//
//  1. pick the provider (compute_provider in the config, labels, annotations,
//     else the configured default);
//  2. restore secrets sent back redacted from the stored config;
//  3. deep-merge the provider's defaults under the tenant's values (RFC 7396);
//  4. validate the merged config against the provider's schema, compiled at
//     registration, reporting every violation with its JSON pointer;
//  5. decode the portable workload (package workload), check its rules and
//     the provider's Capabilities, and have the provider decode its own
//     fields (provider.ConfigDecoder) into the spec's Options
//     (provider.DecodeSpec);
//  6. check the spec with the provider's Validate, and fingerprint it.
//
// What providers build themselves from (the portable workload, merging,
// durations) is package workload of the SDK; field problems are package
// violation.
package compute
