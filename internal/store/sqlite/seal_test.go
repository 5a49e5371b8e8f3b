package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// sealedDB is a database file for storetest.RunSealed; Raw reads the
// column with a connection of its own.
func sealedDB(t *testing.T) storetest.SealedDB {
	path := filepath.Join(t.TempDir(), "landlord.db")
	return storetest.SealedDB{
		Open: func(t *testing.T, sealer tenant.Sealer) tenant.Store {
			t.Helper()
			s, err := sqlite.Open(context.Background(), path, sqlite.Options{Sealer: sealer})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Raw: func(t *testing.T, id string) string {
			t.Helper()
			return rawColumn(t, path, "compute_config", id)
		},
		RawPlacements: func(t *testing.T, id string) string {
			t.Helper()
			return rawColumn(t, path, "placements", id)
		},
	}
}

// rawColumn reads column of tenant id from the database file at path, with
// a connection of its own.
func rawColumn(t *testing.T, path, column, id string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var raw string
	if err := db.QueryRow(`SELECT `+column+` FROM tenants WHERE id = ?`, id).Scan(&raw); err != nil {
		t.Fatalf("read the stored %s of %s: %v", column, id, err)
	}
	return raw
}

func TestSealed(t *testing.T) {
	storetest.RunSealed(t, sealedDB)
}

// No byte of the files SQLite writes (the database and its write-ahead
// log) holds a secret of a tenant that was only ever stored sealed.
func TestSealedFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "landlord.db")
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Sealer: storetest.SealConfigs(t, "k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(context.Background(), storetest.SecretTenant("acme"), "test"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range storetest.SecretsOf("acme") {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the secret %q", filepath.Base(f), secret)
			}
		}
		if f == path+"-wal" && !bytes.Contains(b, []byte("llsec:v1:k1:")) {
			t.Errorf("%s holds no sealed value: the test looks in the wrong place", filepath.Base(f))
		}
	}
}

func BenchmarkSealed(b *testing.B) {
	storetest.BenchmarkSealed(b, func(b *testing.B, sealer tenant.Sealer) tenant.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "landlord.db"), sqlite.Options{Sealer: sealer})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
