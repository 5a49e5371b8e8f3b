package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/jaxxstorm/landlord/internal/store"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives migration progress; nil discards it.
	Logger *slog.Logger
	// Readers is the size of the reader pool; 0 means one per CPU, at least 4.
	Readers int
	// BusyTimeout is how long a connection waits for a lock; 0 means 10s.
	BusyTimeout time.Duration
	// Sealer, if set, seals the secrets of every compute_config written
	// and opens those read (see tenant.Sealer).
	Sealer tenant.Sealer
}

// Store is the SQLite tenant.Store.
type Store struct {
	write  *sql.DB // one connection: SQLite has one writer at a time
	read   *sql.DB
	now    func() time.Time
	sealer tenant.Sealer

	// Prepared statements, by database and query: parsing SQL costs more
	// than running these queries.
	mu    sync.Mutex
	stmts map[stmtKey]*sql.Stmt

	// watch announces to Watch, changes to Changes (watch.go).
	watch, changes watchers

	// The writer goroutine commits what withTx queues on writes.
	writes     chan *pendingWrite
	quit       chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
	groups     atomic.Int64 // transactions committed by the writer, for tests
}

type stmtKey struct {
	db    *sql.DB
	query string
}

// Open opens (creating if needed) the SQLite database at path and migrates it
// to the current schema.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, runtime.NumCPU())
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 10 * time.Second
	}
	if err := createPrivate(path, opts.Logger); err != nil {
		return nil, err
	}
	write, err := sql.Open("sqlite", dsn(path, opts.BusyTimeout, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	s := &Store{write: write, now: opts.Now, sealer: opts.Sealer, stmts: map[stmtKey]*sql.Stmt{},
		writes: make(chan *pendingWrite), quit: make(chan struct{}), writerDone: make(chan struct{})}
	if err := migrate(ctx, write, migrations, opts.Logger); err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	go s.writer()
	for _, q := range writeQueries {
		if _, err := s.stmt(ctx, write, q); err != nil {
			s.Close()
			return nil, err
		}
	}
	read, err := sql.Open("sqlite", dsn(path, opts.BusyTimeout, true))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	read.SetMaxOpenConns(opts.Readers)
	read.SetMaxIdleConns(opts.Readers)
	s.read = read
	return s, nil
}

// createPrivate creates the database file, when there is none, readable
// and writable by its owner alone (0600): it holds the tenants' configs,
// secrets included. SQLite gives its -wal and -shm files the database
// file's mode. An existing file that others may read is left as it is,
// with a warning.
func createPrivate(path string, log *slog.Logger) error {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the database file may be read by others than its owner, and it holds tenants' secrets; chmod 600 it",
			slog.String("path", path), slog.String("mode", fi.Mode().Perm().String()))
	}
	return nil
}

// dsn builds a connection string: WAL, busy timeout, foreign keys, and
// either an immediate-locking writer (a transaction takes the write lock at
// BEGIN, so two writers queue instead of failing to upgrade) or a read-only
// reader.
func dsn(path string, busy time.Duration, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(ON)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// migrate brings the schema up to date; each migration runs in a
// transaction, so one that fails leaves the database as it was.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, log *slog.Logger) error {
	sub, err := fs.Sub(fsys, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub, goose.WithTableName("landlord_schema_migrations"))
	if err != nil {
		return err
	}
	results, err := p.Up(ctx)
	store.LogMigrations(ctx, log, "sqlite", results)
	return err
}

// Close closes the reader pool and the writer.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.quit) })
	<-s.writerDone
	s.mu.Lock()
	var errs []error
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	s.mu.Unlock()
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	return errors.Join(append(errs, s.write.Close())...)
}

// stmt returns the prepared statement for query on db, preparing it once.
func (s *Store) stmt(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	key := stmtKey{db, query}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[key]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: prepare: %w", err)
	}
	s.stmts[key] = st
	return st, nil
}

// query runs a prepared read query.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, s.read, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow runs a prepared read query for one row.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) (*sql.Row, error) {
	st, err := s.stmt(ctx, s.read, q)
	if err != nil {
		return nil, err
	}
	return st.QueryRowContext(ctx, args...), nil
}

// writeQueries are every statement a write transaction runs. They are
// prepared when the store opens: the writer has one connection, and inside a
// transaction it is taken, so nothing could be prepared on it then.
var writeQueries = []string{insertTenant, updateTenant, updateObserved, selectTenantByID, insertEvent, tenantExists,
	selectLease, upsertLease, renewLease, releaseLease,
	selectIdempotent, reserveIdempotent, completeIdempotent, holdIdempotent, releaseIdempotent, expireIdempotent,
	selectKey, insertKey, selectConfigs, rewriteConfig, selectFollowed, savepoint, rollbackToSavepoint, releaseSavepoint}

// txStmt returns the writer's prepared statement for q, bound to tx.
func (s *Store) txStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	s.mu.Lock()
	st, ok := s.stmts[stmtKey{s.write, q}]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("sqlite: statement not prepared at open: %s", q)
	}
	return tx.StmtContext(ctx, st), nil
}

// isUniqueViolation reports whether err is a UNIQUE constraint failure.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// isPrimaryKeyViolation reports whether err is a PRIMARY KEY failure.
func isPrimaryKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// withTx runs fn in a write transaction and returns once that transaction
// has committed or fn's changes were rolled back.
//
// Writes are committed in groups: one goroutine owns the writer connection
// and runs every write queued while the previous group committed in one
// transaction, each write in a savepoint of its own, so that a write whose fn
// fails is rolled back alone. One commit (one WAL append) then serves many
// writes: under concurrent load this is what makes SQLite fast, and a lone
// write pays nothing extra.
//
// fn must do its work with the context it is given, never a cancellable one
// of its own: cancelling a statement interrupts the shared connection, which
// would abort the other writes of the group. ctx is honoured until fn starts.
func (s *Store) withTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	w := &pendingWrite{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return errClosed
	}
	// Once queued, the write is waited for: returning early would leave the
	// caller unsure whether it committed.
	err := <-w.done
	if p, ok := err.(writePanic); ok {
		panic(p.value) // in the caller's goroutine, where it can be recovered
	}
	return unavailable(err)
}

// writePanic carries a panic of a write's fn from the writer to its caller.
type writePanic struct{ value any }

func (p writePanic) Error() string { return fmt.Sprintf("sqlite: a write panicked: %v", p.value) }

// run calls w's fn; a panic is rolled back with the write and raised again
// by withTx in the caller, so that the writer goes on serving the others.
func (w *pendingWrite) run(tx *sql.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = writePanic{v}
		}
	}()
	return w.fn(context.WithoutCancel(w.ctx), tx)
}

// errClosed is returned for writes asked of a closed store.
var errClosed = errors.New("sqlite: the store is closed")

// maxGroup bounds the writes committed together, so that one commit never
// holds the lock for long.
const maxGroup = 64

// pendingWrite is one withTx call waiting for the writer.
type pendingWrite struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	done chan error
}

// writer commits queued writes in groups until the store closes.
func (s *Store) writer() {
	defer close(s.writerDone)
	group := make([]*pendingWrite, 0, maxGroup)
	for {
		select {
		case w := <-s.writes:
			group = append(group[:0], w)
		case <-s.quit:
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case w := <-s.writes:
				group = append(group, w)
			default:
				break more
			}
		}
		s.commit(group)
	}
}

// commit runs a group of writes in one transaction and tells each how it
// went.
func (s *Store) commit(group []*pendingWrite) {
	errs := make([]error, len(group))
	ctx := context.Background()
	err := func() error {
		tx, err := s.write.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: begin: %w", err)
		}
		defer func() { _ = tx.Rollback() }() // a no-op after Commit
		savepoints := len(group) > 1
		for i, w := range group {
			if errs[i] = w.ctx.Err(); errs[i] != nil {
				continue
			}
			if savepoints {
				if err := s.execWrite(ctx, tx, savepoint); err != nil {
					return err
				}
			}
			errs[i] = w.run(tx)
			switch {
			case !savepoints && errs[i] != nil:
				return nil // rolled back by the deferred Rollback
			case !savepoints:
			case errs[i] != nil:
				if err := s.execWrite(ctx, tx, rollbackToSavepoint); err != nil {
					return err
				}
				fallthrough
			default:
				if err := s.execWrite(ctx, tx, releaseSavepoint); err != nil {
					return err
				}
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: commit: %w", err)
		}
		s.groups.Add(1)
		return nil
	}()
	for i, w := range group {
		if err != nil && errs[i] == nil {
			errs[i] = err // the group's transaction failed: nothing of it is stored
		}
		w.done <- errs[i]
	}
}

// Savepoint statements of a group's writes.
const (
	savepoint           = `SAVEPOINT write`
	rollbackToSavepoint = `ROLLBACK TO write`
	releaseSavepoint    = `RELEASE write`
)

func (s *Store) execWrite(ctx context.Context, tx *sql.Tx, q string) error {
	st, err := s.txStmt(ctx, tx, q)
	if err != nil {
		return err
	}
	if _, err := st.ExecContext(ctx); err != nil {
		return fmt.Errorf("sqlite: %s: %w", q, err)
	}
	return nil
}

var _ tenant.Store = (*Store)(nil)
