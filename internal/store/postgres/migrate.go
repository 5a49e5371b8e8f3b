package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/jaxxstorm/landlord/internal/store"
)

//go:embed migrations/*.sql
var embedded embed.FS

// migrations are the schema's versioned migrations, NNNNN_name.sql in goose's
// format. A migration runs in a transaction (none may say NO TRANSACTION), so
// one that fails leaves the database as it was before it.
var migrations = func() fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err)
	}
	return sub
}()

// migrationsTable records which migrations have run. It is named for
// landlord so that it cannot meet another tool's goose table in a shared
// database.
const migrationsTable = "landlord_schema_migrations"

// migrationsLockID is the advisory lock migrations hold, derived from the
// table name so that it is landlord's own.
var migrationsLockID = func() int64 {
	h := fnv.New64a()
	h.Write([]byte(migrationsTable))
	return int64(h.Sum64())
}()

// migrate applies the migrations of fsys that the database lacks, logging
// each one applied. The whole run holds a session advisory lock taken on a
// connection of its own: a second process opening the database waits for
// the first to finish, then finds nothing left to do. Closing that
// connection releases the lock, whatever happened.
//
// (goose's own lock.NewPostgresSessionLocker is not enough: goose checks
// for pending migrations, creating its version table if need be, before it
// takes that lock, so processes starting together race to create the table
// and the losers retry a second later.)
func migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, log *slog.Logger) error {
	lockConn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("postgres: migrate: connect: %w", err)
	}
	defer func() {
		// Closing the connection releases the lock too, but only once the
		// server has noticed, a moment later: unlock first, so that the lock
		// is gone when migrate returns.
		bg := context.WithoutCancel(ctx)
		_, _ = lockConn.Exec(bg, "SELECT pg_advisory_unlock($1)", migrationsLockID)
		lockConn.Close(bg)
	}()
	if _, err := lockConn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationsLockID); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}

	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(migrationsTable),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	results, err := p.Up(ctx)
	store.LogMigrations(ctx, log, "postgres", results)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	return nil
}
