package events

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// Errors of the stores, mapped to the API's answers.
var (
	// ErrNotFound: no such subscription, or no such event of one.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a subscription's version is not the one expected, or
	// its name is taken.
	ErrConflict = errors.New("conflict")
	// ErrNameTaken: another subscription has the name. It is an
	// ErrConflict.
	ErrNameTaken = fmt.Errorf("%w: the name is taken", ErrConflict)
	// ErrFenced: the dispatcher's lease has moved on; it must stop
	// writing.
	ErrFenced = errors.New("the events lease has moved to another replica")
)

// Store keeps the outbox, the subscriptions and their deliveries.
// Implementations are safe for concurrent use; storetest checks both.
type Store interface {
	// SequenceOutbox gives positions to the events that committed since
	// it last ran, at most limit, in the order they were written, and
	// returns how many it gave. Only then are they read (ReadOutbox): a
	// reader that read up to a position never finds an event before it
	// later. Runs of it are serialized by the store. SQLite, whose
	// transactions commit one at a time, positions events as it writes
	// them and returns 0.
	SequenceOutbox(ctx context.Context, limit int) (int, error)
	// ReadOutbox returns the events after position after, at most limit,
	// in position order, of the given types only when types is not empty.
	ReadOutbox(ctx context.Context, after int64, limit int, types []Type) ([]Record, error)
	// OutboxEvent returns one event by its id (ErrNotFound).
	OutboxEvent(ctx context.Context, id string) (Record, error)
	// OutboxHead is the last position given, 0 when none.
	OutboxHead(ctx context.Context) (int64, error)
	// PruneOutbox deletes the events written before before that no
	// subscription still has to deliver, with their deliveries, and
	// returns how many.
	PruneOutbox(ctx context.Context, before time.Time) (int, error)

	// CreateSubscription stores s with version 1; a name taken is
	// ErrNameTaken. Its cursor is the outbox's head: it is sent what is
	// written after.
	CreateSubscription(ctx context.Context, s *Subscription) (*Subscription, error)
	// Subscription returns one by id or name (ErrNotFound).
	Subscription(ctx context.Context, idOrName string) (*Subscription, error)
	// Subscriptions lists them all, in name order.
	Subscriptions(ctx context.Context) ([]*Subscription, error)
	// UpdateSubscription writes s when its Version is the stored one
	// (else ErrConflict), bumping the version; cursor and delivery
	// counts are not written.
	UpdateSubscription(ctx context.Context, s *Subscription) (*Subscription, error)
	// DeleteSubscription deletes it with its deliveries (ErrNotFound).
	DeleteSubscription(ctx context.Context, id string) error

	// FanOut records, for a subscription whose cursor is still from, a
	// delivery of each event given and moves its cursor to to, under
	// fence. A cursor that moved meanwhile is ErrConflict, a fence no
	// longer held ErrFenced.
	FanOut(ctx context.Context, fence Fence, subscription string, from, to int64, deliveries []NewDelivery) error
	// DueDeliveries returns, at most limit, the pending deliveries of
	// enabled subscriptions that are due at now and first of their key:
	// no earlier delivery of the same subscription and key is pending.
	// Those of the keys in busy (subscription id + "\x00" + key) are
	// left out.
	DueDeliveries(ctx context.Context, now time.Time, limit int, busy map[string]bool) ([]Delivery, error)
	// RecordAttempt records an attempt at a delivery and the delivery's
	// new state, under fence; when disable is not "", it disables the
	// delivery's subscription with that reason in the same transaction.
	RecordAttempt(ctx context.Context, fence Fence, a Attempt, next DeliveryUpdate, disable string) error
	// Deliveries lists a subscription's deliveries, newest first.
	Deliveries(ctx context.Context, subscription string, opts DeliveryListOptions) (*DeliveryPage, error)
	// Delivery returns one delivery of a subscription, by event id, with
	// its attempts, oldest first.
	Delivery(ctx context.Context, subscription, eventID string) (*Delivery, []Attempt, error)
	// Redeliver makes pending again, due now, the subscription's
	// deliveries of the events sel selects, creating those that do not
	// exist, and returns how many.
	Redeliver(ctx context.Context, subscription string, sel Redelivery) (int, error)
	// DeliveryStats counts the pending deliveries and finds the oldest
	// event not yet delivered (zero when none).
	DeliveryStats(ctx context.Context) (pending int, oldest time.Time, err error)
}

// Fence is the lease under which the dispatcher writes: its writes are
// refused (ErrFenced) once the lease is another's or has expired.
type Fence struct {
	Lease  string
	Holder string
	Epoch  int64
}

// Subscription is a webhook endpoint and what it is sent.
type Subscription struct {
	ID   string
	Name string
	URL  string
	// Types filters the events by type; empty is every type.
	Types []Type
	// Labels filters tenants' events: every key=value must match the
	// tenant's labels. Events that are not a tenant's pass only when it
	// is empty.
	Labels map[string]string
	// Secrets sign deliveries; the first is the newest. Each is kept as
	// the store holds it (Value sealed when a key seals secrets).
	Secrets     []Secret
	Description string
	Enabled     bool
	// DisabledReason says why the dispatcher disabled it, "" otherwise.
	DisabledReason string
	// Cursor is the position up to which deliveries were made for it.
	Cursor int64
	// Pending counts its deliveries not yet made (read only).
	Pending   int
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	CreatedBy string
}

// Secret is one of a subscription's signing secrets.
type Secret struct {
	// Value is the secret, "whsec_" and base64, as stored: sealed when a
	// key seals secrets.
	Value     string     `json:"value"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// Matches reports whether r passes s's filters.
func (s *Subscription) Matches(r *Record) bool {
	if len(s.Types) > 0 {
		ok := false
		for _, t := range s.Types {
			if t == r.Type {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(s.Labels) == 0 {
		return true
	}
	labels := r.Labels()
	if labels == nil {
		return false
	}
	for k, v := range s.Labels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// DeliveryState is where a delivery stands.
type DeliveryState string

// Delivery states.
const (
	Pending   DeliveryState = "pending"
	Delivered DeliveryState = "delivered"
	Failed    DeliveryState = "failed" // given up on after the retry horizon
)

// NewDelivery is a delivery FanOut records.
type NewDelivery struct {
	Position int64
	EventID  string
	Key      string
}

// Delivery is an event to be sent, or sent, to a subscription.
type Delivery struct {
	Subscription string
	Position     int64
	EventID      string
	Type         Type
	Subject      string
	Key          string
	State        DeliveryState
	// Attempts counts the attempts since it was made pending (by FanOut
	// or Redeliver), which the backoff reads; Tries every attempt ever.
	Attempts      int
	Tries         int
	NextAttemptAt time.Time
	// LastStatus is the HTTP status of the last attempt, 0 when it had
	// none; LastError what went wrong.
	LastStatus int
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Attempt is one try at a delivery, for the delivery log.
type Attempt struct {
	Subscription string
	Position     int64
	// Number counts a delivery's attempts from 1 (Delivery.Tries).
	Number   int
	Time     time.Time
	Status   int // HTTP status; 0 when no answer came
	Latency  time.Duration
	Error    string
	Response string // the start of the answer's body
}

// DeliveryUpdate is a delivery's state after an attempt.
type DeliveryUpdate struct {
	State         DeliveryState
	NextAttemptAt time.Time
}

// DeliveryListOptions filter and page Deliveries.
type DeliveryListOptions struct {
	State     DeliveryState // "" is every state
	PageSize  int
	PageToken string
}

// DeliveryPage is a page of deliveries.
type DeliveryPage struct {
	Deliveries    []Delivery
	NextPageToken string
}

// Redelivery selects events to send again: one by id, or those written
// in [Since, Until) that pass the subscription's filters.
type Redelivery struct {
	EventID string
	Since   time.Time
	Until   time.Time
}

// DeliveryPageStart reads a DeliveryListOptions page token: the position
// of the last delivery of the page before (its deliveries come before
// it), or the end for "". A token no listing gave is an error wrapping
// tenant.ErrInvalidPageToken.
func DeliveryPageStart(token string) (before int64, err error) {
	if token == "" {
		return math.MaxInt64, nil
	}
	p, err := strconv.ParseInt(token, 10, 64)
	if err != nil || p <= 0 {
		return 0, fmt.Errorf("list deliveries: %w", tenant.ErrInvalidPageToken)
	}
	return p, nil
}

// Page cuts ds, read with a limit of size+1, to a page of size, with the
// token of the next page when there is one.
func Page(ds []Delivery, size int) *DeliveryPage {
	page := &DeliveryPage{Deliveries: ds}
	if len(ds) > size {
		page.Deliveries = ds[:size]
		page.NextPageToken = strconv.FormatInt(ds[size-1].Position, 10)
	}
	return page
}

// Selected returns the records a redelivery sel selects for s: the one it
// names by id, whatever s's filters say, or those written in [sel.Since,
// sel.Until) that pass them. byID and inRange read them from the store.
func Selected(ctx context.Context, s *Subscription, sel Redelivery,
	byID func(context.Context, string) (Record, error),
	inRange func(ctx context.Context, since, until time.Time) ([]Record, error)) ([]Record, error) {
	if sel.EventID != "" {
		r, err := byID(ctx, sel.EventID)
		if err != nil {
			return nil, err
		}
		return []Record{r}, nil
	}
	all, err := inRange(ctx, sel.Since, sel.Until)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		if s.Matches(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}
