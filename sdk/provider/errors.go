package provider

import (
	"errors"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Sentinel errors. Providers wrap them with %w and callers test them with
// errors.Is.
var (
	// ErrProviderNotFound means no enabled provider has the requested name.
	ErrProviderNotFound = errors.New("compute provider not found")
	// ErrInvalidSpec means a tenant's compute spec or config is invalid;
	// retrying the same input cannot succeed.
	ErrInvalidSpec = errors.New("invalid compute specification")
	// ErrProvisionFailed means a provider could not create a tenant's workload.
	ErrProvisionFailed = errors.New("provisioning failed")
	// ErrTenantNotFound means the provider holds no resources for the tenant.
	ErrTenantNotFound = errors.New("tenant compute resources not found")
	// ErrProviderConflict means a name is already taken: a provider with the
	// same name is already registered, or a platform resource of the name a
	// tenant's workload needs belongs to someone else (another tenant, or no
	// tenant), which a provider never takes over.
	ErrProviderConflict = errors.New("name already taken")
	// ErrUpdateFailed means a provider could not update a tenant's workload.
	ErrUpdateFailed = errors.New("update failed")
	// ErrProviderUnavailable means landlord cannot reach the provider
	// itself: a provider plugin that is not running (it crashed and is
	// being restarted). Nothing is known of the tenant's workload; the
	// operation is retried.
	ErrProviderUnavailable = errors.New("compute provider unavailable")
)

// retryError marks the error it wraps as retryable or terminal.
type retryError struct {
	err       error
	retryable bool
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// Retryable marks err as transient: the same operation may succeed later.
// It returns nil when err is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryError{err: err, retryable: true}
}

// Terminal marks err as permanent: retrying the same operation with the same
// input cannot succeed. It returns nil when err is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &retryError{err: err, retryable: false}
}

// IsTerminal reports whether retrying the operation that returned err is
// pointless. The outermost Retryable or Terminal mark decides; an unmarked
// error is terminal when it wraps ErrInvalidSpec or ErrProviderNotFound and
// retryable otherwise, so an unexpected failure is retried with backoff
// rather than given up on.
func IsTerminal(err error) bool {
	if err == nil {
		return false
	}
	var marked *retryError
	if errors.As(err, &marked) {
		return !marked.retryable
	}
	return errors.Is(err, ErrInvalidSpec) || errors.Is(err, ErrProviderNotFound)
}

// IsRetryable reports whether err is non-nil and not terminal.
func IsRetryable(err error) bool {
	return err != nil && !IsTerminal(err)
}

// Invalid returns a violation of kind ErrInvalidSpec at pointer.
func Invalid(pointer, format string, args ...any) *violation.Error {
	return violation.New(ErrInvalidSpec, pointer, format, args...)
}

// AsInvalidSpec re-kinds the violations a toolkit function reported (of kind
// workload.ErrInvalid) as an invalid compute spec; other errors pass.
func AsInvalidSpec(err error) error {
	if v := violation.Of(err); v != nil && !errors.Is(err, ErrInvalidSpec) {
		return violation.List(v).Err(ErrInvalidSpec)
	}
	return err
}
