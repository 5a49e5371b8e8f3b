package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// mustOpen opens a store on a new, empty database and closes it when tb
// ends. It returns the database's URL too.
func mustOpen(tb testing.TB, opts Options) (*Store, string) {
	tb.Helper()
	url := mustURL(tb)
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, url
}

// mustURL returns the URL of a new, empty database, or skips tb.
func mustURL(tb testing.TB) string {
	tb.Helper()
	url := pgtest.NewDatabase(tb)
	if url == "" {
		tb.SkipNow()
	}
	return url
}
