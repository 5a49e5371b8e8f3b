package sqlite

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
)

// A migration is logged in the one format both stores use.
func TestMigrationLogLine(t *testing.T) {
	var buf bytes.Buffer
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckMigrationLog(t, buf.Bytes(), "sqlite")
}
