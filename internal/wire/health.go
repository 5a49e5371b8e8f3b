package wire

// Health is the answer of /healthz and /readyz.
type Health struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}

// Identity is who a request's token says its caller is: the answer of
// GET /v1/whoami.
type Identity struct {
	// Name is the token's name, the actor recorded in history;
	// "anonymous" on a server without tokens.
	Name string `json:"name"`
	// Role is admin (may read and write) or reader (may only read).
	Role string `json:"role"`
}
