package tenant

import (
	"context"
	"time"
)

// IdempotencyTTL is how long a stored response answers a repeated request.
const IdempotencyTTL = 24 * time.Hour

// IdempotentResponse is the response to a request sent with an
// Idempotency-Key, kept so that a retry of the same request gets the same
// answer instead of doing the work twice.
type IdempotentResponse struct {
	// Actor and Key identify it: keys are per caller.
	Actor string
	Key   string
	// RequestHash fingerprints the request, so that a key reused for
	// another request is refused.
	RequestHash string
	Status      int
	Header      map[string]string
	Body        []byte
	CreatedAt   time.Time
}

// IdempotencyStore keeps responses to requests sent with an Idempotency-Key,
// in the database, so that a retry after a restart or to another replica
// gets the same answer.
type IdempotencyStore interface {
	// SaveIdempotent keeps r unless a response younger than IdempotencyTTL
	// already exists for its actor and key; then it returns that one and
	// false. CreatedAt is set by the store.
	SaveIdempotent(ctx context.Context, r IdempotentResponse) (IdempotentResponse, bool, error)
	// GetIdempotent returns the response kept for actor and key, if it is
	// younger than IdempotencyTTL; ErrNotFound otherwise.
	GetIdempotent(ctx context.Context, actor, key string) (IdempotentResponse, error)
}
