package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/jaxxstorm/landlord/internal/api"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/ui"
)

// newConsole makes the web console, live when the store announces changes.
func newConsole(ctx context.Context, db store, apiServer *api.Server, log *slog.Logger) (*ui.Console, error) {
	key, err := db.Key(ctx, consoleSessionKey)
	if err != nil {
		return nil, fmt.Errorf("database: read the console's key: %w", err)
	}
	opts := ui.Options{API: apiServer.Handler(), SessionKey: key, Sessions: db, Logger: log}
	if feed, ok := db.(tenant.ChangeFeed); ok {
		opts.Changes = feed.Changes
	}
	return ui.New(opts)
}

// withConsole serves the console under /ui/, beside the API, and sends a
// browser that asks for / to it.
func withConsole(apiServer *api.Server, console *ui.Console) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, apiServer.Wrap(console))
	mux.Handle("GET /{$}", http.RedirectHandler(ui.Prefix, http.StatusFound))
	mux.Handle("/", apiServer.Handler())
	return mux
}
