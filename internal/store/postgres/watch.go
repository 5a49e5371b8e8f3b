package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	// watchChannel is the LISTEN/NOTIFY channel on which Create,
	// UpdateDesired, RequestDeletion and Forget announce the id of the
	// tenant they changed.
	watchChannel = "landlord_tenants"
	// changesChannel is the channel on which the writes that record an
	// event but do not announce on watchChannel (UpdateObserved with a
	// status transition, AppendEvent) announce the tenants they wrote: one
	// notification per transaction, its payload their ids joined by commas.
	changesChannel = "landlord_changes"
	// watchBuffer is how many announcements a watch holds for a receiver
	// that is busy; more are dropped (and counted) rather than waited for.
	watchBuffer = 4096
	// A watch whose connection breaks connects again after watchRetryMin,
	// doubling the wait after each failure up to watchRetryMax.
	watchRetryMin = 100 * time.Millisecond
	watchRetryMax = 10 * time.Second
	// closeTimeout bounds saying goodbye to the server on a watch's
	// connection.
	closeTimeout = 5 * time.Second
)

// feed is what a watch listens to: its channels, and its name in errors
// and logs. Watch and Changes differ only in their feed.
type feed struct {
	name     string
	channels []string
}

var (
	// desiredFeed is Watch's: desired-state changes only, so that the
	// controller is not woken by its own observations.
	desiredFeed = feed{name: "watch", channels: []string{watchChannel}}
	// changeFeed is Changes': desired-state changes and the writes that
	// record an event.
	changeFeed = feed{name: "changes", channels: []string{watchChannel, changesChannel}}
)

// Watch implements tenant.Watcher with PostgreSQL's LISTEN/NOTIFY. Each
// watch has a connection of its own, outside the pool, listening on
// landlord_tenants; writers send pg_notify in the transaction that changes
// desired state, so an announcement is delivered once that transaction
// commits and never for one that rolls back.
//
// The connection is listening when Watch returns: any change committed
// after that is announced, unless the receiver lets more than 4096
// announcements pile up (the excess is dropped; see DroppedAnnouncements)
// or the connection breaks, in which case Watch connects again, with
// backoff, until ctx ends, and changes committed in between are not
// announced. Either loss is followed by an empty id as soon as the channel
// has room for it, so that the receiver sweeps. The channel is closed when
// ctx ends or the store is closed.
func (s *Store) Watch(ctx context.Context) (<-chan string, error) {
	return s.subscribe(ctx, desiredFeed)
}

// Changes implements tenant.ChangeFeed as Watch implements tenant.Watcher,
// on a connection of its own that listens on landlord_tenants and
// landlord_changes, whose payloads of several ids it splits. Writes that
// record an event send one pg_notify on landlord_changes per transaction:
// a group of observations committed together (group.go) is one
// notification of all their tenants. Writes that record no event send
// none.
func (s *Store) Changes(ctx context.Context) (<-chan string, error) {
	return s.subscribe(ctx, changeFeed)
}

// subscribe starts a watch of f: a connection listening on its channels,
// and the goroutines that forward what it hears to the channel returned.
func (s *Store) subscribe(ctx context.Context, f feed) (<-chan string, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("postgres: %s: the store is closed", f.name)
	}
	s.watchers.Add(1)
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	conn, err := s.listen(ctx, f)
	if err != nil {
		stop()
		cancel()
		s.watchers.Done()
		return nil, fmt.Errorf("postgres: %s: %w", f.name, err)
	}
	ch := make(chan string, watchBuffer)
	// lost says that announcements were lost; announceLoss turns it into an
	// empty id on ch as soon as there is room, so that watch, which reads
	// the connection, never waits for the receiver.
	lost := make(chan struct{}, 1)
	go func() {
		defer s.watchers.Done()
		defer stop()
		var wg sync.WaitGroup
		wg.Go(func() { announceLoss(ctx, ch, lost) })
		s.watch(ctx, f, conn, ch, lost)
		cancel()
		wg.Wait()
		close(ch)
	}()
	return ch, nil
}

// DroppedAnnouncements is how many announcements watches and change feeds
// have dropped because their receiver had fallen watchBuffer behind.
func (s *Store) DroppedAnnouncements() int64 { return s.dropped.Load() }

// watch forwards the ids of the notifications conn receives to ch until
// ctx ends, connecting again when the connection breaks. It never blocks
// on ch: when ch is full, or the connection was lost, or a notification
// carries no id, it signals lost instead.
func (s *Store) watch(ctx context.Context, f feed, conn *pgx.Conn, ch chan<- string, lost chan<- struct{}) {
	defer func() { closeConn(conn) }()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			for id := range strings.SplitSeq(n.Payload, ",") {
				s.forward(ctx, f, ch, lost, id)
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "postgres: "+f.name+": connection lost; reconnecting", "err", err)
		closeConn(conn)
		if conn = s.relisten(ctx, f); conn == nil {
			return
		}
		// Announcements made while the connection was down are lost: say
		// so, so that the receiver sweeps.
		signal(lost)
	}
}

// forward sends id on ch without waiting. An empty id (a writer had more
// to announce than a notification holds) or a full ch signals lost.
func (s *Store) forward(ctx context.Context, f feed, ch chan<- string, lost chan<- struct{}, id string) {
	if id == "" {
		signal(lost)
		return
	}
	select {
	case ch <- id:
	default:
		signal(lost)
		if s.dropped.Add(1)%1000 == 1 {
			s.log.WarnContext(ctx, "postgres: "+f.name+": receiver is behind; dropping announcements", "dropped", s.dropped.Load())
		}
	}
}

// signal sets c (of capacity 1), unless it is set already.
func signal(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// announceLoss sends an empty id on ch, waiting for room, each time lost is
// signalled, until ctx ends. Losses signalled while it waits are covered by
// the id it is waiting to send, and cost at most one more.
func announceLoss(ctx context.Context, ch chan<- string, lost <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-lost:
		}
		select {
		case <-ctx.Done():
			return
		case ch <- "":
		}
	}
}

// relisten connects and listens on f's channels again, waiting longer
// after each failure, until it succeeds (the connection) or ctx ends (nil).
func (s *Store) relisten(ctx context.Context, f feed) *pgx.Conn {
	wait := watchRetryMin
	for attempt := 1; ; attempt++ {
		// Wait before the first attempt too, so that a connection that
		// keeps breaking as soon as it is made does not spin.
		jittered := wait/2 + rand.N(wait/2+1)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jittered):
		}
		conn, err := s.listen(ctx, f)
		if err == nil {
			s.log.InfoContext(ctx, "postgres: "+f.name+": listening again", "attempt", attempt)
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.WarnContext(ctx, "postgres: "+f.name+": reconnect failed", "attempt", attempt, "err", err)
		wait = min(2*wait, watchRetryMax)
	}
}

// listen opens a connection of its own (with the pool's settings) and
// listens on f's channels.
func (s *Store) listen(ctx context.Context, f feed) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	for _, c := range f.channels {
		if _, err := conn.Exec(ctx, "LISTEN "+c); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("listen on %s: %w", c, err)
		}
	}
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	conn.Close(ctx)
}

var (
	_ tenant.Watcher    = (*Store)(nil)
	_ tenant.ChangeFeed = (*Store)(nil)
)
