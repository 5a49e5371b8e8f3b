package events_test

import (
	"os"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// TestMain stops the PostgreSQL cluster the benchmarks start, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
