package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

const (
	// watchChannel is the LISTEN/NOTIFY channel on which Create,
	// UpdateDesired and RequestDeletion announce the id of the tenant they
	// changed.
	watchChannel = "landlord_tenants"
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
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("postgres: watch: the store is closed")
	}
	s.watchers.Add(1)
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.closing, cancel)
	conn, err := s.listen(ctx)
	if err != nil {
		stop()
		cancel()
		s.watchers.Done()
		return nil, fmt.Errorf("postgres: watch: %w", err)
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
		s.watch(ctx, conn, ch, lost)
		cancel()
		wg.Wait()
		close(ch)
	}()
	return ch, nil
}

// DroppedAnnouncements is how many announcements watches have dropped
// because their receiver had fallen watchBuffer behind.
func (s *Store) DroppedAnnouncements() int64 { return s.dropped.Load() }

// watch forwards the notifications conn receives to ch until ctx ends,
// connecting again when the connection breaks. It never blocks on ch: when
// ch is full, or the connection was lost, it signals lost instead.
func (s *Store) watch(ctx context.Context, conn *pgx.Conn, ch chan<- string, lost chan<- struct{}) {
	defer func() { closeConn(conn) }()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err == nil {
			select {
			case ch <- n.Payload:
			default:
				signal(lost)
				if s.dropped.Add(1)%1000 == 1 {
					s.log.WarnContext(ctx, "postgres: watch: receiver is behind; dropping announcements", "dropped", s.dropped.Load())
				}
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "postgres: watch: connection lost; reconnecting", "err", err)
		closeConn(conn)
		if conn = s.relisten(ctx); conn == nil {
			return
		}
		// Announcements made while the connection was down are lost: say
		// so, so that the receiver sweeps.
		signal(lost)
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

// relisten connects and listens again, waiting longer after each failure,
// until it succeeds (the connection) or ctx ends (nil).
func (s *Store) relisten(ctx context.Context) *pgx.Conn {
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
		conn, err := s.listen(ctx)
		if err == nil {
			s.log.InfoContext(ctx, "postgres: watch: listening again", "attempt", attempt)
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.WarnContext(ctx, "postgres: watch: reconnect failed", "attempt", attempt, "err", err)
		wait = min(2*wait, watchRetryMax)
	}
}

// listen opens a connection of its own (with the pool's settings) and
// listens on watchChannel.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+watchChannel); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("listen: %w", err)
	}
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	conn.Close(ctx)
}

var _ tenant.Watcher = (*Store)(nil)
