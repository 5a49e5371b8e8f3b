package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Errors of a server that cannot take the work now are marked
// ErrUnavailable (503 with Retry-After); the others pass as they are.
func TestUnavailable(t *testing.T) {
	for code, want := range map[string]bool{
		"53100": true, // disk_full
		"53200": true, // out_of_memory
		"53300": true, // too_many_connections
		"08006": true, // connection_failure
		"57P01": true, // admin_shutdown
		"57P03": true, // cannot_connect_now
		"58030": true, // io_error
		"23505": false,
		"40001": false,
		"22P02": false,
	} {
		err := unavailable(fmt.Errorf("insert: %w", &pgconn.PgError{Code: code}))
		if got := errors.Is(err, tenant.ErrUnavailable); got != want {
			t.Errorf("SQLSTATE %s: unavailable = %v, want %v", code, got, want)
		}
	}
	if err := unavailable(context.Canceled); errors.Is(err, tenant.ErrUnavailable) {
		t.Error("a cancelled request is not the database's failure")
	}
	if err := unavailable(&pgconn.ConnectError{}); !errors.Is(err, tenant.ErrUnavailable) {
		t.Error("a refused connection is not marked unavailable")
	}
}
