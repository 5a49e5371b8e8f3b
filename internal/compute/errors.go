package compute

import (
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// ErrProviderConflict means a provider with the same name is already
	// registered.
	ErrProviderConflict = errors.New("provider already registered")
	// ErrUpdateFailed means a provider could not update a tenant's workload.
	ErrUpdateFailed = errors.New("update failed")
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

// Violation is one problem found in a compute config.
type Violation struct {
	// Pointer is the RFC 6901 JSON pointer of the offending value, relative to
	// the validated document ("" is the document itself).
	Pointer string `json:"pointer"`
	// Message says what is wrong in words a person understands.
	Message string `json:"message"`
}

func (v Violation) String() string {
	if v.Pointer == "" {
		return v.Message
	}
	return v.Pointer + ": " + v.Message
}

// ValidationError reports every violation found in a config or spec at once.
// It wraps ErrInvalidSpec and is terminal.
type ValidationError struct {
	Violations []Violation
}

// Invalid returns a ValidationError with one violation at pointer.
func Invalid(pointer, format string, args ...any) *ValidationError {
	return &ValidationError{Violations: []Violation{{Pointer: pointer, Message: fmt.Sprintf(format, args...)}}}
}

// Add records a violation at pointer.
func (e *ValidationError) Add(pointer, format string, args ...any) {
	e.Violations = append(e.Violations, Violation{Pointer: pointer, Message: fmt.Sprintf(format, args...)})
}

// Err returns e when it holds violations, sorted by pointer, and nil
// otherwise, so a caller can collect problems and return e.Err().
func (e *ValidationError) Err() error {
	if e == nil || len(e.Violations) == 0 {
		return nil
	}
	slices.SortStableFunc(e.Violations, func(a, b Violation) int { return strings.Compare(a.Pointer, b.Pointer) })
	return e
}

// Prefixed returns a copy of e with prefix (a JSON pointer) put in front of
// every violation's pointer, for a config nested in a larger document.
func (e *ValidationError) Prefixed(prefix string) *ValidationError {
	out := &ValidationError{Violations: make([]Violation, len(e.Violations))}
	for i, v := range e.Violations {
		out.Violations[i] = Violation{Pointer: prefix + v.Pointer, Message: v.Message}
	}
	return out
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(ErrInvalidSpec.Error())
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalidSpec) hold.
func (e *ValidationError) Unwrap() error { return ErrInvalidSpec }

// Violations returns the violations carried by err, or nil when err holds no
// ValidationError.
func Violations(err error) []Violation {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return ve.Violations
	}
	return nil
}

// pointerEscape escapes one reference token of a JSON pointer (RFC 6901).
func pointerEscape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}

// pointer joins reference tokens into a JSON pointer.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscape(t))
	}
	return b.String()
}
