package postgres

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/jaxxstorm/landlord/internal/store/storetest"
)

// A migration is logged in the one format both stores use, not with a
// duration in nanoseconds.
func TestMigrationLogLine(t *testing.T) {
	var buf bytes.Buffer
	mustOpen(t, Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	storetest.CheckMigrationLog(t, buf.Bytes(), "postgres")
}
