package sqlite

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// watchBuffer is how many announcements a slow watcher may fall behind by
// before they are dropped (the controller's sweep catches dropped ones).
const watchBuffer = 4096

// dataVersionPoll is how often a watcher checks whether another process
// has written to the database.
const dataVersionPoll = 100 * time.Millisecond

// watchers fans announcements out to this process's subscribers of one
// kind: the Store has one for Watch (desired-state changes) and one for
// Changes (those and the writes that record an event). SQLite has no
// notifications between processes; instead each subscriber polls the
// writer connection's data_version, which changes only when another
// connection — another process, since this one writes through that
// connection alone — commits, and then announces "" (look again).
type watchers struct {
	mu sync.Mutex
	// subs maps each subscriber's channel to whether it has missed an
	// announcement (its buffer was full) that it has not yet been told of.
	subs map[chan string]bool
}

// Watch announces desired-state changes made through this Store; see
// tenant.Watcher.
func (s *Store) Watch(ctx context.Context) (<-chan string, error) {
	return s.subscribe(ctx, "watch", &s.watch)
}

// Changes announces desired-state changes made through this Store, and its
// writes that record an event (UpdateObserved with a status transition,
// AppendEvent), once they have committed; see tenant.ChangeFeed. Writes by
// other processes are announced as "", within dataVersionPoll.
func (s *Store) Changes(ctx context.Context) (<-chan string, error) {
	return s.subscribe(ctx, "changes", &s.changes)
}

// subscribe adds a subscriber to w, whose channel is closed when ctx ends
// or the store closes.
func (s *Store) subscribe(ctx context.Context, name string, w *watchers) (<-chan string, error) {
	// The first reading is taken now, so that a write by another process
	// right after subscribe returns is seen as a change.
	last, err := s.dataVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s: %w", name, err)
	}
	ch := make(chan string, watchBuffer)
	w.mu.Lock()
	if w.subs == nil {
		w.subs = map[chan string]bool{}
	}
	w.subs[ch] = false
	w.mu.Unlock()
	go func() {
		s.pollDataVersion(ctx, w, ch, last)
		w.mu.Lock()
		delete(w.subs, ch)
		w.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

// pollDataVersion sends "" to ch, a subscriber of w, whenever another
// process has committed, or a missed announcement is pending and there is
// room, until ctx ends or the store closes.
func (s *Store) pollDataVersion(ctx context.Context, w *watchers, ch chan string, last int64) {
	ticker := time.NewTicker(dataVersionPoll)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-ticker.C:
		}
		w.tellMissed(ch)
		v, err := s.dataVersion(ctx)
		if err != nil {
			continue // closing, or busy: try at the next tick
		}
		if v != last {
			w.mu.Lock()
			w.subs[ch] = !send(ch, false, "")
			w.mu.Unlock()
		}
		last = v
	}
}

// announceDesired tells watchers and change feeds that a tenant's desired
// state changed.
func (s *Store) announceDesired(id string) {
	s.watch.announce(id)
	s.changes.announce(id)
}

// announce tells every subscriber of w that a tenant changed; it never
// blocks a write. A subscriber whose buffer is full misses it, and is told
// so ("") as soon as there is room again.
func (w *watchers) announce(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch, missed := range w.subs {
		w.subs[ch] = !send(ch, missed, id)
	}
}

// send delivers id, first telling of missed announcements; false when the
// channel was full.
func send(ch chan string, missed bool, id string) bool {
	if missed {
		select {
		case ch <- "":
		default:
			return false
		}
	}
	select {
	case ch <- id:
		return true
	default:
		return false
	}
}

// tellMissed delivers a pending "" to the subscriber, if there is room.
func (w *watchers) tellMissed(ch chan string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if missed, ok := w.subs[ch]; ok && missed {
		select {
		case ch <- "":
			w.subs[ch] = false
		default:
		}
	}
}

var (
	_ tenant.Watcher    = (*Store)(nil)
	_ tenant.ChangeFeed = (*Store)(nil)
)

// dataVersion reads the writer connection's data_version.
func (s *Store) dataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.write.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, err
}
