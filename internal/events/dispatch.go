package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/jaxxstorm/landlord/internal/leader"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// LeaseName is the lease under which one replica at a time dispatches.
const LeaseName = "events-dispatcher"

// Defaults of Options.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultWorkers   = 16
	DefaultInitial   = 5 * time.Second
	DefaultMaxWait   = time.Hour
	DefaultHorizon   = 24 * time.Hour
	DefaultRetention = 7 * 24 * time.Hour
	DefaultPoll      = time.Second
	// ResponseExcerpt is how much of a receiver's answer the delivery log
	// keeps.
	ResponseExcerpt = 512
)

// Observer counts what the dispatcher does (the metrics implement it).
type Observer interface {
	// ObserveDelivery records an attempt: its outcome is "delivered",
	// "failed" (to be retried) or "given_up" (the retry horizon passed).
	ObserveDelivery(outcome string, latency time.Duration)
}

// Options configure a Dispatcher.
type Options struct {
	Store   Store
	Leases  tenant.LeaseStore
	Encoder *Encoder
	Keys    Keyring
	Guard   *Guard
	// Changes wakes the dispatcher when tenants change, beside Poll.
	Changes tenant.ChangeFeed
	// Identity names this replica in the lease; LeaseTTL is the lease's.
	Identity string
	LeaseTTL time.Duration
	// Timeout bounds each attempt; Workers the attempts in flight.
	Timeout time.Duration
	Workers int
	// Initial is the wait after a delivery's first failed attempt; each
	// further failure doubles it, up to MaxWait, with jitter; once the
	// waits sum past Horizon the delivery is given up and its
	// subscription disabled.
	Initial, MaxWait, Horizon time.Duration
	// Retention is how long events are kept in the outbox (and the feed).
	Retention time.Duration
	// Poll is how often the dispatcher looks for work without being woken.
	Poll      time.Duration
	UserAgent string
	Logger    *slog.Logger
	Observer  Observer
	Now       func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Initial <= 0 {
		o.Initial = DefaultInitial
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.Guard == nil {
		o.Guard = NewGuard(nil)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.UserAgent == "" {
		o.UserAgent = "landlord"
	}
	return o
}

// MaxAttempts is the number of attempts a delivery gets: the first, then
// one after each wait of the schedule until the waits sum past horizon.
func MaxAttempts(initial, maxWait, horizon time.Duration) int {
	n, sum, wait := 1, time.Duration(0), initial
	for sum < horizon {
		sum += wait
		n++
		wait = min(wait*2, maxWait)
	}
	return n
}

// Backoff is the wait after a delivery's nth failed attempt (from 1):
// initial doubled n-1 times, at most maxWait, less a random part of up to
// half of it, so that deliveries that failed together do not all come
// back at once.
func Backoff(n int, initial, maxWait time.Duration) time.Duration {
	wait := initial
	for i := 1; i < n && wait < maxWait; i++ {
		wait *= 2
	}
	wait = min(wait, maxWait)
	return wait - rand.N(wait/2+1)
}

// Dispatcher delivers the outbox's events to the subscriptions, from the
// replica that holds LeaseName; every write it makes is fenced by that
// lease. Each subscription's deliveries of one key (a tenant, a rollout,
// a plan) are made one at a time in the order of the events: the next
// waits until the one before is delivered or given up. Delivery is at
// least once: an attempt whose answer was not recorded (a crash, a lost
// lease, a timeout after the receiver acted) is made again, with the same
// webhook-id.
type Dispatcher struct {
	opts        Options
	store       Store
	log         *slog.Logger
	client      *http.Client
	maxAttempts int

	lease *leader.Lease

	mu       sync.Mutex
	busy     map[string]bool // subscription + "\x00" + key of the attempts in flight
	inflight sync.WaitGroup
	done     chan struct{} // an attempt finished

	lastPrune time.Time
	// subs are the subscriptions the last Step read, by id, enabled how
	// many of them are enabled and lastFull when it began; queue the due
	// deliveries startDue read ahead. They belong to Run's goroutine.
	subs     map[string]*Subscription
	enabled  int
	lastFull time.Time
	queue    []Delivery
}

// New returns a dispatcher; Run runs it.
func New(opts Options) *Dispatcher {
	opts = opts.withDefaults()
	log := opts.Logger.With(slog.String("component", "events"))
	return &Dispatcher{
		opts: opts, store: opts.Store, log: log,
		lease: &leader.Lease{Leases: opts.Leases, Name: LeaseName, Identity: opts.Identity, TTL: opts.LeaseTTL, Log: log, Now: opts.Now,
			Doing: "dispatching events", Others: "another replica dispatches"},
		client:      opts.Guard.Client(opts.Timeout),
		maxAttempts: MaxAttempts(opts.Initial, opts.MaxWait, opts.Horizon),
		busy:        make(map[string]bool),
		done:        make(chan struct{}, 1),
	}
}

// Run dispatches until ctx ends, then waits for the attempts in flight
// (which ctx's end aborts; their deliveries stay pending) and gives the
// lease up.
func (d *Dispatcher) Run(ctx context.Context) {
	var changes <-chan string
	if d.opts.Changes != nil {
		if ch, err := d.opts.Changes.Changes(ctx); err == nil {
			changes = ch
		}
	}
	defer d.lease.Release()
	defer d.inflight.Wait()
	tick := time.NewTicker(d.opts.Poll)
	defer tick.Stop()
	next := stepFull
	for {
		if next != stepNone && d.lease.Lead(ctx) {
			var err error
			if next == stepFull || d.subs == nil {
				err = d.Step(ctx)
			} else {
				err = d.startDue(ctx, d.subs)
			}
			if err != nil && ctx.Err() == nil && !errors.Is(err, ErrFenced) {
				d.log.Warn("cannot dispatch events; retrying", slog.Any("error", err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			next = stepFull
		case <-d.done:
			// An attempt finished: the next of its key may be due. New
			// events wait for the tick or a change.
			next = stepDue
		case _, ok := <-changes:
			next = stepNone
			if !ok {
				changes = nil
				continue
			}
			if d.enabled == 0 {
				continue // nobody to deliver to: the tick keeps the rest
			}
			// A burst of changes (a fleet's tenants turning ready) costs
			// one step per changeCoalesce, not one per change.
			if wait := changeCoalesce - time.Since(d.lastFull); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				drain(changes)
			}
			next = stepFull
		}
	}
}

// What a turn of Run's loop does.
const (
	stepNone = iota // nothing: wait for the next wake
	stepDue         // start the due deliveries
	stepFull        // Step: new events too
)

// changeCoalesce is the least time between two steps woken by tenants'
// changes.
const changeCoalesce = 50 * time.Millisecond

// drain empties ch of what has gathered.
func drain(ch <-chan string) {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// fence is the fence of the lease held now.
func (d *Dispatcher) fence() Fence {
	return Fence{Lease: LeaseName, Holder: d.opts.Identity, Epoch: d.lease.Epoch()}
}

// sequenceBatch and fanOutBatch bound a step's reads.
const (
	sequenceBatch = 1000
	fanOutBatch   = 500
)

// Step positions what committed, records the deliveries of new events and
// starts the attempts that are due, as many as there are free workers.
func (d *Dispatcher) Step(ctx context.Context) error {
	d.lastFull = time.Now()
	for {
		n, err := d.store.SequenceOutbox(ctx, sequenceBatch)
		if err != nil {
			return err
		}
		if n < sequenceBatch {
			break
		}
	}
	subs, err := d.store.Subscriptions(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*Subscription, len(subs))
	var errs []error
	d.enabled = 0
	for _, s := range subs {
		byID[s.ID] = s
		if s.Enabled {
			d.enabled++
			if err := d.fanOut(ctx, s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	d.subs, d.queue = byID, nil
	if d.enabled > 0 {
		if err := d.startDue(ctx, byID); err != nil {
			errs = append(errs, err)
		}
	}
	if now := d.opts.Now(); now.Sub(d.lastPrune) > time.Hour {
		d.lastPrune = now
		if n, err := d.store.PruneOutbox(ctx, now.Add(-d.opts.Retention)); err != nil {
			errs = append(errs, err)
		} else if n > 0 {
			d.log.Info("pruned the outbox", slog.Int("events", n), slog.Duration("retention", d.opts.Retention))
		}
	}
	return errors.Join(errs...)
}

// fanOut records s's deliveries of the events after its cursor.
func (d *Dispatcher) fanOut(ctx context.Context, s *Subscription) error {
	for range 20 { // at most 10,000 events a step; the next step goes on
		recs, err := d.store.ReadOutbox(ctx, s.Cursor, fanOutBatch, nil)
		if err != nil || len(recs) == 0 {
			return err
		}
		var ds []NewDelivery
		for i := range recs {
			if s.Matches(&recs[i]) {
				ds = append(ds, NewDelivery{Position: recs[i].Position, EventID: recs[i].ID, Key: recs[i].Key})
			}
		}
		to := recs[len(recs)-1].Position
		if err := d.store.FanOut(ctx, d.fence(), s.ID, s.Cursor, to, ds); err != nil {
			return fmt.Errorf("events: subscription %s: %w", s.Name, err)
		}
		s.Cursor = to
		if len(recs) < fanOutBatch {
			return nil
		}
	}
	return nil
}

// startDue starts the attempts that are due, one per key, as many as
// there are free workers. It reads due deliveries ahead, a few times the
// workers, and starts them from that queue as workers free up: a query
// per finished attempt would make the query's latency the pace of
// delivery. The queue holds the first pending delivery of distinct keys,
// none in flight when it was read; a Step reads it anew.
func (d *Dispatcher) startDue(ctx context.Context, subs map[string]*Subscription) error {
	d.mu.Lock()
	free := d.opts.Workers - len(d.busy)
	d.mu.Unlock()
	if free <= 0 {
		return nil
	}
	if len(d.queue) < free {
		d.mu.Lock()
		busy := make(map[string]bool, len(d.busy))
		for k := range d.busy {
			busy[k] = true
		}
		d.mu.Unlock()
		due, err := d.store.DueDeliveries(ctx, d.opts.Now(), readAhead*d.opts.Workers, busy)
		if err != nil {
			return err
		}
		d.queue = due
	}
	fence := d.fence()
	for free > 0 && len(d.queue) > 0 {
		del := d.queue[0]
		d.queue = d.queue[1:]
		s := subs[del.Subscription]
		if s == nil || !s.Enabled {
			continue // changed since the list was read; the next step sees it
		}
		key := del.Subscription + "\x00" + del.Key
		d.mu.Lock()
		inFlight := d.busy[key]
		if !inFlight {
			d.busy[key] = true
		}
		d.mu.Unlock()
		if inFlight {
			continue
		}
		free--
		d.inflight.Add(1)
		go func() {
			defer d.inflight.Done()
			d.attempt(ctx, fence, s, del)
			d.mu.Lock()
			delete(d.busy, key)
			d.mu.Unlock()
			select {
			case d.done <- struct{}{}:
			default:
			}
		}()
	}
	return nil
}

// readAhead is how many due deliveries per worker startDue reads at once.
const readAhead = 4

// attempt makes one attempt at del and records it.
func (d *Dispatcher) attempt(ctx context.Context, fence Fence, s *Subscription, del Delivery) {
	log := d.log.With(slog.String("subscription", s.Name), slog.String("event_id", del.EventID), slog.String("type", string(del.Type)))
	if del.Type != "" && strings.HasPrefix(string(del.Type), "landlord.tenant.") || del.Type == PlacementMoved {
		log = log.With(slog.String("tenant_id", del.Subject))
	}
	start := d.opts.Now()
	status, excerpt, err := d.send(ctx, s, del)
	if ctx.Err() != nil {
		return // stopping: the delivery stays pending, for the next holder
	}
	latency := d.opts.Now().Sub(start)
	a := Attempt{Subscription: del.Subscription, Position: del.Position, Time: start, Status: status, Latency: latency, Response: excerpt}
	next := DeliveryUpdate{State: Delivered, NextAttemptAt: start}
	var disable string
	outcome := "delivered"
	if err != nil {
		a.Error = err.Error()
		attempts := del.Attempts + 1
		if attempts >= d.maxAttempts {
			outcome = "given_up"
			next.State = Failed
			disable = fmt.Sprintf("event %s (%s of %s) was not delivered after %d attempts over %s; last: %s. Fix the receiver, enable the subscription, and redeliver what it missed",
				del.EventID, del.Type, del.Subject, attempts, d.opts.Horizon, a.Error)
			log.Error("gave up a delivery; disabling the subscription", slog.Int("attempts", attempts), slog.Any("error", err))
		} else {
			outcome = "failed"
			next.State = Pending
			next.NextAttemptAt = start.Add(Backoff(attempts, d.opts.Initial, d.opts.MaxWait))
			log.Info("delivery failed; retrying", slog.Int("attempt", attempts), slog.Time("retry_at", next.NextAttemptAt), slog.Any("error", err))
		}
	}
	if d.opts.Observer != nil {
		d.opts.Observer.ObserveDelivery(outcome, latency)
	}
	// Recorded even if ctx ends now: the receiver answered.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.store.RecordAttempt(rctx, fence, a, next, disable); err != nil {
		log.Warn("cannot record a delivery attempt; it will be made again", slog.Any("error", err))
	}
}

// send posts del's event to s, signed, and returns the answer's status and
// the start of its body; an error for anything but a 2xx.
func (d *Dispatcher) send(ctx context.Context, s *Subscription, del Delivery) (int, string, error) {
	rec, err := d.store.OutboxEvent(ctx, del.EventID)
	if err != nil {
		return 0, "", err
	}
	body, err := d.opts.Encoder.Encode(&rec)
	if err != nil {
		return 0, "", err
	}
	now := d.opts.Now()
	keys, err := Keys(d.opts.Keys, s, now)
	if err != nil {
		return 0, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", fmt.Errorf("events: %w", err)
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("User-Agent", d.opts.UserAgent)
	req.Header.Set(HeaderID, rec.ID)
	req.Header.Set(HeaderTimestamp, fmt.Sprint(now.Unix()))
	req.Header.Set(HeaderSignature, Sign(rec.ID, now, body, keys))
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, ResponseExcerpt))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
	excerpt := strings.ToValidUTF8(string(head), "\uFFFD")
	if !utf8.ValidString(excerpt) {
		excerpt = ""
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, excerpt, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return resp.StatusCode, excerpt, nil
}
