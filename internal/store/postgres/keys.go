package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	selectKey = `SELECT key FROM install_keys WHERE name = $1`
	// insertKey waits on the primary key for a concurrent insert of the name
	// to commit and then does nothing; the next statement, with a snapshot of
	// its own, reads the row that won.
	insertKey = `INSERT INTO install_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`
)

// Key implements tenant.KeyStore: the key called name, created on first use.
func (s *Store) Key(ctx context.Context, name string) ([]byte, error) {
	var key []byte
	err := s.pool.QueryRow(ctx, selectKey, name).Scan(&key)
	switch {
	case err == nil:
		return key, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("postgres: read key %s: %w", name, unavailable(err))
	}
	fresh := make([]byte, tenant.KeySize)
	rand.Read(fresh) // never fails (crypto/rand)
	if _, err := s.pool.Exec(ctx, insertKey, name, fresh); err != nil {
		return nil, fmt.Errorf("postgres: create key %s: %w", name, unavailable(err))
	}
	if err := s.pool.QueryRow(ctx, selectKey, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("postgres: read key %s: %w", name, unavailable(err))
	}
	return key, nil
}

var _ tenant.KeyStore = (*Store)(nil)
