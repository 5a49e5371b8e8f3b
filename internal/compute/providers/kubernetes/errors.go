package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// apiError words a failed call for the tenant's status message (what
// failed, the API server's reason and message) and marks it retryable or
// terminal. The client's error stays in the chain, so apierrors' checks
// still see it.
//
// Retryable: conflicts, throttling, timeouts, the server's own failures,
// no answer at all, a namespace's quota, and content refused because its
// namespace is being deleted. Terminal: refused by RBAC or an admission
// webhook (403), invalid objects (422), and everything else the server
// refused.
func apiError(op string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("kubernetes: %s: %w", op, err)
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return provider.Retryable(wrapped)
	case !errors.As(err, &status):
		// No answer from the API server: a network problem, or credentials
		// that could not be had.
		return provider.Retryable(wrapped)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return provider.Retryable(fmt.Errorf("%w (the namespace is being deleted; retried once it is gone)", wrapped))
	case apierrors.IsConflict(err), apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err),
		status.Status().Code >= http.StatusInternalServerError:
		return provider.Retryable(wrapped)
	case apierrors.IsForbidden(err) && strings.Contains(status.Status().Message, "exceeded quota"):
		// A quota of the namespace: room may come.
		return provider.Retryable(wrapped)
	case apierrors.IsForbidden(err) && strings.Contains(status.Status().Message, "admission webhook"):
		// A policy of the cluster refused the object as the config makes it.
		return provider.Terminal(fmt.Errorf("%w: %w", wrapped, provider.ErrInvalidSpec))
	case apierrors.IsForbidden(err) && strings.Contains(status.Status().Message, " cannot "):
		return provider.Terminal(fmt.Errorf("%w: landlord's identity may not do this; grant it the ClusterRole in deploy/kubernetes/rbac.yaml", wrapped))
	case apierrors.IsUnauthorized(err):
		return provider.Terminal(fmt.Errorf("%w: the API server does not accept landlord's credentials; check the kubeconfig", wrapped))
	case apierrors.IsInvalid(err):
		return provider.Terminal(fmt.Errorf("%w: %w", wrapped, provider.ErrInvalidSpec))
	default:
		return provider.Terminal(wrapped)
	}
}
