package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestSealed(t *testing.T) {
	storetest.RunSealed(t, func(t *testing.T) storetest.SealedDB {
		url := mustURL(t)
		return storetest.SealedDB{
			Open: func(t *testing.T, sealer tenant.Sealer) tenant.Store {
				t.Helper()
				s, err := Open(context.Background(), url, Options{Sealer: sealer})
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			Raw: func(t *testing.T, id string) string {
				t.Helper()
				return rawColumn(t, url, "compute_config::text", id)
			},
			RawPlacements: func(t *testing.T, id string) string {
				t.Helper()
				return rawColumn(t, url, "placements", id)
			},
		}
	})
}

// rawColumn reads column (an expression of type text) of tenant id from the
// database at url, with a connection of its own.
func rawColumn(t *testing.T, url, column, id string) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var raw string
	if err := conn.QueryRow(context.Background(), `SELECT `+column+` FROM tenants WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatalf("read the stored %s of %s: %v", column, id, err)
	}
	return raw
}

func BenchmarkSealed(b *testing.B) {
	storetest.BenchmarkSealed(b, func(b *testing.B, sealer tenant.Sealer) tenant.Store {
		s, err := Open(context.Background(), mustURL(b), Options{Sealer: sealer})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
