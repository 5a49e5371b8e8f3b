package chaos_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestMain runs the tests through pgtest.Main, which stops the PostgreSQL
// cluster the PostgreSQL runs started, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// left is how long ctx, the bound of a test, has left: how long a wait in
// that test may take.
func left(ctx context.Context) time.Duration {
	deadline, _ := ctx.Deadline()
	return time.Until(deadline)
}
