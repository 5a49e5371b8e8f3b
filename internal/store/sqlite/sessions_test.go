package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/store/storetest"
)

// Two stores on one database file are two replicas sharing it.
func TestSessionConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) (identity.SessionStore, identity.SessionStore) {
		path := filepath.Join(t.TempDir(), "landlord.db")
		a, err := Open(context.Background(), path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(context.Background(), path, Options{})
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		return a, b
	})
}
