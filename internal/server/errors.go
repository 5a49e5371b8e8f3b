package server

import "errors"

// ErrConfig is matched (errors.Is) by the errors of a configuration the
// server refuses: a setting out of bounds, a provider this build does not
// have, TLS files that do not load. It stands beside the error, whose
// message is the error's own.
var ErrConfig = errors.New("server: configuration refused")

// configError marks err as one of the configuration.
type configError struct{ err error }

func (e *configError) Error() string        { return e.err.Error() }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// refused marks err, if any, as an error of the configuration.
func refused(err error) error {
	if err == nil {
		return nil
	}
	return &configError{err: err}
}
