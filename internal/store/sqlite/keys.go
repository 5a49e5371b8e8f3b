package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	selectKey = `SELECT key FROM install_keys WHERE name = ?`
	insertKey = `INSERT INTO install_keys (name, key, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`
)

// Key implements tenant.KeyStore: the key called name, created on first use.
func (s *Store) Key(ctx context.Context, name string) ([]byte, error) {
	row, err := s.queryRow(ctx, selectKey, name)
	if err != nil {
		return nil, err
	}
	var key []byte
	switch err := row.Scan(&key); {
	case err == nil:
		return key, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("sqlite: read key %s: %w", name, err)
	}
	// Another process may insert first: the insert then does nothing and
	// the read in the same transaction returns that process's key.
	fresh := make([]byte, tenant.KeySize)
	rand.Read(fresh) // never fails (crypto/rand)
	err = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		insert, err := s.txStmt(ctx, tx, insertKey)
		if err != nil {
			return err
		}
		if _, err := insert.ExecContext(ctx, name, fresh, micros(tenant.Timestamp(s.now()))); err != nil {
			return fmt.Errorf("sqlite: create key %s: %w", name, err)
		}
		read, err := s.txStmt(ctx, tx, selectKey)
		if err != nil {
			return err
		}
		return read.QueryRowContext(ctx, name).Scan(&key)
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}

var _ tenant.KeyStore = (*Store)(nil)
