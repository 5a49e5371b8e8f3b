package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// DefaultMaxConns is the pool size when neither Options.MaxConns nor the
// URL's pool_max_conns sets one.
const DefaultMaxConns = 16

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Now is the clock for the times the store records on tenants and
	// events; nil means time.Now. Lease expiry is judged by the database's
	// clock instead, so that replicas on different hosts agree on it.
	Now func() time.Time
	// Logger receives migration progress and retried transactions; nil
	// discards them.
	Logger *slog.Logger
	// MaxConns caps the connection pool. 0 takes pool_max_conns from the
	// URL, or else DefaultMaxConns.
	MaxConns int32
	// Sealer, if set, seals the secrets of every compute_config written
	// and opens those read (see tenant.Sealer).
	Sealer tenant.Sealer
	// Tracer, if set, traces every connection's statements and batches
	// (pgx's QueryTracer, and whichever of BatchTracer, PrepareTracer and
	// CopyFromTracer it implements); nil traces nothing.
	Tracer pgx.QueryTracer
}

// Store is tenant.Store on PostgreSQL. It is safe for concurrent use, also
// by several processes sharing the database.
type Store struct {
	pool   *pgxpool.Pool
	now    func() time.Time
	log    *slog.Logger
	sealer tenant.Sealer

	// closing ends every watch when Close is called.
	closing   context.Context
	stopWatch context.CancelFunc
	mu        sync.Mutex // guards closed and watchers.Add
	closed    bool
	watchers  sync.WaitGroup
	dropped   atomic.Int64 // announcements dropped on full channels

	// observations hands UpdateObserved's calls to the committers (see
	// group.go), which end when closing does.
	observations chan *pendingObservation
	committers   sync.WaitGroup
}

// Open connects to the database at url (postgres://… or a keyword/value
// string, as pgx reads it), migrates it to the current schema and returns
// the store. Opening the same database from several processes at once is
// safe: they migrate one after the other.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", err)
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	s := &Store{now: opts.Now, log: opts.Logger, sealer: opts.Sealer}
	s.closing, s.stopWatch = context.WithCancel(context.Background())
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := migrate(ctx, s.pool, migrations, s.log); err != nil {
		s.pool.Close()
		s.stopWatch()
		return nil, err
	}
	s.observations = make(chan *pendingObservation)
	for range groupCommitters {
		s.committers.Go(s.commitObservations)
	}
	return s, nil
}

// Close ends every watch (closing their channels), lets the groups of
// observations in flight commit, and closes the store's connections,
// waiting for the ones in use to be returned.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stopWatch()
	s.watchers.Wait()
	s.committers.Wait()
	s.pool.Close()
	return nil
}

// PostgreSQL error codes the store handles.
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// liveNameIndex is the unique index that makes ErrNameTaken.
const liveNameIndex = "tenants_live_name_key"

// txAttempts bounds how often a transaction that lost a serialization
// conflict or a deadlock is run again.
const txAttempts = 5

// inTx runs fn in a READ COMMITTED transaction and commits it, retrying as
// retry does.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.retry(ctx, func() error {
		return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
	})
}

// retry runs a transaction, and runs it again, a few times, if it lost a
// serialization conflict or a deadlock. With row locks taken by SELECT …
// FOR UPDATE, conflicts wait rather than fail; should the server still
// report one, callers should not see a spurious error.
func (s *Store) retry(ctx context.Context, tx func() error) error {
	for attempt := 1; ; attempt++ {
		err := tx()
		if err == nil || attempt == txAttempts || !retryable(err) {
			return unavailable(err)
		}
		s.log.DebugContext(ctx, "postgres: retrying transaction", "attempt", attempt, "err", err)
		wait := time.Duration(attempt) * time.Duration(1+rand.IntN(5)) * time.Millisecond
		select {
		case <-ctx.Done():
			return unavailable(err)
		case <-time.After(wait):
		}
	}
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == codeSerializationFailure || pgErr.Code == codeDeadlockDetected)
}

// pgCode returns the SQLSTATE of err and the constraint it names, if err
// came from the server.
func pgCode(err error) (code, constraint string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, pgErr.ConstraintName
	}
	return "", ""
}

// notFound is the error for a tenant id or name no row has.
func notFound(idOrName string) error {
	return fmt.Errorf("postgres: tenant %q: %w", idOrName, tenant.ErrNotFound)
}

var _ tenant.Store = (*Store)(nil)
