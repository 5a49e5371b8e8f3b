package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/store/storetest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func open(t *testing.T) tenant.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, open)
}
