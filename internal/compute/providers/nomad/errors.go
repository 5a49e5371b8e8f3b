package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// errIndexConflict marks a write that lost to another writer of the same
// job between landlord's read and its write (EnforceIndex): retryable, and
// retried at once with a fresh read.
var errIndexConflict = errors.New("the job changed since it was read")

// apiError words a failed call for the tenant's status message (what
// failed and Nomad's own message) and marks it retryable or terminal.
//
// Retryable: no answer, throttling (429), Nomad's own failures (5xx),
// and a lost EnforceIndex race. Terminal: a request Nomad refused (400,
// an invalid job: the config's to fix), a token without the rights (403),
// and everything else.
func apiError(op string, err error) error {
	if err == nil {
		return nil
	}
	var resp api.UnexpectedResponseError
	if !errors.As(err, &resp) || !resp.HasStatusCode() {
		// No answer (or the context ended): the network, or Nomad down.
		return provider.Retryable(fmt.Errorf("nomad: %s: %w", op, err))
	}
	body := strings.Join(strings.Fields(resp.Body()), " ")
	wrapped := &callError{op: op, body: body, code: resp.StatusCode(), err: err}
	switch code := resp.StatusCode(); {
	case strings.Contains(body, "Enforcing job modify index"):
		return provider.Retryable(fmt.Errorf("%w: %w", wrapped, errIndexConflict))
	case strings.Contains(body, "validation failed"):
		// Nomad answers 500 to a job it finds invalid.
		return provider.Terminal(fmt.Errorf("%w: %w", wrapped, provider.ErrInvalidSpec))
	case code == http.StatusTooManyRequests || code >= http.StatusInternalServerError:
		return provider.Retryable(wrapped)
	case code == http.StatusForbidden:
		return provider.Terminal(fmt.Errorf("%w: landlord's ACL token may not do this; give it the policy in deploy/nomad/landlord-policy.hcl", wrapped))
	case code == http.StatusBadRequest:
		return provider.Terminal(fmt.Errorf("%w: %w", wrapped, provider.ErrInvalidSpec))
	default:
		return provider.Terminal(wrapped)
	}
}

// callError is a call Nomad refused: what landlord asked, and Nomad's
// answer, once (the client's own error repeats the body).
type callError struct {
	op   string
	body string
	code int
	err  error
}

func (e *callError) Error() string {
	return fmt.Sprintf("nomad: %s: %s (HTTP %d)", e.op, e.body, e.code)
}

func (e *callError) Unwrap() error { return e.err }

// isNotFound reports whether err is Nomad's 404.
func isNotFound(err error) bool {
	var resp api.UnexpectedResponseError
	return errors.As(err, &resp) && resp.StatusCode() == http.StatusNotFound
}
