package tenant

import "fmt"

// Status is a tenant's lifecycle state.
type Status string

// Lifecycle states.
const (
	StatusRequested    Status = "requested"
	StatusProvisioning Status = "provisioning"
	StatusReady        Status = "ready"
	StatusUpdating     Status = "updating"
	StatusDeleting     Status = "deleting"
	StatusDeleted      Status = "deleted"
	StatusFailed       Status = "failed"
)

// Statuses lists every state, in lifecycle order.
var Statuses = []Status{StatusRequested, StatusProvisioning, StatusReady, StatusUpdating, StatusDeleting, StatusDeleted, StatusFailed}

// transitions is the one table of allowed status changes, used by the API,
// the controller and the stores. Staying in a state (to change its message)
// is always allowed, except in deleted.
var transitions = map[Status][]Status{
	StatusRequested:    {StatusProvisioning, StatusFailed, StatusDeleting},
	StatusProvisioning: {StatusReady, StatusFailed, StatusDeleting},
	// A ready tenant whose workload vanished is provisioned again.
	StatusReady:    {StatusUpdating, StatusProvisioning, StatusFailed, StatusDeleting},
	StatusUpdating: {StatusReady, StatusFailed, StatusDeleting},
	// A failed tenant is retried by a new config, repaired, or cleaned up.
	StatusFailed:   {StatusProvisioning, StatusUpdating, StatusReady, StatusDeleting},
	StatusDeleting: {StatusDeleted, StatusFailed},
	StatusDeleted:  {},
}

// Valid reports whether s is a known state.
func (s Status) Valid() bool {
	_, ok := transitions[s]
	return ok
}

// InProgress reports whether the controller is still working towards a
// settled state.
func (s Status) InProgress() bool {
	switch s {
	case StatusRequested, StatusProvisioning, StatusUpdating, StatusDeleting:
		return true
	}
	return false
}

// Settled reports whether reaching s settles the generation being worked on
// (it becomes the ObservedGeneration).
func (s Status) Settled() bool {
	return s == StatusReady || s == StatusFailed || s == StatusDeleted
}

// CanTransition reports whether a tenant may move from one state to another.
func CanTransition(from, to Status) bool {
	if from == to {
		return from != StatusDeleted && from.Valid()
	}
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// CheckTransition returns an error wrapping ErrInvalidTransition when the
// move is not allowed.
func CheckTransition(from, to Status) error {
	if !CanTransition(from, to) {
		return fmt.Errorf("%w: %s → %s", ErrInvalidTransition, from, to)
	}
	return nil
}
