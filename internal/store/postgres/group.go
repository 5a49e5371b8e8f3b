package postgres

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Group commit of observations: the controller's workers call
// UpdateObserved for many tenants at once, and each call alone is a
// transaction of its own, two round trips, a commit and a WAL flush. A call
// hands its observation to one of groupCommitters goroutines; one that is
// idle takes it at once, and one that is busy takes, when it is done, every
// call that waited meanwhile (up to maxGroup), and writes them in one
// transaction of two round trips and one commit. Each call keeps what it
// had alone: its fence checked and its row locked in the transaction that
// writes it, its own answer (one call's refusal or conflict is not the
// others'), and it returns only once that transaction has committed.
//
// A committer only ever writes groups, of one call or more. A call it
// cannot put in one (a second call for a tenant already in the group, a
// call of a group whose transaction failed) is handed back to its caller,
// which writes it with change on its own goroutine, so that no call waits
// behind another's transaction or retries.
//
// A call whose context ends after a committer took it returns the
// context's error at once, yet its write may still commit: the group's
// transaction lasts until every member's context has ended (groupContext).
// That is safe, since the write was fenced and checked against the row's
// generation in the transaction that commits it; it is the write the call
// would have made had it committed just before its deadline.
//
// A panic in the rules or the sealer while a committer handles a call is
// recovered there and fails that call alone (a panicked error): nothing of
// the call is queued on the group's transaction, and the others are
// answered as if it had not been in the group.
const (
	// groupCommitters is how many groups may be in flight at once. More
	// take calls sooner; fewer make larger groups.
	groupCommitters = 2
	// maxGroup bounds the calls of one group.
	maxGroup = 64
)

// pendingObservation is a call of UpdateObserved waiting for a committer.
type pendingObservation struct {
	ctx  context.Context
	id   string
	obs  tenant.Observation
	done chan observed // buffered: the committer never waits for the caller
}

// observed is a call's answer. With alone set, the committer did not write
// the call and its caller is to write it with change.
type observed struct {
	t     *tenant.Tenant
	err   error
	alone bool
}

// writeAlone is the answer to a call its caller is to write itself.
var writeAlone = observed{alone: true}

// updateObservedWhat names an observation in errors, as change does.
const updateObservedWhat = "update observed state"

// errClosed refuses the calls made once the store is closing.
var errClosed = errors.New("the store is closed")

// observeError is the error of UpdateObserved's call for tenant id.
func observeError(id string, err error) error {
	return fmt.Errorf("postgres: %s of tenant %s: %w", updateObservedWhat, id, err)
}

// panicked is a panic recovered while a committer handled one call, with
// the stack where it happened. It unwraps to the panic's value when that is
// an error.
type panicked struct {
	value any
	stack []byte
}

func (p panicked) Error() string { return fmt.Sprintf("panicked: %v", p.value) }

func (p panicked) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

// recoverCall turns a panic of the call for tenant id into *err, and logs
// it with its stack. It is deferred by the parts of a committer's work that
// run code other than this package's (the domain's rules, the sealer, the
// clock) for one call.
func (s *Store) recoverCall(id string, err *error) {
	if v := recover(); v != nil {
		p := panicked{value: v, stack: debug.Stack()}
		s.log.Error("postgres: an observation panicked", "tenant_id", id, "panic", v, "stack", string(p.stack))
		*err = observeError(id, p)
	}
}

// observe hands an observation to a committer and waits for its answer.
func (s *Store) observe(ctx context.Context, id string, obs tenant.Observation) (*tenant.Tenant, error) {
	if !tenant.IsID(id) {
		return nil, notFound(id)
	}
	p := &pendingObservation{ctx: ctx, id: id, obs: obs, done: make(chan observed, 1)}
	select {
	case s.observations <- p:
	case <-ctx.Done():
		return nil, observeError(id, ctx.Err())
	case <-s.closing.Done():
		return nil, observeError(id, errClosed)
	}
	// The committer has it: it answers once the write has committed or
	// failed, or hands the call back. A caller that stops waiting does not
	// learn which, and its write may still commit (see above).
	select {
	case r := <-p.done:
		return s.answer(p, r)
	case <-ctx.Done():
		return nil, observeError(id, ctx.Err())
	}
}

// answer is the result of call p, whose committer answered r: r itself, or
// with r.alone the call written by change here, on the caller's goroutine.
func (s *Store) answer(p *pendingObservation, r observed) (*tenant.Tenant, error) {
	if r.alone {
		return s.change(p.ctx, updateObservedWhat, p.id, false, p.obs.Epoch, applyObservation(p.obs))
	}
	return r.t, r.err
}

// commitObservations is a committer: it takes a call, and every other that
// waits already, and writes them, until the store closes.
func (s *Store) commitObservations() {
	for {
		var group []*pendingObservation
		select {
		case p := <-s.observations:
			group = append(group, p)
		case <-s.closing.Done():
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case p := <-s.observations:
				group = append(group, p)
			default:
				break more
			}
		}
		s.commitGroup(group)
	}
}

// commitGroup writes a group and answers every call of it. A call whose
// context has ended is answered so and not written. A second call for a
// tenant already in the group, and every call of a group whose transaction
// fails, are handed back to their callers (writeAlone), which write them as
// change writes one call. A group of one call is still written here: it
// costs what change does, and it keeps the committer busy while the next
// calls gather into a group.
func (s *Store) commitGroup(group []*pendingObservation) {
	var (
		members []*pendingObservation
		seen    = map[string]bool{}
	)
	for _, p := range group {
		switch {
		case p.ctx.Err() != nil:
			p.done <- observed{err: observeError(p.id, p.ctx.Err())}
		case seen[p.id]:
			p.done <- writeAlone
		default:
			seen[p.id] = true
			members = append(members, p)
		}
	}
	if len(members) == 0 {
		return
	}
	// The rows are locked in id order, so that two groups cannot deadlock.
	slices.SortFunc(members, func(a, b *pendingObservation) int { return strings.Compare(a.id, b.id) })
	if err := s.commitMembers(members); err != nil {
		s.log.Debug("postgres: group commit failed; its callers write their observations one by one", "observations", len(members), "err", err)
		for _, p := range members {
			p.done <- writeAlone
		}
	}
}

// applyObservation is UpdateObserved's rule for change.
func applyObservation(obs tenant.Observation) func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
	return func(cur *tenant.Tenant, now time.Time) (*tenant.Tenant, []tenant.Event, error) {
		return tenant.ApplyObservation(cur, obs, now)
	}
}

// commitMembers writes members (distinct tenants, in id order) in one
// transaction: BEGIN, each one's fence and row lock as one pipeline; each
// one's rule applied; the writes of those it accepts and COMMIT as another.
// It answers the members once the transaction has ended, or not at all when
// it returns an error: the transaction then wrote nothing.
func (s *Store) commitMembers(members []*pendingObservation) error {
	ctx, cancel := groupContext(members)
	defer cancel()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release(ctx, conn)

	b := &pgx.Batch{}
	b.Queue(beginReadCommitted)
	for _, p := range members {
		queueLock(b, p.id, p.obs.Epoch)
	}
	answers := make([]observed, len(members))
	writes := &pgx.Batch{}
	var changed []string // the members whose writes record events
	err = func() error {
		res := conn.SendBatch(ctx, b)
		defer res.Close()
		if _, err := res.Exec(); err != nil {
			return err
		}
		for i, p := range members {
			answer, write, err := s.readMember(res, p)
			if err != nil {
				return err
			}
			answers[i] = answer
			// Queued only now, once the call's rules have run: a call
			// that panicked has queued nothing.
			for _, q := range write.queries {
				writes.Queue(q.SQL, q.Arguments...)
			}
			if write.recorded {
				changed = append(changed, p.id)
			}
		}
		return res.Close()
	}()
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		// One announcement for the whole transaction, of every tenant
		// whose write records an event.
		writes.Queue(notifyChanged, changedPayload(changed))
	}
	writes.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() != "COMMIT" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	if err := conn.SendBatch(ctx, writes).Close(); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback) {
			return err // PostgreSQL refused: nothing was written
		}
		// The COMMIT may have been lost on its way, or its answer: as
		// change, answer the error and let the callers look again.
		for i, p := range members {
			if answers[i].err == nil {
				answers[i] = observed{err: fmt.Errorf("postgres: %s: write tenant %s: %w", updateObservedWhat, p.id, err)}
			}
		}
	}
	for i, p := range members {
		p.done <- answers[i]
	}
	return nil
}

// memberWrite is what a member of a group writes: the queries, and whether
// they record an event, which the group's announcement to change feeds
// then names.
type memberWrite struct {
	queries  []*pgx.QueuedQuery
	recorded bool
}

// readMember reads p's fence and row from res, the group's first pipeline,
// and applies p's observation to the row. The answer is the tenant to be
// written, with what writes it, or the call's own failure: its fence's
// refusal, its tenant unknown, its rule's refusal, or a panic. An error is
// the transaction's: the group fails.
func (s *Store) readMember(res pgx.BatchResults, p *pendingObservation) (answer observed, write memberWrite, err error) {
	defer s.recoverCall(p.id, &answer.err)
	cur, stored, err := s.scanLock(res, p.obs.Epoch)
	var fenced fenceError
	switch {
	case errors.As(err, &fenced):
		return observed{err: observeError(p.id, fenced.err)}, memberWrite{}, nil
	case errors.Is(err, pgx.ErrNoRows):
		return observed{err: notFound(p.id)}, memberWrite{}, nil
	case err != nil:
		return observed{}, memberWrite{}, err
	}
	next, events, err := tenant.ApplyObservation(cur, p.obs, s.now())
	if err != nil {
		return observed{err: fmt.Errorf("postgres: %s: %w", updateObservedWhat, err)}, memberWrite{}, nil
	}
	if next == cur && len(events) == 0 {
		return observed{t: next}, memberWrite{}, nil // no change: nothing to write, as change
	}
	row, err := tenant.ToStore(s.sealer, next, cur.ComputeConfig, stored)
	if err != nil {
		return observed{err: fmt.Errorf("postgres: %s: %w", updateObservedWhat, err)}, memberWrite{}, nil
	}
	one, err := writeBatch(false, false, row, events)
	if err != nil {
		return observed{err: fmt.Errorf("postgres: %s: write tenant %s: %w", updateObservedWhat, p.id, err)}, memberWrite{}, nil
	}
	return observed{t: next}, memberWrite{queries: one.QueuedQueries, recorded: len(events) > 0}, nil
}

// groupContext is the context of a group's transaction: it ends when every
// member's has ended, so that no caller that still waits loses its write to
// another's deadline. It keeps no member's values.
func groupContext(members []*pendingObservation) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	var waiting atomic.Int64
	waiting.Store(int64(len(members)))
	stops := make([]func() bool, len(members))
	for i, p := range members {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
