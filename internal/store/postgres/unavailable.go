package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// unavailable marks err with tenant.ErrUnavailable when PostgreSQL could
// not do the work for a reason that may pass: insufficient resources
// (class 53: disk full, out of memory, too many connections), a broken or
// refused connection (class 08, or no answer at all), the server shutting
// down or starting (57P01–57P03), or a system I/O error (class 58). The
// API answers 503 with Retry-After rather than 500. Every error of a query,
// a read's as a write's, passes through it: a stopped server is a 503 for
// both.
func unavailable(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch c := pgErr.Code; {
		case strings.HasPrefix(c, "53"), strings.HasPrefix(c, "08"), strings.HasPrefix(c, "58"),
			c == "57P01", c == "57P02", c == "57P03":
			return fmt.Errorf("%w: %w", tenant.ErrUnavailable, err)
		}
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) {
		return fmt.Errorf("%w: %w", tenant.ErrUnavailable, err)
	}
	return err
}
