// Package identity names who calls landlord and what they may do. It is
// the contract between the API, which decides what a caller may do, and
// the ways a caller proves who they are: landlord's own bearer tokens,
// client certificates, and the tokens of an identity provider (see
// internal/oidc).
package identity

import (
	"context"
	"errors"
)

// Role is what a caller may do.
type Role string

// Roles.
const (
	// Admin may read and write.
	Admin Role = "admin"
	// Reader may only read.
	Reader Role = "reader"
)

// Valid reports whether r is Admin or Reader.
func (r Role) Valid() bool { return r == Admin || r == Reader }

// How a caller proved who they are, for messages that name the credential.
const (
	KindToken       = "token"
	KindCertificate = "certificate"
	KindSSO         = "identity provider token"
)

// Principal is who sent a request.
type Principal struct {
	// Name is the actor recorded in the history of their changes.
	Name string
	Role Role
	// Kind is how they proved it: KindToken, KindCertificate or KindSSO.
	Kind string
}

// Errors a TokenVerifier returns, wrapped with what was wrong.
var (
	// ErrInvalid means the token is not one to trust: malformed, badly
	// signed, expired, for another audience or from another issuer. The
	// API answers 401.
	ErrInvalid = errors.New("the token is not valid")
	// ErrNoRole means the token is valid but maps to no role. The API
	// answers 403.
	ErrNoRole = errors.New("the token maps to no role")
	// ErrUnavailable means the token could not be checked now: the keys
	// to check it with could not be fetched. The API answers 503.
	ErrUnavailable = errors.New("the token cannot be checked now")
)

// TokenVerifier checks bearer tokens that landlord did not issue itself.
type TokenVerifier interface {
	// VerifyToken returns who holds token, or an error wrapping
	// ErrInvalid, ErrNoRole or ErrUnavailable. The error's text is shown
	// to the caller: it must never hold the token.
	VerifyToken(ctx context.Context, token string) (Principal, error)
}
