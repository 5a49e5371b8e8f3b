package fleet

import "errors"

// Errors the stores and rules return; the API maps each to one HTTP status.
var (
	// ErrNotFound: no plan, plan version or rollout has that name or id.
	ErrNotFound = errors.New("not found")
	// ErrExists: a plan with that name exists already.
	ErrExists = errors.New("already exists")
	// ErrConflict: the rollout or member changed since the caller read it,
	// or the plan has a rollout that has not finished.
	ErrConflict = errors.New("changed concurrently")
	// ErrInUse: the plan cannot be deleted while tenants follow it or a
	// rollout of it has not finished.
	ErrInUse = errors.New("in use")
	// ErrInvalid: a field breaks the rules (a name, a wave, a duration).
	ErrInvalid = errors.New("invalid")
	// ErrState: the rollout's state does not allow the action (resuming a
	// completed rollout).
	ErrState = errors.New("not allowed in the rollout's state")
)
