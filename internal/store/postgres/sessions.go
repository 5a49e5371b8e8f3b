package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/identity"
)

const (
	insertSession        = `INSERT INTO console_sessions (id, holder, created_at, expires_at) VALUES ($1, $2, $3, $4)`
	deleteExpiredSession = `DELETE FROM console_sessions WHERE expires_at <= $1`
	selectSession        = `SELECT holder, created_at, expires_at FROM console_sessions WHERE id = $1 AND expires_at > $2`
	deleteSession        = `DELETE FROM console_sessions WHERE id = $1`
	deleteHolderSessions = `DELETE FROM console_sessions WHERE holder = $1`
)

// CreateSession implements identity.SessionStore. It forgets the sessions
// that expired first; a failure to forget them does not stop the sign-in.
func (s *Store) CreateSession(ctx context.Context, sess identity.Session) error {
	if err := sess.Check(); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, deleteExpiredSession, s.now().UTC()); err != nil {
		s.log.WarnContext(ctx, "postgres: forgetting expired console sessions failed", "error", err)
	}
	if _, err := s.pool.Exec(ctx, insertSession, sess.ID, sess.Holder, sess.CreatedAt.UTC(), sess.ExpiresAt.UTC()); err != nil {
		return fmt.Errorf("postgres: create session: %w", unavailable(err))
	}
	return nil
}

// Session implements identity.SessionStore.
func (s *Store) Session(ctx context.Context, id string) (identity.Session, error) {
	out := identity.Session{ID: id}
	err := s.pool.QueryRow(ctx, selectSession, id, s.now().UTC()).Scan(&out.Holder, &out.CreatedAt, &out.ExpiresAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return identity.Session{}, identity.ErrNoSession
	case err != nil:
		return identity.Session{}, fmt.Errorf("postgres: read session: %w", unavailable(err))
	}
	out.CreatedAt, out.ExpiresAt = out.CreatedAt.UTC(), out.ExpiresAt.UTC()
	return out, nil
}

// EndSession implements identity.SessionStore.
func (s *Store) EndSession(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, deleteSession, id); err != nil {
		return fmt.Errorf("postgres: end session: %w", unavailable(err))
	}
	return nil
}

// EndSessionsOf implements identity.SessionStore.
func (s *Store) EndSessionsOf(ctx context.Context, holder string) (int, error) {
	tag, err := s.pool.Exec(ctx, deleteHolderSessions, holder)
	if err != nil {
		return 0, fmt.Errorf("postgres: end the sessions of %s: %w", holder, unavailable(err))
	}
	return int(tag.RowsAffected()), nil
}

var _ identity.SessionStore = (*Store)(nil)
