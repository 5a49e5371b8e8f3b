package wire

// Annotations a client sets on a tenant to ask something of the server.
// They travel as any other annotation, in a merge patch of the tenant.
const (
	// PausedAnnotation stops all reconciliation of a tenant (except its
	// deletion) while its value is "true"; removing it resumes.
	PausedAnnotation = "landlord.io/paused"
	// RetryAnnotation, set to the time of the retry, asks for another
	// attempt at a tenant. Changing it changes the tenant's desired state,
	// so the controller tries the tenant again at once, its attempts
	// counted from zero, as kubectl rollout restart does with an
	// annotation of its own.
	RetryAnnotation = "landlord.io/retry"
)
