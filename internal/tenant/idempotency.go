package tenant

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// IdempotencyTTL is how long a stored response answers a repeated request.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyLease is the default of how long a key's reservation keeps
// other requests with the key waiting (api.idempotency_lease). A
// reservation older than that belongs to a request that died with its
// landlord (none takes that long otherwise), and the next request with the
// key takes it over.
const IdempotencyLease = 30 * time.Second

// Bounds of a reservation's lease. Below a second, requests that are still
// working would be taken over under load: that is safe (the request taken
// over stores nothing) but wasted. Above ten minutes, the clients of a
// landlord that died would wait longer than any client does.
const (
	MinIdempotencyLease = time.Second
	MaxIdempotencyLease = 10 * time.Minute
)

// CheckIdempotencyLease reports a reservation lease outside
// MinIdempotencyLease to MaxIdempotencyLease.
func CheckIdempotencyLease(lease time.Duration) error {
	if lease < MinIdempotencyLease || lease > MaxIdempotencyLease {
		return fmt.Errorf("the idempotency lease %v is not between %v and %v", lease, MinIdempotencyLease, MaxIdempotencyLease)
	}
	return nil
}

// ErrReservationLost: the caller's reservation of an idempotency key is no
// longer its own — another request took it over after the lease, or it was
// released — so nothing of the caller's write was stored.
var ErrReservationLost = errors.New("idempotency key reservation lost")

// IdempotentResponse is what is kept for an Idempotency-Key: first a
// reservation by the request that uses it (Pending), then that request's
// response, so that a retry of the same request gets the same answer instead
// of doing the work twice.
type IdempotentResponse struct {
	// Actor and Key identify it: keys are per caller.
	Actor string
	Key   string
	// RequestHash fingerprints the request, so that a key reused for
	// another request is refused.
	RequestHash string
	// Token identifies one reservation of the key; a takeover draws a new
	// one, so that the request it was taken from can no longer complete it.
	Token string
	// Status, Header and Body are the response; Status is 0 while pending.
	Status int
	Header map[string]string
	Body   []byte
	// CreatedAt is when the key was reserved, then when its response was
	// kept; IdempotencyLease and IdempotencyTTL count from it.
	CreatedAt time.Time
}

// Pending reports whether r is a reservation whose request has not kept a
// response (yet: it may be working, or have died).
func (r IdempotentResponse) Pending() bool { return r.Status == 0 }

// Completed returns the reservation res holding resp's Status, Header and
// Body, kept at now. A status that is not an HTTP status is refused: 0
// would read as pending.
func Completed(res, resp IdempotentResponse, now time.Time) (IdempotentResponse, error) {
	if resp.Status < 100 || resp.Status > 599 {
		return IdempotentResponse{}, fmt.Errorf("idempotency key %q: %d is not an HTTP status", res.Key, resp.Status)
	}
	res.Status, res.Header, res.Body, res.CreatedAt = resp.Status, resp.Header, resp.Body, Timestamp(now)
	return res, nil
}

// IdempotencyStore keeps Idempotency-Keys and the responses to their
// requests in the database, so that a retry after a restart or to another
// replica gets the same answer. A request reserves its key before it does
// anything, and its write and its response are then stored in one
// transaction: a crash leaves either both (a retry gets the response) or
// neither (a retry does the work).
type IdempotencyStore interface {
	// ReserveIdempotent reserves actor's key for a request fingerprinted
	// requestHash: it stores a pending row with a new Token and returns it
	// and true when the key has no row, or an expired response (older than
	// IdempotencyTTL), or a reservation older than lease, which it takes
	// over. Of concurrent calls for one key, exactly one gets true. Otherwise
	// it returns the row kept for the key, pending or not, and false.
	// CreatedAt is set by the store's clock.
	ReserveIdempotent(ctx context.Context, actor, key, requestHash string, lease time.Duration) (IdempotentResponse, bool, error)

	// CreateIdempotent is Store.Create that, in the same transaction, keeps
	// the response respond makes of the created tenant (its Status, Header
	// and Body) for the reservation res: the tenant and the response are
	// both stored or neither is. It returns ErrReservationLost when res is
	// no longer pending with its token, and otherwise Create's errors and
	// respond's. respond may be called more than once.
	CreateIdempotent(ctx context.Context, t *Tenant, actor string, res IdempotentResponse,
		respond func(*Tenant) (IdempotentResponse, error)) (*Tenant, error)

	// ReleaseIdempotent deletes the reservation res if it is still pending
	// with its token, so that the key is free again; otherwise it does
	// nothing. It is for requests that end without storing anything.
	ReleaseIdempotent(ctx context.Context, res IdempotentResponse) error

	// GetIdempotent returns the row kept for actor and key, pending or not,
	// if it is younger than IdempotencyTTL; ErrNotFound otherwise.
	GetIdempotent(ctx context.Context, actor, key string) (IdempotentResponse, error)
}
