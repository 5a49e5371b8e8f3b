package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jaxxstorm/landlord/internal/identity"
)

// The console's sessions are written inside the writer's transaction with
// statements the transaction prepares: a sign-in is rare, and writeQueries
// stay the tenants' own.
const (
	insertSession        = `INSERT INTO console_sessions (id, holder, created_at, expires_at) VALUES (?, ?, ?, ?)`
	deleteExpiredSession = `DELETE FROM console_sessions WHERE expires_at <= ?`
	selectSession        = `SELECT holder, created_at, expires_at FROM console_sessions WHERE id = ? AND expires_at > ?`
	deleteSession        = `DELETE FROM console_sessions WHERE id = ?`
	deleteHolderSessions = `DELETE FROM console_sessions WHERE holder = ?`
)

// CreateSession implements identity.SessionStore. It forgets the sessions
// that expired, in the same transaction.
func (s *Store) CreateSession(ctx context.Context, sess identity.Session) error {
	if err := sess.Check(); err != nil {
		return err
	}
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, deleteExpiredSession, micros(s.now())); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertSession, sess.ID, sess.Holder, micros(sess.CreatedAt), micros(sess.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: create session: %w", err)
	}
	return nil
}

// Session implements identity.SessionStore.
func (s *Store) Session(ctx context.Context, id string) (identity.Session, error) {
	row, err := s.queryRow(ctx, selectSession, id, micros(s.now()))
	if err != nil {
		return identity.Session{}, unavailable(err)
	}
	out := identity.Session{ID: id}
	var created, expires int64
	switch err := row.Scan(&out.Holder, &created, &expires); {
	case errors.Is(err, sql.ErrNoRows):
		return identity.Session{}, identity.ErrNoSession
	case err != nil:
		return identity.Session{}, fmt.Errorf("sqlite: read session: %w", unavailable(err))
	}
	out.CreatedAt, out.ExpiresAt = fromMicros(created), fromMicros(expires)
	return out, nil
}

// EndSession implements identity.SessionStore.
func (s *Store) EndSession(ctx context.Context, id string) error {
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, deleteSession, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: end session: %w", err)
	}
	return nil
}

// EndSessionsOf implements identity.SessionStore.
func (s *Store) EndSessionsOf(ctx context.Context, holder string) (int, error) {
	var n int64
	err := s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, deleteHolderSessions, holder)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: end the sessions of %s: %w", holder, err)
	}
	return int(n), nil
}

var _ identity.SessionStore = (*Store)(nil)
