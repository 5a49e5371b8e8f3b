// Package compute is landlord's compute provisioning framework: the contract
// every compute provider implements, the provider-agnostic tenant compute
// spec, the Registry of enabled providers and the Manager that the controller
// calls.
//
// The package holds no HTTP and no database. A tenant's compute_config is a
// JSON object owned by its provider: the provider publishes a JSON Schema
// (draft 2020-12) for it and optional defaults. Resolve turns a tenant's
// compute_config, labels and annotations into a validated TenantComputeSpec:
//
//  1. pick the provider (compute_provider in the config, labels, annotations,
//     else the configured default), removing the selection key;
//  2. deep-merge the provider's defaults under the tenant's values (RFC 7396);
//  3. validate the merged config against the provider's schema, reporting
//     every violation with its JSON pointer, then with ValidateConfig;
//  4. build the spec from the shared container workload fields.
//
// Providers that run containers share one workload schema (WorkloadSchema),
// so a tenant's config can move between them.
package compute
