package service

import (
	"fmt"
)

// Kind is what sort of refusal an Error is; the API maps each to one HTTP
// status.
type Kind int

// The kinds of refusal.
const (
	// KindFromCause takes the kind, and the code, of the domain error
	// the Error wraps (Err): the Error only rewords it.
	KindFromCause Kind = iota
	// KindMalformed is a request that is not well formed: a bad name, a
	// member of the wrong shape.
	KindMalformed
	// KindInvalid is a well-formed request that breaks a rule.
	KindInvalid
	// KindNotFound is a request for something that does not exist.
	KindNotFound
	// KindConflict is a request that the state of what it names refuses.
	KindConflict
	// KindUnsupported is a request this server was not set up for.
	KindUnsupported
)

// Field is one thing at fault in a request: a member at a JSON pointer,
// or a parameter outside the body.
type Field struct {
	Pointer   string
	Parameter string
	Message   string
}

// Error is a use case's refusal, worded for the user: what went wrong and
// what to do next.
type Error struct {
	Kind Kind
	// Code is the refusal's stable code (wire.Code*); empty with
	// KindFromCause.
	Code   string
	Detail string
	Fields []Field
	// Err is the domain error it words, if any.
	Err error
}

// Error is the detail and, for the log, the cause it words.
func (e *Error) Error() string {
	switch {
	case e.Err == nil:
		return e.Detail
	case e.Detail == "":
		return e.Err.Error()
	}
	return e.Detail + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// refuse is an Error of kind and code.
func refuse(kind Kind, code, detail string, fields ...Field) *Error {
	return &Error{Kind: kind, Code: code, Detail: detail, Fields: fields}
}

// reword is err, a domain error, with detail and fields of its own: its
// kind and code stay those of err.
func reword(err error, detail string, fields ...Field) *Error {
	return &Error{Kind: KindFromCause, Detail: detail, Fields: fields, Err: err}
}

// StaleError is a change refused because what it names changed since the
// version the caller read (Versions). Current is the version now, 0 when
// unknown.
type StaleError struct {
	What    string // "tenant", "rollout"
	Current int64
}

func (e *StaleError) Error() string {
	if e.Current > 0 {
		return fmt.Sprintf("the %s changed since it was read (it is now version %d)", e.What, e.Current)
	}
	return fmt.Sprintf("the %s changed since it was read", e.What)
}
