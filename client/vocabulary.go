package client

import "github.com/jaxxstorm/landlord/internal/wire"

// The API's vocabulary beyond its types, under the client's names: what a
// program that talks to landlord branches on, sets or checks before it
// asks. Each is wire's, the value the server uses.

// Problem codes, the values of Problem.Code: stable across releases, so a
// program branches on them rather than on a message.
const (
	CodeBadRequest           = wire.CodeBadRequest
	CodeInvalidBody          = wire.CodeInvalidBody
	CodeInvalidName          = wire.CodeInvalidName
	CodeInvalidParameter     = wire.CodeInvalidParameter
	CodeInvalidComputeConfig = wire.CodeInvalidComputeConfig
	CodeUnauthorized         = wire.CodeUnauthorized
	CodeForbidden            = wire.CodeForbidden
	CodeNotFound             = wire.CodeNotFound
	CodeTenantNotFound       = wire.CodeTenantNotFound
	CodeWorkloadNotFound     = wire.CodeWorkloadNotFound
	CodeProviderNotFound     = wire.CodeProviderNotFound
	CodeMethodNotAllowed     = wire.CodeMethodNotAllowed
	CodeNameTaken            = wire.CodeNameTaken
	CodeVersionConflict      = wire.CodeVersionConflict
	CodeTenantDeleting       = wire.CodeTenantDeleting
	CodeProviderEnabled      = wire.CodeProviderEnabled
	CodePreconditionFailed   = wire.CodePreconditionFailed
	CodeBodyTooLarge         = wire.CodeBodyTooLarge
	CodeIdempotencyMismatch  = wire.CodeIdempotencyMismatch
	CodeIdempotencyPending   = wire.CodeIdempotencyPending
	CodeUnavailable          = wire.CodeUnavailable
	CodeStorageUnavailable   = wire.CodeStorageUnavailable
	CodeIdentityUnavailable  = wire.CodeIdentityUnavailable
	CodeSecretUnreadable     = wire.CodeSecretUnreadable
	CodeInternal             = wire.CodeInternal
	CodeFleetUnavailable     = wire.CodeFleetUnavailable
	CodePlanNotFound         = wire.CodePlanNotFound
	CodePlanVersionNotFound  = wire.CodePlanVersionNotFound
	CodeRolloutNotFound      = wire.CodeRolloutNotFound
	CodePlanExists           = wire.CodePlanExists
	CodePlanInUse            = wire.CodePlanInUse
	CodeInvalidPlan          = wire.CodeInvalidPlan
	CodePlanBreaksTenants    = wire.CodePlanBreaksTenants
	CodeRolloutActive        = wire.CodeRolloutActive
	CodeRolloutState         = wire.CodeRolloutState
)

// Annotations that ask something of the server. Retry and the console set
// them; Tenants().Patch sets them as any other annotation.
const (
	// PausedAnnotation stops all reconciliation of a tenant (except its
	// deletion) while its value is "true"; removing it resumes.
	PausedAnnotation = wire.PausedAnnotation
	// RetryAnnotation is the annotation Retry sets, to the time of the
	// retry. Changing it changes the tenant's desired state, so the
	// controller tries the tenant again at once, its attempts counted
	// from zero, as kubectl rollout restart does with an annotation of its
	// own.
	RetryAnnotation = wire.RetryAnnotation
)

// Keys of a compute_config (or labels, or annotations) that choose a
// tenant's provider: SelectionKey names an enabled provider,
// SelectionKeyType a type of provider.
const (
	SelectionKey     = wire.SelectionKey
	SelectionKeyType = wire.SelectionKeyType
)

// RedactedValue stands for a secret value in the API's answers. Sent back
// for a secret in a replace, it keeps the stored secret.
const RedactedValue = wire.RedactedValue

// Limits the API holds requests to.
const (
	// DefaultPageSize is the size of a page when ListOptions.PageSize is
	// 0; MaxPageSize is the most a page holds.
	DefaultPageSize = wire.DefaultPageSize
	MaxPageSize     = wire.MaxPageSize
	// MaxWaves is the most waves a rollout's spec may give.
	MaxWaves = wire.MaxWaves
)

// IsID reports whether s has the form of a tenant id (a UUID). Tenant
// names never do, so wherever the API takes "a tenant id or name" the two
// are never ambiguous.
func IsID(s string) bool { return wire.IsID(s) }

// WindowError is a maintenance window ParseWindow read but that breaks a
// rule, with every problem.
type WindowError = wire.WindowError

// ParseWindow reads a maintenance window as MaintenanceWindow's String
// writes it, "[DAYS|daily] HH:MM-HH:MM [ZONE]" such as "sat,sun
// 02:00-04:00 Europe/Paris", and checks it by the server's rules: a
// *WindowError lists every problem.
func ParseWindow(s string) (*MaintenanceWindow, error) { return wire.ParseWindow(s) }
