package tenant

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// Store persists tenants and their events. Implementations are safe for
// concurrent use by any number of goroutines (and, for PostgreSQL, processes)
// and behave identically; internal/store/storetest checks them.
type Store interface {
	// Create stores a new tenant in status requested, with generation and
	// version 1 and a "created" event. Only ID (a new one is drawn when
	// empty), Name, Provider, ComputeConfig, Labels, Annotations, Plan and
	// MaintenanceWindow are read from t. An id already used is ErrConflict. It returns
	// ErrNameTaken when a tenant that is not deleted has the name, an
	// error wrapping ErrInvalid when t breaks the rules (see Validate), and
	// one wrapping ErrPlanNotFound when t follows a plan that does not
	// exist, is for another provider than t's or lacks t's version:
	// checked in the transaction that inserts t, so that a plan deleted
	// meanwhile (fleet.Store.DeletePlan) is never followed, and holding the
	// plan until it commits, so that a plan's deletion or a rollout's
	// completion that commits after it sees t.
	Create(ctx context.Context, t *Tenant, actor string) (*Tenant, error)

	// Get returns the tenant with that id or name. Deleted tenants are
	// returned only with IncludeDeleted (by name: the most recently deleted
	// one, when no live tenant has the name). ErrNotFound otherwise.
	Get(ctx context.Context, idOrName string, opts GetOptions) (*Tenant, error)

	// List returns one page of tenants in id (creation) order. Pages are
	// keyset-paginated: a tenant is never returned twice, and every tenant
	// that exists during the whole listing is returned once. A malformed
	// page token is ErrInvalidPageToken; a malformed label selector wraps
	// ErrInvalid (see ValidateSelector).
	List(ctx context.Context, opts ListOptions) (*Page, error)

	// UpdateDesired replaces the desired state when change.Version equals the
	// tenant's version, else it returns ErrConflict. A change that alters
	// something bumps Generation and Version and records an "updated" event;
	// one that alters nothing returns the tenant as it is. Deleting and
	// deleted tenants cannot be changed (ErrConflict). A change of the plan
	// the tenant follows (its name, version or pin) is checked as Create
	// checks a plan (ErrPlanNotFound), in the change's transaction; a
	// change that keeps the plan is not.
	UpdateDesired(ctx context.Context, id string, change DesiredChange) (*Tenant, error)

	// RequestDeletion marks the tenant for deletion: it bumps Generation and
	// Version, moves it to deleting and records the events. A tenant already
	// deleting is returned as it is. version 0 skips the version check.
	RequestDeletion(ctx context.Context, id string, version int64, actor string) (*Tenant, error)

	// UpdateObserved records what the controller found or did for
	// obs.Generation. It returns ErrConflict when the tenant's generation is
	// no longer obs.Generation (a newer desired state exists: the result is
	// stale), and ErrInvalidTransition when the lifecycle forbids the status
	// change. A status change records an event; a settled status (ready,
	// failed, deleted) sets ObservedGeneration; deleted sets DeletedAt and
	// frees the name.
	UpdateObserved(ctx context.Context, id string, obs Observation) (*Tenant, error)

	// ListWork returns, in id order after opts.After, the ids of tenants that
	// need the controller (see Tenant.NeedsWork), at most opts.Limit
	// (DefaultWorkLimit when 0). After is "" or an id (else
	// ErrInvalidPageToken).
	ListWork(ctx context.Context, opts WorkOptions) ([]string, error)

	// AppendEvent records a note or other event for a tenant. Seq and, when
	// zero, Time are assigned by the store. The event must pass ValidateEvent
	// (else ErrInvalid); an unknown tenant is ErrNotFound; a non-zero Epoch
	// that is not the epoch of the tenant's partition lease (FenceLease) is
	// ErrFenced.
	AppendEvent(ctx context.Context, e Event) error

	// ListEvents returns a tenant's events in order (oldest first, or newest
	// first with opts.Newest), one page at a time. An unknown tenant is
	// ErrNotFound; a token no listing of that order returned is
	// ErrInvalidPageToken.
	ListEvents(ctx context.Context, tenantID string, opts EventListOptions) (*EventPage, error)

	// Close releases the store's connections.
	Close() error
}

// LeaseStore holds named, expiring leases by which landlord processes
// sharing a database divide the controller's work: a member lease per
// process and a lease per partition of the tenants (see Partitions). A
// lease has a holder, an expiry and an epoch that grows every time the
// lease changes hands; the epoch of a tenant's partition lease fences the
// controller's writes to it (Observation.Epoch). Stores shared by several
// hosts judge expiry by the database's clock.
type LeaseStore interface {
	// AcquireLease makes holder the holder of the named lease until ttl from
	// now, when it is free or expired (a new epoch) or already holder's (the
	// same epoch, extended). It returns ErrLeaseHeld, with the current
	// lease, when someone else holds it, and an error wrapping ErrInvalid
	// when ttl is not positive.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (Lease, error)
	// RenewLease extends holder's lease of that epoch; ErrLeaseLost when the
	// lease has expired, was released, or changed hands: a holder that
	// renews too late must step down even if nobody has taken over yet.
	RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (Lease, error)
	// RenewLeases extends, in one transaction and a round trip or two
	// whatever their number, each of the held leases (by Name and Epoch)
	// that holder still has at that epoch and that has not expired, until
	// ttl from now. It returns those it could not renew (expired, released
	// or changed hands), which holder must give up; an error means that
	// none was renewed (and wraps ErrInvalid when ttl is not positive).
	RenewLeases(ctx context.Context, holder string, held []Lease, ttl time.Duration) (lost []Lease, err error)
	// ReleaseLease gives the lease up at once, so that a successor need not
	// wait for it to expire. Releasing a lease one no longer holds is not an
	// error.
	ReleaseLease(ctx context.Context, name, holder string, epoch int64) error
	// ListLeases returns the leases whose names begin with prefix, expired
	// ones included, in name order, and the store's clock when it read them,
	// by which their expiry is to be judged (a lease is live when its
	// ExpiresAt is after that time).
	ListLeases(ctx context.Context, prefix string) (leases []Lease, now time.Time, err error)
}

// Lease is the state of a named lease.
type Lease struct {
	Name      string
	Holder    string
	Epoch     int64
	ExpiresAt time.Time
}

// Watcher is implemented by stores that announce changes to desired state
// (Create, UpdateDesired, RequestDeletion), so that the controller acts on
// them at once instead of at the next sweep.
type Watcher interface {
	// Watch returns a channel of the ids of tenants whose desired state
	// changed, closed when ctx ends. When announcements are lost — the
	// receiver fell behind and the buffer overflowed, the connection broke,
	// another process wrote — an empty id says so as soon as there is room,
	// so that the receiver looks for work at once.
	Watch(ctx context.Context) (<-chan string, error)
}

// ChangeFeed is implemented by stores that announce every change a reader of
// a tenant may want to see at once: what Watch announces (Create,
// UpdateDesired, RequestDeletion, Forget) and every write by the controller
// that records an event (UpdateObserved with a status transition,
// AppendEvent: a pause, a note, a failed attempt, drift). A write that
// records no event (UpdateObserved with a progress message alone) is not
// announced: a reader sees it at its next read. Where Watcher serves the
// controller, which must not be woken by its own observations, ChangeFeed
// serves readers, such as a console that shows tenants' statuses live, on
// any replica sharing the store.
//
// Announcements are of committed writes only, and may come in bursts (a
// group of observations committed together); a reader re-reads the tenants
// it is told of rather than count announcements.
type ChangeFeed interface {
	// Changes returns a channel of the ids of tenants that changed — their
	// desired state, or a write of the controller that recorded an event —
	// closed when ctx ends or the store closes. An empty id says
	// announcements were lost: re-read what is shown. Lost are those made
	// while the receiver had let the channel's buffer fill, while the
	// store's connection to its database was broken, or (SQLite) by
	// another process. It returns an error when the store is closed or
	// cannot listen.
	Changes(ctx context.Context) (<-chan string, error)
}

// StatusCounter is implemented by stores that can count tenants by status
// (for metrics). The count reads every tenant's row, far more than a
// page's work: on PostgreSQL, which has no index on status since migration
// 00005, it is a sequential scan of the table (35 to 58 ms at 100,000
// tenants, docs/performance.md).
type StatusCounter interface {
	// CountByStatus counts the tenants that are not deleted, by status.
	CountByStatus(ctx context.Context) (map[Status]int, error)
}

// GetOptions tune Get.
type GetOptions struct {
	IncludeDeleted bool
}

// DefaultPageSize and MaxPageSize are the API's page sizes
// (wire.DefaultPageSize, wire.MaxPageSize) under the names the stores and
// the server's list rules use: a store's page is the API's.
const (
	DefaultPageSize = wire.DefaultPageSize
	MaxPageSize     = wire.MaxPageSize
)

// ListOptions filter and page List. Empty fields do not filter.
type ListOptions struct {
	Statuses []Status
	// Provider lists the tenants any of whose placements run on the named
	// provider.
	Provider   string
	Labels     map[string]string // every key=value must match
	NamePrefix string
	// Plan lists the tenants that follow the named plan.
	Plan string
	// IncludeDeleted lists deleted tenants too; a Statuses filter that names
	// deleted implies it.
	IncludeDeleted bool
	// PageSize defaults to DefaultPageSize and is capped at MaxPageSize.
	PageSize  int
	PageToken string
}

// Page is one page of a listing.
type Page struct {
	Tenants []*Tenant
	// NextPageToken fetches the next page; empty on the last one.
	NextPageToken string
}

// DesiredChange replaces a tenant's desired state.
type DesiredChange struct {
	// Version must equal the tenant's current version.
	Version int64
	// ComputeConfig is the config of a tenant of one placement, when
	// Placements is nil.
	ComputeConfig json.RawMessage
	// Placements, when not nil, are the tenant's placements as they are
	// to be (see ApplyDesired).
	Placements []PlacementSpec
	// Move, when set, is the change: a move of a placement started,
	// approved or cancelled; nothing else of the change is read.
	Move        *MoveAction
	Labels      map[string]string
	Annotations map[string]string
	// Plan and MaintenanceWindow replace the tenant's (nil: none).
	Plan              *PlanRef
	MaintenanceWindow *Window
	Actor             string
	// Message describes the change for the event, optionally.
	Message string
}

// Observation is what the controller records for one generation.
type Observation struct {
	// Generation is the desired generation the controller acted on.
	Generation int64
	// Placement names the placement observed; "" for a tenant of one.
	Placement string
	// Other says the observation is of the workload of the placement's
	// move that does not serve (Move.Other) rather than of the placement.
	Other bool
	// MoveStep, when set, takes the placement's move to that step
	// (MoveAwaitingApproval, or MoveDestroyingSource: the switch), once
	// the observation is applied.
	MoveStep    MoveStep
	Status      Status
	Message     string
	ResourceIDs map[string]string
	Endpoints   []provider.Endpoint
	// Settles says the controller is done with this generation: the desired
	// state is applied (ready) or cannot be (failed). ObservedGeneration
	// becomes Generation. Only ready, failed and deleted (which always
	// settles) can settle; a status written for another reason (a pause, a
	// message) does not.
	Settles bool
	// Attempts and RetryAt record failed attempts at this generation (see
	// Tenant.Attempts); zero and nil after a success.
	Attempts int
	RetryAt  *time.Time
	// Drift, when not nil, replaces the tenant's recorded drift; nil keeps
	// it.
	Drift *DriftReport
	Actor string
	// Epoch is the fencing token of the lease of the tenant's partition
	// (FenceLease); when it is not 0 and is not that lease's epoch, the
	// observation is refused with ErrFenced.
	Epoch int64
}

// DefaultWorkLimit is how many ids ListWork returns when no limit is given.
const DefaultWorkLimit = 1000

// WorkOptions page ListWork.
type WorkOptions struct {
	After string
	Limit int
}

// EventListOptions page ListEvents.
type EventListOptions struct {
	PageSize  int
	PageToken string
	// Newest lists newest first; the page token of such a listing continues
	// it newest first, and is an ErrInvalidPageToken to an oldest-first one
	// (and the other way round).
	Newest bool
	// Placement, when set, lists only the events of that placement
	// (Event.Placement); the page tokens of such a listing continue it.
	Placement string
}

// EventPage is one page of a tenant's events.
type EventPage struct {
	Events        []Event
	NextPageToken string
}

// Lister lists tenants a page at a time; every Store is one.
type Lister interface {
	List(ctx context.Context, opts ListOptions) (*Page, error)
}

// ListAll returns every tenant that opts matches, reading s a page of
// MaxPageSize at a time from opts.PageToken on.
func ListAll(ctx context.Context, s Lister, opts ListOptions) ([]*Tenant, error) {
	var out []*Tenant
	opts.PageSize = MaxPageSize
	for {
		page, err := s.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Tenants...)
		if page.NextPageToken == "" {
			return out, nil
		}
		opts.PageToken = page.NextPageToken
	}
}
