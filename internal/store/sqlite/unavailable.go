package sqlite

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// unavailable marks err with tenant.ErrUnavailable when SQLite could not
// do the work for a reason that may pass (a full disk, an I/O error, the
// database locked past the busy timeout, no memory): the API answers 503
// with Retry-After rather than 500, and nothing is half-written, since the
// transaction rolled back.
func unavailable(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM,
		sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_PROTOCOL:
		return fmt.Errorf("%w: %w", tenant.ErrUnavailable, err)
	}
	return err
}
