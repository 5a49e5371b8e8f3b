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

// watchers fans announcements out to this process's watchers. SQLite has no
// notifications between processes; instead each watcher polls the writer
// connection's data_version, which changes only when another connection —
// another process, since this one writes through that connection alone —
// commits, and then announces "" (look for work).
type watchers struct {
	mu sync.Mutex
	// subs maps each watcher's channel to whether it has missed an
	// announcement (its buffer was full) that it has not yet been told of.
	subs map[chan string]bool
}

// Watch announces desired-state changes made through this Store; see
// tenant.Watcher.
func (s *Store) Watch(ctx context.Context) (<-chan string, error) {
	// The first reading is taken now, so that a write by another process
	// right after Watch returns is seen as a change.
	last, err := s.dataVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: watch: %w", err)
	}
	ch := make(chan string, watchBuffer)
	s.watch.mu.Lock()
	if s.watch.subs == nil {
		s.watch.subs = map[chan string]bool{}
	}
	s.watch.subs[ch] = false
	s.watch.mu.Unlock()
	go func() {
		s.pollDataVersion(ctx, ch, last)
		s.watch.mu.Lock()
		delete(s.watch.subs, ch)
		s.watch.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

// pollDataVersion sends "" to ch whenever another process has committed, or
// a missed announcement is pending and there is room, until ctx ends.
func (s *Store) pollDataVersion(ctx context.Context, ch chan string, last int64) {
	ticker := time.NewTicker(dataVersionPoll)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		s.tellMissed(ch)
		v, err := s.dataVersion(ctx)
		if err != nil {
			continue // closing, or busy: try at the next tick
		}
		if v != last {
			s.watch.mu.Lock()
			s.watch.subs[ch] = !send(ch, false, "")
			s.watch.mu.Unlock()
		}
		last = v
	}
}

// announce tells every watcher that a tenant's desired state changed; it
// never blocks a write. A watcher whose buffer is full misses it, and is
// told so ("") as soon as there is room again.
func (s *Store) announce(id string) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	for ch, missed := range s.watch.subs {
		s.watch.subs[ch] = !send(ch, missed, id)
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

// tellMissed delivers a pending "" to the watcher, if there is room.
func (s *Store) tellMissed(ch chan string) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	if missed, ok := s.watch.subs[ch]; ok && missed {
		select {
		case ch <- "":
			s.watch.subs[ch] = false
		default:
		}
	}
}

var _ tenant.Watcher = (*Store)(nil)

// dataVersion reads the writer connection's data_version.
func (s *Store) dataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.write.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, err
}
