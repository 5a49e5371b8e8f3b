package client

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Error is an answer of the API other than a success: its status and
// problem. Branch on Problem.Code, which is stable across releases.
type Error struct {
	Status  int
	Problem Problem
}

// Error is the problem's detail (or title), its code and status, then one
// line per field at fault.
func (e *Error) Error() string {
	var b strings.Builder
	detail := cmp.Or(e.Problem.Detail, e.Problem.ErrorMessage, e.Problem.Title)
	if detail == "" {
		detail = http.StatusText(e.Status)
	}
	b.WriteString(detail)
	if e.Problem.Code != "" {
		fmt.Fprintf(&b, " (%d %s)", e.Status, e.Problem.Code)
	} else {
		fmt.Fprintf(&b, " (%d)", e.Status)
	}
	if e.Status >= 500 && e.Problem.Instance != "" {
		fmt.Fprintf(&b, " [request %s]", e.Problem.Instance)
	}
	for _, f := range e.Problem.Errors {
		switch {
		case f.Pointer != "":
			fmt.Fprintf(&b, "\n  %s: %s", f.Pointer, f.Message)
		case f.Parameter != "":
			fmt.Fprintf(&b, "\n  parameter %s: %s", f.Parameter, f.Message)
		default:
			fmt.Fprintf(&b, "\n  %s", f.Message)
		}
	}
	return b.String()
}

// IsNotFound reports whether err is an API answer of 404: no such tenant,
// workload, provider or route.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports whether err is an API answer of 409: the name is taken,
// the tenant changed meanwhile, or it is being deleted.
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsPreconditionFailed reports whether err is an API answer of 412: the
// tenant changed since the version given in If-Match.
func IsPreconditionFailed(err error) bool { return hasStatus(err, http.StatusPreconditionFailed) }

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}

// TenantFailedError is what the conditions of Wait return when the tenant
// settles in failed.
type TenantFailedError struct {
	Tenant Tenant
}

func (e *TenantFailedError) Error() string {
	msg := e.Tenant.StatusMessage
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Sprintf("tenant %s failed: %s", e.Tenant.Name, msg)
}
