package api_test

import (
	"os"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster that tests running on both stores
// start, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
