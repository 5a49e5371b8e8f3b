package postgres

import (
	"context"
	"testing"

	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/store/storetest"
)

// Two stores on one database are two replicas sharing it.
func TestSessionConformance(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T) (identity.SessionStore, identity.SessionStore) {
		url := mustURL(t)
		a, err := Open(context.Background(), url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(context.Background(), url, Options{})
		if err != nil {
			a.Close()
			t.Fatal(err)
		}
		return a, b
	})
}
