package postgres

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// mustSequenceOutbox runs SequenceOutbox once and wants it to position n
// events.
func mustSequenceOutbox(t *testing.T, s *Store, n int) {
	t.Helper()
	got, err := s.SequenceOutbox(ctx, 100)
	if err != nil || got != n {
		t.Fatalf("SequenceOutbox = %d, %v; want %d", got, err, n)
	}
}

// An event that commits after a later one (by seq) is positioned after
// it: a reader that has read the later one still finds it.
func TestOutboxPositionsInCommitOrder(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	a := mustCreate(t, s, "a")
	mustSequenceOutbox(t, s, 1)
	slow, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Rollback(ctx)
	if _, err := slow.Exec(ctx, `INSERT INTO events (tenant_id, time, type, generation, actor) VALUES ($1, now(), 'updated', 1, 'test')`, a.ID); err != nil {
		t.Fatal(err)
	}
	b := mustCreate(t, s, "b")
	mustSequenceOutbox(t, s, 1) // b's, not a's, which has not committed
	first, err := s.ReadOutbox(ctx, 1, 10, nil)
	if err != nil || len(first) != 1 || first[0].Key != b.ID {
		t.Fatalf("ReadOutbox after a's created = %+v, %v; want b's created", first, err)
	}
	if err := slow.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	mustSequenceOutbox(t, s, 1)
	late, err := s.ReadOutbox(ctx, first[0].Position, 10, nil)
	if err != nil || len(late) != 1 || late[0].Key != a.ID || late[0].Type != events.TenantChanged {
		t.Fatalf("ReadOutbox after b's created = %+v, %v; want a's changed", late, err)
	}
}

// A run of SequenceOutbox that waited for another reads the positions the
// other committed: it positions only what is left, after them.
func TestSequenceOutboxWaitsForAnother(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	for _, name := range []string{"a", "b", "c"} {
		mustCreate(t, s, name)
	}
	other, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(ctx)
	if _, err := other.Exec(ctx, lockSequence, outboxSequenceLock); err != nil {
		t.Fatal(err)
	}
	if tag, err := other.Exec(ctx, sequenceOutbox, 1); err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the other run positioned %v, %v; want 1", tag, err)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := s.SequenceOutbox(ctx, 100)
		done <- result{n, err}
	}()
	poll.Until(t, "SequenceOutbox waits for the other run's lock", 10*time.Second, func() (bool, string) {
		var waiting int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting)
		return err == nil && waiting == 1, fmt.Sprintf("%d advisory locks waited for (%v)", waiting, err)
	})
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.n != 2 {
		t.Errorf("SequenceOutbox after the other run = %d, %v; want the 2 events left", r.n, r.err)
	}
	rows, err := s.pool.Query(ctx, `SELECT position FROM outbox ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	var positions []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		positions = append(positions, p)
	}
	if err := rows.Err(); err != nil || !slices.Equal(positions, []int64{1, 2, 3}) {
		t.Errorf("positions in seq order = %v, %v; want 1, 2, 3", positions, err)
	}
}
