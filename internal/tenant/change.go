package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// The functions below are the store rules in one place: adapters read the
// current row under a lock, call them, and write what they return, so that
// every database behaves the same.

// Timestamp normalises a time for storage: UTC, microsecond precision (what
// PostgreSQL keeps).
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// NewTenant validates the fields Create reads from t and returns the tenant
// to store and its "created" event. A new id is drawn unless t.ID holds one
// (the API draws it first, so that validation sees the tenant's id).
func NewTenant(t *Tenant, actor string, now time.Time) (*Tenant, Event, error) {
	now = Timestamp(now)
	id := t.ID
	if id == "" {
		id = NewID()
	}
	specs := []PlacementSpec{{Name: DefaultPlacement, Provider: t.Provider, ComputeConfig: t.ComputeConfig}}
	if len(t.Placements) > 0 {
		specs = specsOf(t.Placements)
	}
	out := &Tenant{
		ID:                id,
		Name:              t.Name,
		Labels:            maps.Clone(t.Labels),
		Annotations:       maps.Clone(t.Annotations),
		Plan:              clonePlan(t.Plan),
		MaintenanceWindow: cloneWindow(t.MaintenanceWindow),
		Placements:        placementsOf(id, t.Name, specs, now),
		Status:            StatusRequested,
		StatusChangedAt:   now,
		Generation:        1,
		Version:           1,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	out.mirror()
	if err := Validate(out); err != nil {
		return nil, Event{}, err
	}
	ev := Event{TenantID: out.ID, Time: now, Type: EventCreated, To: StatusRequested, Generation: 1, Actor: actor}
	return out, ev, nil
}

// Declared returns t's placements as a change declares them to keep them
// as they are: those not being removed, with their configs.
func (t *Tenant) Declared() []PlacementSpec {
	var out []PlacementSpec
	for _, p := range t.Placements {
		if !p.Removed {
			out = append(out, PlacementSpec{Name: p.Name, Provider: p.Provider, ComputeConfig: p.ComputeConfig})
		}
	}
	return out
}

// specsOf returns the desired part of ps.
func specsOf(ps []Placement) []PlacementSpec {
	out := make([]PlacementSpec, len(ps))
	for i, p := range ps {
		out[i] = PlacementSpec{Name: p.Name, Provider: p.Provider, ComputeConfig: p.ComputeConfig}
	}
	return out
}

// changedFields are the fields of the desired state a change changed, for
// its "updated" event: a tenant of one placement changes its
// compute_config, one of several its placements.
func changedFields(cur, next *Tenant) []string {
	var fields []string
	if !samePlacements(cur.Placements, next.Placements) {
		if cur.Simple() && next.Simple() {
			fields = append(fields, "compute_config")
		} else {
			fields = append(fields, "placements")
		}
	}
	for _, f := range []struct {
		name string
		same bool
	}{
		{"labels", sameMap(cur.Labels, next.Labels)},
		{"annotations", sameMap(cur.Annotations, next.Annotations)},
		{"plan", samePlan(cur.Plan, next.Plan)},
		{"maintenance_window", sameWindow(cur.MaintenanceWindow, next.MaintenanceWindow)},
	} {
		if !f.same {
			fields = append(fields, f.name)
		}
	}
	return fields
}

// ApplyDesired returns cur with change applied and its "updated" event, or
// cur itself and no events when the change alters nothing.
func ApplyDesired(in *Tenant, change DesiredChange, now time.Time) (*Tenant, []Event, error) {
	cur := normalized(in)
	if change.Version != cur.Version {
		return nil, nil, fmt.Errorf("%w: tenant %s is at version %d, not %d", ErrConflict, cur.ID, cur.Version, change.Version)
	}
	if cur.DeletionRequestedAt != nil || cur.Status == StatusDeleted {
		return nil, nil, fmt.Errorf("%w: tenant %s is %s and cannot be changed", ErrConflict, cur.ID, cur.Status)
	}
	now = Timestamp(now)
	if change.Move != nil {
		next, events, err := applyMove(cur, change, now)
		if next == cur {
			next = in // a change that alters nothing returns the tenant given
		}
		return next, events, err
	}
	if cur.Moving() {
		return nil, nil, fmt.Errorf("%w: tenant %s cannot be changed while a placement moves; wait for the move, or cancel it", ErrMoving, cur.Name)
	}
	next := *cur
	placements, err := changePlacements(cur, change, now)
	if err != nil {
		return nil, nil, err
	}
	next.Placements = placements
	next.Labels = maps.Clone(change.Labels)
	next.Annotations = maps.Clone(change.Annotations)
	next.Plan = clonePlan(change.Plan)
	next.MaintenanceWindow = cloneWindow(change.MaintenanceWindow)
	next.mirror()
	if err := Validate(&next); err != nil {
		return nil, nil, err
	}
	if samePlacements(cur.Placements, next.Placements) && sameMap(cur.Labels, next.Labels) && sameMap(cur.Annotations, next.Annotations) &&
		samePlan(cur.Plan, next.Plan) && sameWindow(cur.MaintenanceWindow, next.MaintenanceWindow) {
		return in, nil, nil
	}
	next.Generation++
	next.Version++
	next.UpdatedAt = now
	next.Attempts, next.RetryAt = 0, nil // a new desire is tried at once
	for i := range next.Placements {
		next.Placements[i].Attempts, next.Placements[i].RetryAt = 0, nil
	}
	ev := Event{TenantID: cur.ID, Time: now, Type: EventUpdated, Generation: next.Generation, Message: change.Message, Actor: change.Actor,
		Changed: changedFields(cur, &next)}
	return &next, []Event{ev}, nil
}

// changePlacements returns cur's placements as change declares them. A
// change without placements sets the config of a tenant of one placement
// (any other is refused: it would not say which placement it is for). A
// change with placements keeps those of cur it names, with its configs;
// adds, in status requested, those it names that cur lacks; and marks
// Removed those of cur it does not name, whose workloads the controller
// then destroys. A placement's provider cannot change (that is a move),
// and a placement still being removed cannot be declared again.
func changePlacements(cur *Tenant, change DesiredChange, now time.Time) ([]Placement, error) {
	out := clonePlacements(cur.Placements)
	if change.Placements == nil {
		if len(out) != 1 {
			return nil, fmt.Errorf("%w: /placements: tenant %s has placements %s: say which one a compute_config is for, by declaring its placements",
				ErrInvalid, cur.Name, strings.Join(cur.PlacementNames(), ", "))
		}
		out[0].ComputeConfig = compacted(change.ComputeConfig)
		return out, nil
	}
	var errs violation.List
	named := make(map[string]bool, len(change.Placements))
	for i, s := range change.Placements {
		named[s.Name] = true
		p := cur.Placement(s.Name)
		switch {
		case p == nil:
			wid, wname := Workload(cur.ID, cur.Name, s.Name)
			out = append(out, Placement{Name: s.Name, Provider: s.Provider, ComputeConfig: compacted(s.ComputeConfig),
				WorkloadID: wid, WorkloadName: wname, Status: StatusRequested, StatusChangedAt: now})
		case p.Removed:
			errs.Add(fmt.Sprintf("/placements/%d/name", i), "placement %s is being removed; declare it again once it is gone", wire.Quote(s.Name))
		case p.Provider != s.Provider:
			errs.Add(fmt.Sprintf("/placements/%d/provider", i), "placement %s runs on %s; a placement moves to another provider with landlord move, not a change",
				wire.Quote(s.Name), p.Provider)
		default:
			for j := range out {
				if out[j].Name == s.Name {
					out[j].ComputeConfig = compacted(s.ComputeConfig)
				}
			}
		}
	}
	if err := errs.Err(ErrInvalid); err != nil {
		return nil, err
	}
	for j := range out {
		if !named[out[j].Name] {
			out[j].Removed = true
		}
	}
	if !slices.ContainsFunc(out, func(p Placement) bool { return !p.Removed }) {
		return nil, fmt.Errorf("%w: /placements: a tenant has at least one placement; delete the tenant to remove them all", ErrInvalid)
	}
	return out, nil
}

// compacted is raw compacted (compactJSON), or raw itself when it is not
// JSON, for Validate to report.
func compacted(raw json.RawMessage) json.RawMessage {
	out, err := compactJSON(raw)
	if err != nil {
		return raw
	}
	return out
}

// samePlacements reports whether a and b declare the same placements.
func samePlacements(a, b []Placement) bool {
	return slices.EqualFunc(a, b, func(p, q Placement) bool {
		return p.Name == q.Name && p.Provider == q.Provider && p.Removed == q.Removed && sameJSON(p.ComputeConfig, q.ComputeConfig)
	})
}

// ApplyDeletion returns cur marked for deletion and its events, or cur itself
// and no events when deletion was already requested. version 0 skips the
// version check.
func ApplyDeletion(cur *Tenant, version int64, actor string, now time.Time) (*Tenant, []Event, error) {
	if version != 0 && version != cur.Version {
		return nil, nil, fmt.Errorf("%w: tenant %s is at version %d, not %d", ErrConflict, cur.ID, cur.Version, version)
	}
	// Asking again is harmless, except that it retries a deletion that
	// failed.
	if cur.Status == StatusDeleted || (cur.DeletionRequestedAt != nil && cur.Status != StatusFailed) {
		return cur, nil, nil
	}
	if err := CheckTransition(cur.Status, StatusDeleting); err != nil {
		return nil, nil, err
	}
	now = Timestamp(now)
	next := deletionOf(cur, StatusDeleting, "", now)
	events := []Event{
		{TenantID: cur.ID, Time: now, Type: EventDeleteRequested, Generation: next.Generation, Actor: actor},
		{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: StatusDeleting, Generation: next.Generation, Actor: actor},
	}
	return &next, events, nil
}

// deletionOf is cur at a new generation whose deletion was requested at
// now (unless it was before), in status with message: what a deletion
// request and a forget have in common. now is a Timestamp already.
func deletionOf(cur *Tenant, status Status, message string, now time.Time) Tenant {
	next := *cur
	if next.DeletionRequestedAt == nil {
		next.DeletionRequestedAt = &now
	}
	next.Generation++
	next.Version++
	next.UpdatedAt = now
	next.Status = status
	next.StatusChangedAt = now
	next.StatusMessage = message
	next.Attempts, next.RetryAt = 0, nil
	next.Placements = clonePlacements(cur.Placements)
	for i := range next.Placements {
		p := &next.Placements[i]
		if p.Status != status {
			p.StatusChangedAt = now
		}
		p.Status, p.StatusMessage = status, message
		p.Attempts, p.RetryAt = 0, nil
	}
	return next
}

// ApplyObservation returns cur with the controller's observation of one
// placement (obs.Placement; "" for a tenant of one placement) applied, and
// the events it causes. The lifecycle's rules apply to the placement's
// status; the tenant's is then summarized from its placements' (see
// summarize). A removed placement that is deleted goes from the tenant.
//
// For a tenant of one placement, the tenant's status is its placement's,
// and its events are those of a tenant before placements. For one of
// several, a placement's status change and drift are events of the
// placement (Event.Placement), and a change of the tenant's summarized
// status is an event of the tenant.
func ApplyObservation(cur *Tenant, obs Observation, now time.Time) (*Tenant, []Event, error) {
	cur = normalized(cur)
	if obs.Generation != cur.Generation {
		return nil, nil, fmt.Errorf("%w: tenant %s is at generation %d; the observation is for generation %d", ErrConflict, cur.ID, cur.Generation, obs.Generation)
	}
	if !obs.Status.Valid() {
		return nil, nil, fmt.Errorf("%w: unknown status %q", ErrInvalidTransition, obs.Status)
	}
	i, err := observed(cur, obs.Placement)
	if err != nil {
		return nil, nil, err
	}
	placements := clonePlacements(cur.Placements)
	if obs.Other {
		return applyOtherObservation(cur, placements, i, obs, now)
	}
	p := &placements[i]
	if err := CheckTransition(p.Status, obs.Status); err != nil {
		return nil, nil, fmt.Errorf("tenant %s%s: %w", cur.ID, placementSuffix(cur, p.Name), err)
	}
	if (cur.DeletionRequestedAt != nil || p.Removed) && obs.Status != StatusDeleting && obs.Status != StatusDeleted && obs.Status != StatusFailed {
		return nil, nil, fmt.Errorf("%w: tenant %s%s is being deleted; it cannot become %s", ErrInvalidTransition, cur.ID, placementSuffix(cur, p.Name), obs.Status)
	}
	if p.Move != nil && obs.Status == StatusDeleted {
		return nil, nil, fmt.Errorf("%w: placement %s of tenant %s is being moved: the move's other workload is destroyed first", ErrConflict, p.Name, cur.ID)
	}
	if obs.Attempts < 0 {
		return nil, nil, fmt.Errorf("%w: attempts must not be negative", ErrInvalid)
	}
	if obs.Settles && !obs.Status.Settled() {
		return nil, nil, fmt.Errorf("%w: only ready, failed or deleted can settle a generation, not %s", ErrInvalidTransition, obs.Status)
	}
	now = Timestamp(now)
	from, drift := p.Status, p.Drift
	observe(p, obs, now)
	simple := cur.Simple()
	at := ""
	if !simple {
		at = p.Name
	}
	var events []Event
	if obs.Drift != nil && obs.Status != StatusDeleted {
		// A drift still open and seen again (observed, not repaired) is
		// not news; one that came back after it was resolved is.
		if obs.Drift.Open() && obs.Drift.News(drift) {
			events = append(events, Event{TenantID: cur.ID, Placement: at, Time: now, Type: EventDrift, Generation: obs.Generation, Message: obs.Drift.Describe(), Actor: obs.Actor})
		}
	}
	if !simple && from != obs.Status {
		events = append(events, Event{TenantID: cur.ID, Placement: at, Time: now, Type: EventStatus, From: from, To: obs.Status, Generation: obs.Generation, Message: obs.Message, Actor: obs.Actor})
	}
	next := *cur
	if obs.MoveStep != "" {
		ev, err := applyMoveStep(&next, p, obs.MoveStep, now, obs.Actor)
		if err != nil {
			return nil, nil, err
		}
		events = append(events, *ev)
	}
	if p.Removed && p.Status == StatusDeleted && len(placements) > 1 {
		placements = slices.Delete(placements, i, i+1)
	}
	next.Placements = placements
	next.UpdatedAt = now
	next.summarize(now)
	if next.Status == StatusDeleted {
		next.DeletedAt = &now
		next.ObservedGeneration = obs.Generation
		next.ResourceIDs, next.Endpoints = nil, nil
		next.Attempts, next.RetryAt = 0, nil
	}
	if cur.Status != next.Status {
		msg := obs.Message
		if !simple {
			msg = next.StatusMessage
		}
		events = append(events, Event{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: next.Status, Generation: obs.Generation, Message: msg, Actor: obs.Actor})
	}
	return &next, events, nil
}

// normalized is t, or, when t has no placements (a tenant made by hand
// rather than read from a store), a copy of t with its one placement
// (Normalize), for the rules to apply to.
func normalized(t *Tenant) *Tenant {
	if len(t.Placements) > 0 {
		return t
	}
	out := *t
	out.Normalize()
	return &out
}

// observe applies obs's observed fields to p; now is a Timestamp.
func observe(p *Placement, obs Observation, now time.Time) {
	if p.Status != obs.Status {
		p.StatusChangedAt = now
	}
	p.Status = obs.Status
	p.StatusMessage = obs.Message
	p.ResourceIDs = maps.Clone(obs.ResourceIDs)
	p.Endpoints = slices.Clone(obs.Endpoints)
	p.Attempts = obs.Attempts
	p.RetryAt = nil
	if obs.RetryAt != nil {
		at := Timestamp(*obs.RetryAt)
		p.RetryAt = &at
	}
	if obs.Settles || obs.Status == StatusDeleted {
		p.ObservedGeneration = obs.Generation
	}
	if obs.Status == StatusDeleted {
		p.ResourceIDs = nil
		p.Endpoints = nil
		p.Attempts, p.RetryAt = 0, nil
	}
	if obs.Drift != nil && obs.Status != StatusDeleted {
		d := *obs.Drift
		d.DetectedAt = Timestamp(d.DetectedAt)
		if d.ResolvedAt != nil {
			at := Timestamp(*d.ResolvedAt)
			d.ResolvedAt = &at
		}
		d.Differences = slices.Clone(d.Differences)
		p.Drift = &d
	}
}

// applyOtherObservation is ApplyObservation of the workload of placement
// i's move that does not serve (Move.Other): its status follows the
// lifecycle's rules, and its deletion ends the move (finishMove). It
// records no status events (the move's steps are events of their own),
// and the tenant's status does not change.
func applyOtherObservation(cur *Tenant, placements []Placement, i int, obs Observation, now time.Time) (*Tenant, []Event, error) {
	p := &placements[i]
	if p.Move == nil {
		return nil, nil, fmt.Errorf("%w: placement %s of tenant %s is not moving (the move ended meanwhile)", ErrConflict, p.Name, cur.ID)
	}
	o := &p.Move.Other
	if err := CheckTransition(o.Status, obs.Status); err != nil {
		return nil, nil, fmt.Errorf("tenant %s placement %s, the move's workload: %w", cur.ID, p.Name, err)
	}
	leaving := p.Move.Step == MoveCancelling || p.Move.Step == MoveDestroyingSource || cur.DeletionRequestedAt != nil
	if leaving && obs.Status != StatusDeleting && obs.Status != StatusDeleted && obs.Status != StatusFailed {
		// Cancelled (or deleted) while the controller worked on it: it
		// looks again, and destroys it.
		return nil, nil, fmt.Errorf("%w: the move's workload of placement %s of tenant %s is to be destroyed now; it cannot become %s", ErrConflict, p.Name, cur.ID, obs.Status)
	}
	if obs.Settles && !obs.Status.Settled() {
		return nil, nil, fmt.Errorf("%w: only ready, failed or deleted can settle a generation, not %s", ErrInvalidTransition, obs.Status)
	}
	now = Timestamp(now)
	observe(o, obs, now)
	var events []Event
	next := *cur
	switch {
	case obs.Status == StatusDeleted:
		events = append(events, finishMove(cur, p, now, obs.Actor))
	case obs.MoveStep != "":
		ev, err := applyMoveStep(&next, p, obs.MoveStep, now, obs.Actor)
		if err != nil {
			return nil, nil, err
		}
		events = append(events, *ev)
	}
	next.Placements = placements
	next.UpdatedAt = now
	next.summarize(now)
	return &next, events, nil
}

// observed returns the index of the placement an observation is for: the
// named one, or for "" the only one.
func observed(t *Tenant, name string) (int, error) {
	if name == "" {
		if len(t.Placements) != 1 {
			return 0, fmt.Errorf("%w: tenant %s has %d placements; an observation names the one it is for", ErrInvalid, t.ID, len(t.Placements))
		}
		return 0, nil
	}
	for i := range t.Placements {
		if t.Placements[i].Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: tenant %s has no placement %q (it was removed meanwhile)", ErrConflict, t.ID, name)
}

// placementSuffix names placement name of t in an error, when t has
// several.
func placementSuffix(t *Tenant, name string) string {
	if t.Simple() {
		return ""
	}
	return " placement " + name
}

// compactJSON removes insignificant whitespace, keeping key order and number
// text, and rewrites string escapes that are not valid Unicode (a lone
// surrogate, "\ud800") as U+FFFD, which every store accepts.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	if !bytes.Contains(b.Bytes(), []byte(`\u`)) {
		return b.Bytes(), nil
	}
	// Re-encode: the decoder turns invalid escapes into U+FFFD.
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// sameJSON compares two JSON documents by meaning: key order, whitespace
// and the spelling of numbers (1e2, 100) do not matter. PostgreSQL's JSONB
// respells numbers, so number text cannot be part of the meaning.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, errA := canonical(a)
	cb, errB := canonical(b)
	return errA == nil && errB == nil && bytes.Equal(ca, cb)
}

func canonical(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(exactNumbers(v))
}

// exactNumbers replaces numbers by their exact value as a fraction.
func exactNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(v.String()); ok {
			return json.Number(r.RatString())
		}
	case map[string]any:
		for k, c := range v {
			v[k] = exactNumbers(c)
		}
	case []any:
		for i, c := range v {
			v[i] = exactNumbers(c)
		}
	}
	return v
}

func sameMap(a, b map[string]string) bool {
	return len(a) == len(b) && maps.Equal(a, b)
}

// ApplyLease returns the lease after holder asks for it at now: unchanged
// with ErrLeaseHeld when another holder's lease has not expired, extended
// when holder already has it, and otherwise taken over with the next epoch.
// cur is nil when the lease has never been held.
func ApplyLease(cur *Lease, name, holder string, ttl time.Duration, now time.Time) (Lease, error) {
	expires, err := LeaseExpiry(now, ttl)
	if err != nil {
		return Lease{}, err
	}
	now = Timestamp(now)
	switch {
	case cur == nil:
		return Lease{Name: name, Holder: holder, Epoch: 1, ExpiresAt: expires}, nil
	case cur.Holder == holder && cur.ExpiresAt.After(now):
		return Lease{Name: name, Holder: holder, Epoch: cur.Epoch, ExpiresAt: expires}, nil
	case cur.ExpiresAt.After(now):
		return *cur, fmt.Errorf("%w: %s holds %q (epoch %d) until %s", ErrLeaseHeld, cur.Holder, name, cur.Epoch, cur.ExpiresAt.Format(time.RFC3339Nano))
	default:
		return Lease{Name: name, Holder: holder, Epoch: cur.Epoch + 1, ExpiresAt: expires}, nil
	}
}

// LeaseExpiry is when a lease taken or renewed at now for ttl expires.
func LeaseExpiry(now time.Time, ttl time.Duration) (time.Time, error) {
	if ttl <= 0 {
		return time.Time{}, fmt.Errorf("%w: a lease's ttl must be positive, not %s", ErrInvalid, ttl)
	}
	return Timestamp(now.Add(ttl)), nil
}

// CheckFence returns ErrFenced when a write's epoch (an Observation's or an
// Event's; 0 means unfenced) is stale against the current epoch of the
// tenant's partition lease (FenceLease; 0 when the lease was never held).
func CheckFence(epoch, leaseEpoch int64) error {
	if epoch != 0 && epoch != leaseEpoch {
		return fmt.Errorf("%w: the write carries epoch %d; the tenant's partition lease is at epoch %d", ErrFenced, epoch, leaseEpoch)
	}
	return nil
}
