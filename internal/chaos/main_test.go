package chaos_test

import (
	"os"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestMain runs the tests through pgtest.Main, which stops the PostgreSQL
// cluster the PostgreSQL runs started, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
