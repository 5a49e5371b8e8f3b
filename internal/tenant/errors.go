package tenant

import "errors"

// Errors the stores return; the API maps each to one HTTP status.
var (
	// ErrNotFound: no tenant (or no live tenant) has that id or name.
	ErrNotFound = errors.New("tenant not found")
	// ErrConflict: the tenant changed since the caller read it (version or
	// generation mismatch). Read it again and retry.
	ErrConflict = errors.New("tenant was changed concurrently")
	// ErrNameTaken: a tenant that is not deleted already has the name.
	ErrNameTaken = errors.New("tenant name is taken")
	// ErrInvalidTransition: the lifecycle does not allow the status change.
	ErrInvalidTransition = errors.New("invalid tenant status transition")
	// ErrInvalid: a field breaks the tenant rules (name, labels, config).
	ErrInvalid = errors.New("invalid tenant")
	// ErrPlanNotFound: the tenant is to follow a plan that does not exist,
	// a version the plan does not have, or a plan of another provider than
	// the tenant's (the plan was deleted, or deleted and created again,
	// after the caller looked it up). The error carries a violation at
	// /plan/name or /plan/version (violation.Of).
	ErrPlanNotFound = errors.New("the tenant's plan does not exist")
	// ErrInvalidPageToken: a page token is malformed or from another listing.
	ErrInvalidPageToken = errors.New("invalid page token")
	// ErrFenced: an observation carries the epoch of a lease that has since
	// changed hands; its writer is no longer the controller.
	ErrFenced = errors.New("stale controller epoch")
	// ErrLeaseHeld: another holder has the lease.
	ErrLeaseHeld = errors.New("lease is held by another holder")
	// ErrLeaseLost: the lease changed hands since it was acquired.
	ErrLeaseLost = errors.New("lease lost")
	// ErrUnavailable: the database cannot take the request now (its disk
	// is full, it cannot be reached, it is shutting down); the same request
	// may succeed later. Stores wrap the driver's error with it.
	ErrUnavailable = errors.New("the database is unavailable")
	// ErrSecretUnreadable: a secret stored sealed (see Sealer) does not
	// open: the key it names is not configured, or the value was altered.
	// The operator must configure the key; retrying does not help until
	// then.
	ErrSecretUnreadable = errors.New("a stored secret cannot be read")
)
