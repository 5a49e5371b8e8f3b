package sqlite

import (
	"context"
	"sync"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// watchBuffer is how many announcements a slow watcher may fall behind by
// before they are dropped (the controller's sweep catches dropped ones).
const watchBuffer = 4096

// watchers fans announcements out to this process's watchers. SQLite has no
// notifications between processes: a second process sees changes at its
// controller's sweep.
type watchers struct {
	mu   sync.Mutex
	subs map[chan string]struct{}
}

// Watch announces desired-state changes made through this Store; see
// tenant.Watcher.
func (s *Store) Watch(ctx context.Context) (<-chan string, error) {
	ch := make(chan string, watchBuffer)
	s.watch.mu.Lock()
	if s.watch.subs == nil {
		s.watch.subs = map[chan string]struct{}{}
	}
	s.watch.subs[ch] = struct{}{}
	s.watch.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.watch.mu.Lock()
		delete(s.watch.subs, ch)
		s.watch.mu.Unlock()
		close(ch)
	}()
	return ch, nil
}

// announce tells every watcher that a tenant's desired state changed; it
// never blocks a write.
func (s *Store) announce(id string) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	for ch := range s.watch.subs {
		select {
		case ch <- id:
		default:
		}
	}
}

var _ tenant.Watcher = (*Store)(nil)
