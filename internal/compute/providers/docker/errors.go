package docker

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// fail wraps err, from step of an operation on tenantID, with the
// operation's sentinel and marks it: retryable when ctx ended (the error then
// also wraps ctx's error) or the Engine may recover, terminal when the
// Engine refused the request as invalid or err is already marked terminal.
// A nil sentinel is a read that failed (a status), which changed nothing.
func fail(ctx context.Context, sentinel error, tenantID, step string, err error) error {
	format, args := "docker: tenant %s: %s", []any{tenantID, step}
	if sentinel != nil {
		format, args = format+": %w", append(args, sentinel)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if err == nil || errors.Is(err, ctxErr) {
			return provider.Retryable(fmt.Errorf(format+": %w", append(args, ctxErr)...))
		}
		return provider.Retryable(fmt.Errorf(format+": %w: %w", append(args, ctxErr, err)...))
	}
	wrapped := fmt.Errorf(format+": %w", append(args, err)...)
	switch {
	case provider.IsTerminal(err) && !errors.Is(err, provider.ErrInvalidSpec):
		return provider.Terminal(wrapped)
	case cerrdefs.IsInvalidArgument(err):
		return provider.Terminal(wrapped)
	default:
		return provider.Retryable(wrapped)
	}
}

// isNotFound reports whether the Engine answered that a resource does not exist.
func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }
