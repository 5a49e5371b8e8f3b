package seal

import "errors"

// Errors callers branch on; each is wrapped with what was being sealed or
// opened and what to do.
var (
	// ErrUnknownKey: a value is sealed with a key the keyring does not
	// hold. Configure that key again (encryption.keys) to read it.
	ErrUnknownKey = errors.New("sealed with an encryption key that is not configured")
	// ErrDecrypt: a value did not open with the key it names: the key's
	// material is not the one it was sealed with, or the value was altered
	// or moved to another tenant or field.
	ErrDecrypt = errors.New("sealed value does not open")
	// ErrMalformed: a string begins as a sealed value does but is not one.
	ErrMalformed = errors.New("malformed sealed value")
	// ErrNoPrimary: there is no primary key to seal with.
	ErrNoPrimary = errors.New("no primary encryption key")
	// ErrInvalidKey: a key's id or material is not usable.
	ErrInvalidKey = errors.New("invalid encryption key")
)
