package store

import (
	"context"
	"log/slog"
	"path"

	"github.com/pressly/goose/v3"
)

// LogMigrations logs each migration goose applied in the one line both
// stores use: "database migrated" with the database, the version, the
// migration's file name and its duration in milliseconds.
func LogMigrations(ctx context.Context, log *slog.Logger, database string, results []*goose.MigrationResult) {
	for _, r := range results {
		log.InfoContext(ctx, "database migrated", slog.String("database", database), slog.Int64("version", r.Source.Version),
			slog.String("migration", path.Base(r.Source.Path)), slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000))
	}
}
