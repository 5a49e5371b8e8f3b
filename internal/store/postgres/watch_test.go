package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func mustWatch(t *testing.T, s *Store) <-chan string {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	ch, err := s.Watch(wctx)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	return ch
}

// nextAnnouncement is the next id on ch.
func nextAnnouncement(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case id, open := <-ch:
		if !open {
			t.Fatal("the watch channel was closed")
		}
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no announcement within 10s")
		return ""
	}
}

// Only writes that commit are announced: a create refused by the name index
// and updates that fail or change nothing announce nothing, so the next
// announcement is that of the next successful write.
func TestWatchAnnouncesOnlyCommittedChanges(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	ch := mustWatch(t, s)
	first := mustCreate(t, s, "taken")
	if got := nextAnnouncement(t, ch); got != first.ID {
		t.Fatalf("announced %s, want %s", got, first.ID)
	}

	_, err := s.Create(ctx, &tenant.Tenant{Name: "taken", Provider: "mock", ComputeConfig: []byte(`{}`)}, "test")
	if !errors.Is(err, tenant.ErrNameTaken) {
		t.Fatalf("second Create = %v, want ErrNameTaken", err)
	}
	if _, err := s.UpdateDesired(ctx, first.ID, tenant.DesiredChange{Version: 99, ComputeConfig: []byte(`{"image":"b"}`)}); !errors.Is(err, tenant.ErrConflict) {
		t.Fatalf("UpdateDesired at a wrong version = %v, want ErrConflict", err)
	}
	if _, err := s.UpdateDesired(ctx, first.ID, tenant.DesiredChange{Version: first.Version, ComputeConfig: first.ComputeConfig}); err != nil {
		t.Fatalf("UpdateDesired changing nothing: %v", err)
	}
	if _, err := s.UpdateObserved(ctx, first.ID, tenant.Observation{Generation: 1, Status: tenant.StatusProvisioning}); err != nil {
		t.Fatalf("UpdateObserved: %v", err)
	}
	deleting, err := s.RequestDeletion(ctx, first.ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := nextAnnouncement(t, ch); got != first.ID {
		t.Fatalf("announced %s, want the deletion of %s", got, first.ID)
	}
	if _, err := s.RequestDeletion(ctx, deleting.ID, 0, "test"); err != nil {
		t.Fatalf("RequestDeletion again: %v", err)
	}

	last := mustCreate(t, s, "last")
	if got := nextAnnouncement(t, ch); got != last.ID {
		t.Errorf("announced %s, want %s: a write that failed or changed nothing was announced", got, last.ID)
	}
	select {
	case id := <-ch:
		t.Errorf("unexpected announcement of %s", id)
	case <-time.After(100 * time.Millisecond):
	}
}

// listenerPIDs are the backends listening for announcements in the store's
// database, ready for notifications (idle).
func listenerPIDs(t *testing.T, s *Store) []int32 {
	t.Helper()
	rows, err := s.pool.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+watchChannel+`' AND state = 'idle'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var pids []int32
	for rows.Next() {
		var pid int32
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return pids
}

// A watch whose backend is terminated connects again and goes on
// announcing.
func TestWatchSurvivesTerminatedBackend(t *testing.T) {
	s, _ := mustOpen(t, Options{})
	ch := mustWatch(t, s)
	pids := listenerPIDs(t, s)
	if len(pids) != 1 {
		t.Fatalf("listening backends = %v, want one", pids)
	}
	old := pids[0]
	var ok bool
	if err := s.pool.QueryRow(ctx, "SELECT pg_terminate_backend($1)", old).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", old, ok, err)
	}
	poll.Until(t, fmt.Sprintf("a new listening backend after terminating %d", old), 10*time.Second, func() (bool, string) {
		pids = listenerPIDs(t, s)
		return len(pids) == 1 && pids[0] != old, fmt.Sprint(pids)
	})
	if got := nextAnnouncement(t, ch); got != "" {
		t.Errorf("after reconnecting, announced %q; want \"\" (announcements may have been lost)", got)
	}
	created := mustCreate(t, s, "after-reconnect")
	if got := nextAnnouncement(t, ch); got != created.ID {
		t.Errorf("announced %s, want %s", got, created.ID)
	}
}

// Close ends the watches and closes their channels instead of waiting for
// their contexts.
func TestCloseEndsWatches(t *testing.T) {
	url := mustURL(t)
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs on a watch")
	}
	select {
	case _, open := <-ch:
		if open {
			t.Error("an announcement after Close")
		}
	default:
		t.Error("Close left the watch channel open")
	}
	if _, err := s.Watch(ctx); err == nil {
		t.Error("Watch after Close succeeded")
	}
}
