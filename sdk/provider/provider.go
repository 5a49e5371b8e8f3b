package provider

import (
	"context"
	"encoding/json"
	"regexp"
)

var validName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// ValidName reports whether name may be a provider's Name: lowercase
// letters and digits, beginning with a letter.
func ValidName(name string) bool { return validName.MatchString(name) }

// Provider provisions tenant workloads on one compute platform.
//
// Every implementation is safe for concurrent use and allows parallel
// operations on different tenants. It names its resources deterministically
// from the tenant id and finds them again by that name or label, so that
// nothing it needs to finish or clean up lives only in memory and a restart
// adopts what exists instead of duplicating it. It logs the tenant id with
// every line and never a secret. The conformance suite in package
// providertest checks these contracts.
type Provider interface {
	// Name returns the provider's unique, lowercase alphanumeric name
	// ("docker"); it equals TenantComputeSpec.ProviderType of the specs it
	// accepts.
	Name() string

	// Provision creates the tenant's workload. It is idempotent: when the
	// workload already exists and matches spec it changes nothing and returns
	// the same result; when it exists and differs it converges it to spec. It
	// is atomic: on failure, including context cancellation, it removes what
	// this call created. Errors wrap ErrInvalidSpec for a bad spec and
	// ErrProvisionFailed otherwise, marked Retryable or Terminal where the
	// provider knows. It may return ProvisionStatusInProgress when the
	// platform finishes asynchronously.
	Provision(ctx context.Context, spec *TenantComputeSpec) (*ProvisionResult, error)

	// Update converges the tenant's existing workload to spec, avoiding
	// downtime where the platform allows and restoring the previous state on
	// failure. It is idempotent: a spec the workload already matches returns
	// a result with no changes. It returns an error wrapping
	// ErrTenantNotFound when nothing exists for the tenant (the caller
	// provisions instead), ErrInvalidSpec for a bad spec and ErrUpdateFailed
	// otherwise.
	Update(ctx context.Context, tenantID string, spec *TenantComputeSpec) (*UpdateResult, error)

	// Destroy removes everything Provision and Update created for the tenant.
	// It is idempotent and returns nil when nothing exists. It finishes its
	// cleanup even when ctx is cancelled, and fails only when resources remain.
	Destroy(ctx context.Context, tenantID string) error

	// GetStatus reads the workload's state live from the platform, never from
	// a cache. It returns an error wrapping ErrTenantNotFound when nothing
	// exists for the tenant.
	GetStatus(ctx context.Context, tenantID string) (*ComputeStatus, error)

	// Validate checks a spec without side effects, including its
	// ProviderConfig. It may make read-only calls to the platform. Problems
	// are reported with an error wrapping ErrInvalidSpec, preferably a
	// *ValidationError naming every offending field.
	Validate(ctx context.Context, spec *TenantComputeSpec) error

	// ValidateConfig checks a merged compute_config beyond what its JSON
	// Schema can say (cross-field rules, operator policy). It returns a
	// *ValidationError, or nil.
	ValidateConfig(config json.RawMessage) error

	// ConfigSchema returns the JSON Schema (draft 2020-12) of the tenant
	// compute_config. Fields marked "writeOnly" are secrets.
	ConfigSchema() json.RawMessage

	// ConfigDefaults returns the operator's defaults, a JSON object merged
	// under each tenant's compute_config, or nil when there are none.
	ConfigDefaults() json.RawMessage
}

// HealthChecker is implemented by providers that can tell whether their
// platform is reachable.
type HealthChecker interface {
	// CheckHealth returns nil when the platform answers.
	CheckHealth(ctx context.Context) error
}

// ConfigDecoder is implemented by providers whose compute_config has fields
// of their own. Resolve calls DecodeConfig once, after the config has passed
// the provider's schema and its portable workload has been decoded into
// spec, in place of ValidateConfig: it reads the provider's own fields from
// config, checks them (operator policy, cross-field rules, the workload in
// spec where the platform limits it) and stores them, decoded, in
// spec.Options, where the provider finds them again in Provision and Update.
// Problems are violations of kind ErrInvalidSpec with pointers into config.
// Such a provider implements ValidateConfig with CheckConfig.
type ConfigDecoder interface {
	DecodeConfig(config json.RawMessage, spec *TenantComputeSpec) error
}

// CapabilityReporter is implemented by providers that declare what they
// support. Discovery shows it, and Resolve refuses a config that asks for
// what the provider cannot do, naming the field and the capability.
type CapabilityReporter interface {
	Capabilities() Capabilities
}

// ChangeNotifier is implemented by providers that hear about changes to
// tenants' workloads on their platform as they happen (a rollout
// finishing, a container failing, a resource deleted behind landlord's
// back), so that the controller looks at a tenant at once instead of at its
// next poll or resync.
type ChangeNotifier interface {
	// WatchChanges calls changed with the id of a tenant whose workload
	// changed, until ctx ends, and then returns nil; it returns an error
	// only when it cannot watch at all. changed may be called from any
	// goroutine and does not block. Notifications are hints that carry no
	// state: they may come late, twice or not at all (the controller's
	// resync stays the safety net), and whoever hears one reads the
	// tenant's status again.
	WatchChanges(ctx context.Context, changed func(tenantID string)) error
}
