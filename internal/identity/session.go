package identity

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Session is a sign-in to the web console, recorded in the database so
// that signing out ends it on every replica sharing that database, before
// its cookie expires: a cookie is honoured only while its session is
// recorded. The cookie, sealed, holds the session's ID and the bearer token
// the user signed in with; the database holds neither the token nor
// anything that opens the cookie without the install's key.
type Session struct {
	// ID is random and secret: only the session's own cookie holds it.
	ID string
	// Holder is who signed in: the principal's name, as recorded in the
	// history of their changes. Ending every session of a holder
	// (EndSessionsOf) signs them out everywhere.
	Holder string
	// CreatedAt is when they signed in; ExpiresAt when the session ends
	// by itself.
	CreatedAt, ExpiresAt time.Time
}

// Errors of a SessionStore.
var (
	// ErrNoSession means the session is not recorded: it was ended,
	// expired, or never was.
	ErrNoSession = errors.New("no such session")
	// ErrSessionInvalid means a session to record has no ID or holder,
	// or expires before it was created.
	ErrSessionInvalid = errors.New("the session is not valid")
)

// SessionStore records the console's sessions. Every replica reads the
// same records, so that a session ended on one is ended on all.
type SessionStore interface {
	// CreateSession records s. It may forget sessions that expired
	// before now, by the store's clock. It returns an error wrapping
	// ErrSessionInvalid for a session without an ID or holder, or one
	// whose ExpiresAt is not after its CreatedAt.
	CreateSession(ctx context.Context, s Session) error
	// Session returns the session with id, or an error wrapping
	// ErrNoSession when none is recorded, or one that expired by the
	// store's clock.
	Session(ctx context.Context, id string) (Session, error)
	// EndSession forgets the session with id. Ending one that is not
	// recorded is no error: the caller wanted it gone.
	EndSession(ctx context.Context, id string) error
	// EndSessionsOf forgets every session of holder and returns how many
	// there were.
	EndSessionsOf(ctx context.Context, holder string) (int, error)
}

// Check returns an error wrapping ErrSessionInvalid when s cannot be
// recorded: no ID, no holder, or no time between its creation and expiry.
func (s Session) Check() error {
	switch {
	case s.ID == "":
		return fmt.Errorf("%w: a session needs an id", ErrSessionInvalid)
	case s.Holder == "":
		return fmt.Errorf("%w: a session needs a holder", ErrSessionInvalid)
	case !s.ExpiresAt.After(s.CreatedAt):
		return fmt.Errorf("%w: a session must expire after it is created", ErrSessionInvalid)
	}
	return nil
}
