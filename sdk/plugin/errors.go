package plugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/jaxxstorm/landlord/sdk/plugin/pluginpb"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// kinds are the sentinels an error crosses the boundary as, in the order
// they are tested: the first that the error wraps is its kind.
var kinds = []struct {
	err  error
	kind pluginpb.Error_Kind
}{
	{provider.ErrInvalidSpec, pluginpb.Error_INVALID_SPEC},
	{provider.ErrTenantNotFound, pluginpb.Error_TENANT_NOT_FOUND},
	{provider.ErrProviderConflict, pluginpb.Error_PROVIDER_CONFLICT},
	{provider.ErrProvisionFailed, pluginpb.Error_PROVISION_FAILED},
	{provider.ErrUpdateFailed, pluginpb.Error_UPDATE_FAILED},
	{provider.ErrProviderNotFound, pluginpb.Error_PROVIDER_NOT_FOUND},
	{provider.ErrProviderUnavailable, pluginpb.Error_PROVIDER_UNAVAILABLE},
}

// toStatus is the gRPC status a provider's error crosses the boundary as:
// its text, the sentinel it wraps, its verdict (retryable or terminal),
// its violations, and whether it is the context's.
func toStatus(err error) error {
	detail := &pluginpb.Error{Retry: pluginpb.Error_RETRYABLE}
	if provider.IsTerminal(err) {
		detail.Retry = pluginpb.Error_TERMINAL
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			detail.Kind = k.kind
			break
		}
	}
	for _, v := range violation.Of(err) {
		detail.Violations = append(detail.Violations, &pluginpb.Violation{Pointer: v.Pointer, Message: v.Message})
	}
	code := codes.Unknown
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	st, derr := status.New(code, err.Error()).WithDetails(detail)
	if derr != nil {
		return status.Error(code, err.Error())
	}
	return st.Err()
}

// remoteError is a provider's error as it came across the boundary: its
// text, and the sentinel (with the violations) it wrapped.
type remoteError struct {
	msg   string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }

// fromStatus turns the error of a call to the plugin back into what the
// provider returned: the same text, wrapping the same sentinel and
// violations, with the same verdict. Errors of the transport (the plugin
// is gone, the call timed out) wrap ErrProviderUnavailable or the
// context's error, and are retryable.
func fromStatus(name, method string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return provider.Retryable(fmt.Errorf("plugin %s: %s: %w: %w", name, method, provider.ErrProviderUnavailable, err))
	}
	var detail *pluginpb.Error
	for _, d := range st.Details() {
		if e, ok := d.(*pluginpb.Error); ok {
			detail = e
		}
	}
	if detail == nil {
		return transportError(name, method, st)
	}
	var cause error
	for _, k := range kinds {
		if k.kind == detail.Kind {
			cause = k.err
		}
	}
	if len(detail.Violations) > 0 {
		v := &violation.Error{Kind: cause}
		for _, pv := range detail.Violations {
			v.Violations = append(v.Violations, violation.Violation{Pointer: pv.Pointer, Message: pv.Message})
		}
		cause = v
	}
	switch st.Code() {
	case codes.Canceled:
		cause = errors.Join(cause, context.Canceled)
	case codes.DeadlineExceeded:
		cause = errors.Join(cause, context.DeadlineExceeded)
	}
	out := error(&remoteError{msg: st.Message(), cause: cause})
	switch detail.Retry {
	case pluginpb.Error_RETRYABLE:
		out = provider.Retryable(out)
	case pluginpb.Error_TERMINAL:
		out = provider.Terminal(out)
	}
	return out
}

// transportError is a failed call that the provider did not answer.
func transportError(name, method string, st *status.Status) error {
	switch st.Code() {
	case codes.Canceled:
		return provider.Retryable(fmt.Errorf("plugin %s: %s: %w", name, method, context.Canceled))
	case codes.DeadlineExceeded:
		return provider.Retryable(fmt.Errorf("plugin %s: %s did not answer in time: %w", name, method, context.DeadlineExceeded))
	case codes.Unimplemented:
		return provider.Terminal(fmt.Errorf("plugin %s does not implement %s (%s): build it with a newer SDK", name, method, st.Message()))
	case codes.Unavailable:
		return provider.Retryable(fmt.Errorf("plugin %s: %s: %w: %s", name, method, provider.ErrProviderUnavailable, st.Message()))
	default:
		// The plugin answered, without a provider's error: a fault of the
		// plugin (a call before Configure, a result it could not send).
		return provider.Retryable(fmt.Errorf("plugin %s: %s failed: %s (%s)", name, method, st.Message(), st.Code()))
	}
}
