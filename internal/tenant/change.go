package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"
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
	config, err := compactJSON(t.ComputeConfig)
	if err != nil {
		config = t.ComputeConfig // Validate reports it
	}
	id := t.ID
	if id == "" {
		id = NewID()
	}
	out := &Tenant{
		ID:                id,
		Name:              t.Name,
		Provider:          t.Provider,
		ComputeConfig:     config,
		Labels:            maps.Clone(t.Labels),
		Annotations:       maps.Clone(t.Annotations),
		Plan:              clonePlan(t.Plan),
		MaintenanceWindow: cloneWindow(t.MaintenanceWindow),
		Status:            StatusRequested,
		StatusChangedAt:   now,
		Generation:        1,
		Version:           1,
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	if err := Validate(out); err != nil {
		return nil, Event{}, err
	}
	ev := Event{TenantID: out.ID, Time: now, Type: EventCreated, To: StatusRequested, Generation: 1, Actor: actor}
	return out, ev, nil
}

// ApplyDesired returns cur with change applied and its "updated" event, or
// cur itself and no events when the change alters nothing.
func ApplyDesired(cur *Tenant, change DesiredChange, now time.Time) (*Tenant, []Event, error) {
	if change.Version != cur.Version {
		return nil, nil, fmt.Errorf("%w: tenant %s is at version %d, not %d", ErrConflict, cur.ID, cur.Version, change.Version)
	}
	if cur.DeletionRequestedAt != nil || cur.Status == StatusDeleted {
		return nil, nil, fmt.Errorf("%w: tenant %s is %s and cannot be changed", ErrConflict, cur.ID, cur.Status)
	}
	config, err := compactJSON(change.ComputeConfig)
	if err != nil {
		config = change.ComputeConfig
	}
	next := *cur
	next.ComputeConfig = config
	next.Labels = maps.Clone(change.Labels)
	next.Annotations = maps.Clone(change.Annotations)
	next.Plan = clonePlan(change.Plan)
	next.MaintenanceWindow = cloneWindow(change.MaintenanceWindow)
	if err := Validate(&next); err != nil {
		return nil, nil, err
	}
	if sameJSON(cur.ComputeConfig, next.ComputeConfig) && sameMap(cur.Labels, next.Labels) && sameMap(cur.Annotations, next.Annotations) &&
		samePlan(cur.Plan, next.Plan) && sameWindow(cur.MaintenanceWindow, next.MaintenanceWindow) {
		return cur, nil, nil
	}
	now = Timestamp(now)
	next.Generation++
	next.Version++
	next.UpdatedAt = now
	next.Attempts, next.RetryAt = 0, nil // a new desire is tried at once
	ev := Event{TenantID: cur.ID, Time: now, Type: EventUpdated, Generation: next.Generation, Message: change.Message, Actor: change.Actor}
	return &next, []Event{ev}, nil
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
	return next
}

// ApplyObservation returns cur with the controller's observation applied and
// the status event it causes, if any.
func ApplyObservation(cur *Tenant, obs Observation, now time.Time) (*Tenant, []Event, error) {
	if obs.Generation != cur.Generation {
		return nil, nil, fmt.Errorf("%w: tenant %s is at generation %d; the observation is for generation %d", ErrConflict, cur.ID, cur.Generation, obs.Generation)
	}
	if !obs.Status.Valid() {
		return nil, nil, fmt.Errorf("%w: unknown status %q", ErrInvalidTransition, obs.Status)
	}
	if err := CheckTransition(cur.Status, obs.Status); err != nil {
		return nil, nil, fmt.Errorf("tenant %s: %w", cur.ID, err)
	}
	if cur.DeletionRequestedAt != nil && obs.Status != StatusDeleting && obs.Status != StatusDeleted && obs.Status != StatusFailed {
		return nil, nil, fmt.Errorf("%w: tenant %s is being deleted; it cannot become %s", ErrInvalidTransition, cur.ID, obs.Status)
	}
	if obs.Attempts < 0 {
		return nil, nil, fmt.Errorf("%w: attempts must not be negative", ErrInvalid)
	}
	if obs.Settles && !obs.Status.Settled() {
		return nil, nil, fmt.Errorf("%w: only ready, failed or deleted can settle a generation, not %s", ErrInvalidTransition, obs.Status)
	}
	now = Timestamp(now)
	next := *cur
	if cur.Status != obs.Status {
		next.StatusChangedAt = now
	}
	next.Status = obs.Status
	next.StatusMessage = obs.Message
	next.ResourceIDs = maps.Clone(obs.ResourceIDs)
	next.Endpoints = slices.Clone(obs.Endpoints)
	next.Attempts = obs.Attempts
	next.RetryAt = nil
	if obs.RetryAt != nil {
		at := Timestamp(*obs.RetryAt)
		next.RetryAt = &at
	}
	next.UpdatedAt = now
	if obs.Settles || obs.Status == StatusDeleted {
		next.ObservedGeneration = obs.Generation
	}
	if obs.Status == StatusDeleted {
		next.DeletedAt = &now
		next.ResourceIDs = nil
		next.Endpoints = nil
		next.Attempts, next.RetryAt = 0, nil
	}
	var events []Event
	if obs.Drift != nil && obs.Status != StatusDeleted {
		// A drift still open and seen again (observed, not repaired) is
		// not news; one that came back after it was resolved is.
		if obs.Drift.Open() && obs.Drift.News(cur.Drift) {
			events = append(events, Event{TenantID: cur.ID, Time: now, Type: EventDrift, Generation: obs.Generation, Message: obs.Drift.Describe(), Actor: obs.Actor})
		}
		d := *obs.Drift
		d.DetectedAt = Timestamp(d.DetectedAt)
		if d.ResolvedAt != nil {
			at := Timestamp(*d.ResolvedAt)
			d.ResolvedAt = &at
		}
		d.Differences = slices.Clone(d.Differences)
		next.Drift = &d
	}
	if cur.Status != obs.Status {
		events = append(events, Event{TenantID: cur.ID, Time: now, Type: EventStatus, From: cur.Status, To: obs.Status, Generation: obs.Generation, Message: obs.Message, Actor: obs.Actor})
	}
	return &next, events, nil
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
