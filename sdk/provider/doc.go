// Package provider is the contract every landlord compute provider
// implements, as database/sql/driver is the contract of a SQL driver:
// the Provider interface and the optional interfaces landlord finds by type
// assertion (HealthChecker, ConfigDecoder, CapabilityReporter,
// ChangeNotifier, DriftDetector, Locator), the TenantComputeSpec a provider
// receives, the results and status it returns, drift, and the sentinel
// errors it wraps (ErrInvalidSpec, ErrTenantNotFound, ErrProvisionFailed,
// ErrUpdateFailed, ErrProviderConflict), marked Retryable or Terminal.
//
// It also holds the helpers providers share: DecodeOptions and CheckConfig
// for a provider's own config fields, ValidateSpec for the rules every spec
// obeys, Diff for UpdateResult.Changes, DriftCollector for Inspect,
// Fingerprint for what a provider records on the platform, and
// ReportProgress for long operations.
//
// landlord itself (its Registry, Manager and resolution of a tenant's
// compute_config into a spec) is not part of the SDK. A provider is
// registered in landlord in one of two ways: compiled in (the docker, ecs,
// kubernetes, nomad and mock providers of landlord's module), or built as
// its own program and served with package plugin, which landlord starts and
// calls over gRPC. The conformance suite, package providertest, checks a
// provider either way.
//
// The package is part of landlord's SDK and under its compatibility
// promise: see package sdk.
package provider
