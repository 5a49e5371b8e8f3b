package pgtest

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
)

// unavailableError marks failures that mean "no PostgreSQL on this machine"
// rather than "the tests are broken": they skip unless EnvRequire is set.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// Is makes every unavailableError an ErrUnavailable for errors.Is.
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// unavailable marks err as a missing server.
func unavailable(err error) error { return &unavailableError{err} }

// fix tells the reader of a skip how to get a server.
const fix = "To fix: install the PostgreSQL 15 server and client (Debian: apt-get install postgresql-15), " +
	"or set " + EnvURL + "=postgres://user:password@host:5432/postgres to use a running server."

// report skips or fails t for err, which kept it from getting a database.
func report(t testing.TB, getenv func(string) string, err error) {
	t.Helper()
	if !errors.As(err, new(*unavailableError)) {
		t.Fatalf("pgtest: %v", err)
		return
	}
	required, perr := requireServer(getenv)
	switch {
	case perr != nil:
		t.Fatalf("pgtest: no PostgreSQL server: %v\n%s\n%v", err, fix, perr)
	case required:
		t.Fatalf("pgtest: no PostgreSQL server: %v\n%s\n%s is set, which makes this a failure rather than a skip.", err, fix, EnvRequire)
	default:
		t.Skipf("pgtest: no PostgreSQL server: %v\n%s\n(%s=1 makes this a failure.)", err, fix, EnvRequire)
	}
}

// requireServer reports whether EnvRequire, read through getenv, asks for
// failures instead of skips. Unset or empty means no.
func requireServer(getenv func(string) string) (bool, error) {
	v := getenv(EnvRequire)
	if v == "" {
		return false, nil
	}
	required, err := strconv.ParseBool(v)
	if err != nil {
		// A CI typo must not quietly turn failures back into skips.
		return true, fmt.Errorf("%s=%q is not a boolean (want 1 or 0): %w", EnvRequire, v, err)
	}
	return required, nil
}
