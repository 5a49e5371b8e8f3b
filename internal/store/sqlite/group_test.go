package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Writes committed together stay independent: one that fails after writing
// leaves nothing behind, the others of its group are stored, and a write
// whose context ended before it ran does nothing.
func TestGroupedWritesAreIndependent(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "landlord.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insert := func(ctx context.Context, tx *sql.Tx, name string) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO install_keys (name, key, created_at) VALUES (?, x'00', 0)`, name)
		return err
	}
	errBroken := errors.New("broken after writing")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	const writers = 300
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprintf("k%03d", i)
			switch i % 3 {
			case 0: // succeeds
				errs[i] = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return insert(ctx, tx, name) })
			case 1: // writes, then fails
				errs[i] = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if err := insert(ctx, tx, name); err != nil {
						return err
					}
					return errBroken
				})
			case 2: // cancelled before it runs
				errs[i] = s.withTx(cancelled, func(ctx context.Context, tx *sql.Tx) error { return insert(ctx, tx, name) })
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch i % 3 {
		case 0:
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		case 1:
			if !errors.Is(err, errBroken) {
				t.Errorf("write %d = %v, want its own error", i, err)
			}
		case 2:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("write %d = %v, want context.Canceled", i, err)
			}
		}
	}
	rows, err := s.read.QueryContext(ctx, `SELECT name FROM install_keys`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stored[name] = true
	}
	for i := range writers {
		if want := i%3 == 0; stored[fmt.Sprintf("k%03d", i)] != want {
			t.Errorf("k%03d stored = %v, want %v", i, !want, want)
		}
	}
	if s.groups.Load() >= writers*2/3 {
		t.Errorf("%d commits for %d writes: writes were not grouped", s.groups.Load(), writers)
	}
	t.Logf("%d writes in %d commits", writers, s.groups.Load())
}

// Close waits for queued writes and refuses new ones.
func TestWriteAfterClose(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "landlord.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	err = s.withTx(context.Background(), func(context.Context, *sql.Tx) error { return nil })
	if !errors.Is(err, errClosed) {
		t.Errorf("write after Close = %v, want errClosed", err)
	}
}

// A write that panics panics in its caller, is rolled back, and leaves the
// writer serving the others.
func TestPanickingWrite(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "landlord.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the write's panic", v)
			}
		}()
		_ = s.withTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO install_keys (name, key, created_at) VALUES ('panicked', x'00', 0)`); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if _, err := s.Key(ctx, "after"); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM install_keys WHERE name = 'panicked'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the panicked write's row: %d, %v; want none", n, err)
	}
}
