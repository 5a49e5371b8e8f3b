package server

import (
	"context"
	"fmt"
	"github.com/jaxxstorm/landlord/internal/events"
	"log/slog"

	"github.com/jaxxstorm/landlord/internal/config"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/identity"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// configHashKey names the install key (tenant.KeyStore) every compute
// provider keys its configuration hashes with, so that they reveal nothing
// of the secrets they cover and agree across restarts and replicas. It was
// "docker-config-hash" before the stores' migrations copied it here.
const configHashKey = "provider-config-hash"

// consoleSessionKey names the install key (tenant.KeyStore) that seals the
// web console's session cookies, the same on every replica.
const consoleSessionKey = "console-session"

// store is what the server needs of a database.
type store interface {
	tenant.Store
	fleet.Store
	tenant.LeaseStore
	tenant.StatusCounter
	tenant.KeyStore
	identity.SessionStore
	events.Store
}

// openStore opens the database and describes it for the start-up line;
// sealer, if set, seals and opens the secrets of compute configs (see
// tenant.Sealer).
func openStore(ctx context.Context, db config.Database, sealer tenant.Sealer, log *slog.Logger) (store, string, error) {
	switch db.Driver {
	case "postgres":
		s, err := postgres.Open(ctx, db.URL, postgres.Options{Logger: log, Sealer: sealer})
		if err != nil {
			return nil, "", fmt.Errorf("database (database.url, --database, LANDLORD_DATABASE): %w", err)
		}
		return s, "postgres", nil
	default:
		s, err := sqlite.Open(ctx, db.Path, sqlite.Options{Logger: log, Sealer: sealer})
		if err != nil {
			return nil, "", fmt.Errorf("database (database.path, --database, LANDLORD_DATABASE): %w", err)
		}
		return s, "sqlite:" + db.Path, nil
	}
}
