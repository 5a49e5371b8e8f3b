package tenant

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// DefaultPlacement names the one placement of a tenant declared the way
// every tenant was before tenants had placements: with a provider and a
// compute_config. Its workload is the tenant's own (WorkloadID is the
// tenant's id, WorkloadName its name), so that the tenants stored before
// placements keep the workloads they run.
const DefaultPlacement = "default"

// MaxPlacements is how many placements a tenant may have.
const MaxPlacements = 8

// maxPlacementName is the longest placement name: short, because it is
// part of its workload's name.
const maxPlacementName = 30

var placementNameRule = regexp.MustCompile(`^[a-z]([-a-z0-9]{0,28}[a-z0-9])?$`)

// Placement is one part of a tenant's workload: a compute provider and
// the config it runs there, provisioned, enforced and destroyed as a
// tenant of one placement is. A tenant is the sum of its placements: web
// on ECS and worker on Nomad for one customer, or the same workload in
// two clusters.
type Placement struct {
	// Name is a DNS label of at most 30 characters starting with a letter,
	// unique within the tenant.
	Name string `json:"name"`
	// Provider is the compute provider the placement runs on, fixed for
	// the placement's life: another provider is a move.
	Provider string `json:"provider"`
	// ComputeConfig is the placement's config, as the tenant's is for a
	// tenant of one placement.
	ComputeConfig json.RawMessage `json:"compute_config"`
	// WorkloadID and WorkloadName are what the provider knows the
	// placement's workload by (provider.TenantRef ID and Name): the
	// tenant's own for the default placement, derived from the tenant's id
	// and the placement's name for the others (Workload), and stored, so
	// that they are found again whatever happens to the rules that made
	// them.
	WorkloadID   string `json:"workload_id"`
	WorkloadName string `json:"workload_name"`
	// Removed says the placement was taken out of the tenant's desired
	// state: the controller destroys its workload, and the placement goes
	// when that is done.
	Removed bool `json:"removed,omitempty"`
	// Move is the placement's move in progress, if any.
	Move *Move `json:"move,omitempty"`

	// Observed state, as a tenant of one placement has it.
	Status             Status              `json:"status"`
	StatusMessage      string              `json:"status_message,omitempty"`
	ObservedGeneration int64               `json:"observed_generation"`
	ResourceIDs        map[string]string   `json:"resource_ids,omitempty"`
	Endpoints          []provider.Endpoint `json:"endpoints,omitempty"`
	StatusChangedAt    time.Time           `json:"status_changed_at"`
	Attempts           int                 `json:"attempts,omitempty"`
	RetryAt            *time.Time          `json:"retry_at,omitempty"`
	Drift              *DriftReport        `json:"drift,omitempty"`

	// stored is ComputeConfig as the database holds it (secrets sealed)
	// and read the plain text it opened to, so that a write that keeps
	// the config writes the stored text again (see ToStore).
	stored, read json.RawMessage
}

// ValidatePlacementName checks a placement's name: a lowercase DNS label of
// 1 to 30 characters that starts with a letter.
func ValidatePlacementName(name string) error {
	if !placementNameRule.MatchString(name) {
		return fmt.Errorf("%w: %s must be a lowercase DNS label of 1 to %d characters starting with a letter", ErrInvalid, wire.Quote(name), maxPlacementName)
	}
	return nil
}

// Workload returns the id and name of the workload of the named placement
// of tenant (id, name): the tenant's own for DefaultPlacement; for
// another, a UUID (version 8) drawn from a hash of the tenant's id and the
// placement's name, and the tenant's name joined to the placement's and
// to four hex digits of a hash of the tenant's id by hyphens (acme-web-1f2e;
// shortened to a DNS label with a hash of the whole when longer), so that
// it is not the name of another tenant, such as "acme-web".
func Workload(tenantID, tenantName, placement string) (id, name string) {
	if placement == DefaultPlacement {
		return tenantID, tenantName
	}
	id, sum := derivedID("landlord placement", tenantID, placement)
	name = tenantName + "-" + placement + "-" + hex.EncodeToString(sum[16:18])
	if len(name) > 63 {
		h := sha256.Sum256([]byte(name))
		name = strings.TrimRight(name[:63-9], "-") + "-" + hex.EncodeToString(h[:4])
	}
	return id, name
}

// derivedID is a UUID (version 8: vendor-specific) drawn from a hash of
// parts, joined by NUL, and that hash.
func derivedID(parts ...string) (string, [sha256.Size]byte) {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	u, _ := uuid.FromBytes(sum[:16])
	u[6] = (u[6] & 0x0f) | 0x80 // version 8
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 9562 variant
	return u.String(), sum
}

// Simple reports whether t is a tenant of one placement named
// DefaultPlacement with the tenant's own workload: a tenant as every
// tenant was before placements, which the API shows and the stores keep
// exactly as then.
func (t *Tenant) Simple() bool {
	if len(t.Placements) == 0 {
		return true
	}
	p := &t.Placements[0]
	return len(t.Placements) == 1 && p.Name == DefaultPlacement && p.WorkloadID == t.ID && p.WorkloadName == t.Name && !p.Removed && p.Move == nil
}

// Placement returns the named placement, nil when t has none of that name.
func (t *Tenant) Placement(name string) *Placement {
	for i := range t.Placements {
		if t.Placements[i].Name == name {
			return &t.Placements[i]
		}
	}
	return nil
}

// PlacementNames lists the names of t's placements in order.
func (t *Tenant) PlacementNames() []string {
	names := make([]string, len(t.Placements))
	for i, p := range t.Placements {
		names[i] = p.Name
	}
	return names
}

// Providers lists, in order and once each, the providers t's placements
// run on.
func (t *Tenant) Providers() []string {
	var out []string
	for _, p := range t.Placements {
		if !slices.Contains(out, p.Provider) {
			out = append(out, p.Provider)
		}
	}
	if len(out) == 0 && t.Provider != "" {
		out = append(out, t.Provider)
	}
	return out
}

// Normalize fills t.Placements from the tenant-level fields when it has
// none (a tenant made the way tenants were before placements: one
// placement named DefaultPlacement), and the tenant-level fields from the
// placements otherwise (see summarize). Stores call it on every tenant
// they read, and the domain rules on every tenant they make, so that both
// views agree everywhere.
func (t *Tenant) Normalize() {
	if len(t.Placements) == 0 {
		t.Placements = []Placement{{
			Name: DefaultPlacement, Provider: t.Provider, ComputeConfig: t.ComputeConfig,
			WorkloadID: t.ID, WorkloadName: t.Name,
			Status: t.Status, StatusMessage: t.StatusMessage, ObservedGeneration: t.ObservedGeneration,
			ResourceIDs: t.ResourceIDs, Endpoints: t.Endpoints, StatusChangedAt: t.StatusChangedAt,
			Attempts: t.Attempts, RetryAt: t.RetryAt, Drift: t.Drift,
		}}
		return
	}
	t.mirror()
}

// mirror sets the tenant-level desired fields and the observed ones no
// aggregate decides from the placements: Provider, ComputeConfig,
// ResourceIDs and Drift are the first placement's, Endpoints every
// placement's in order. For a tenant of one placement they are all that
// placement's: the tenant as it was before placements.
func (t *Tenant) mirror() {
	p := &t.Placements[0]
	t.Provider, t.ComputeConfig, t.ResourceIDs, t.Drift = p.Provider, p.ComputeConfig, p.ResourceIDs, p.Drift
	if len(t.Placements) == 1 {
		t.Endpoints = p.Endpoints
		return
	}
	var all []provider.Endpoint
	for _, q := range t.Placements {
		all = append(all, q.Endpoints...)
	}
	t.Endpoints = all
}

// clonePlacements copies ps deeply enough that changing a copy's fields,
// maps or slices never changes ps.
func clonePlacements(ps []Placement) []Placement {
	out := slices.Clone(ps)
	for i := range out {
		p := &out[i]
		p.ResourceIDs = maps.Clone(p.ResourceIDs)
		p.Endpoints = slices.Clone(p.Endpoints)
		if p.RetryAt != nil {
			at := *p.RetryAt
			p.RetryAt = &at
		}
		if p.Move != nil {
			m := *p.Move
			m.Other = clonePlacements([]Placement{m.Other})[0]
			p.Move = &m
		}
	}
	return out
}

// View returns the tenant as the controller works on one of its
// placements: a tenant of that one placement whose id and name are the
// placement's workload's, whose desired state is the placement's config
// with the tenant's labels, annotations, plan and generation, and whose
// observed state is the placement's. A removed placement is a view whose
// deletion was requested. For a Simple tenant the view of its placement
// is the tenant.
func (t *Tenant) View(name string) (*Tenant, error) {
	p := t.Placement(name)
	if p == nil {
		return nil, fmt.Errorf("%w: tenant %s has no placement %q", ErrNotFound, t.ID, name)
	}
	return viewOf(t, *p, p.Removed), nil
}

// viewOf is t as a tenant of the one placement p: p's workload identity,
// desired config and observed state, with t's labels, annotations, plan
// and generation; leaving makes it a view whose deletion was requested.
func viewOf(t *Tenant, p Placement, leaving bool) *Tenant {
	v := *t
	v.ID, v.Name = p.WorkloadID, p.WorkloadName
	v.Provider, v.ComputeConfig = p.Provider, p.ComputeConfig
	v.Status, v.StatusMessage, v.ObservedGeneration = p.Status, p.StatusMessage, p.ObservedGeneration
	v.ResourceIDs, v.Endpoints, v.StatusChangedAt = p.ResourceIDs, p.Endpoints, p.StatusChangedAt
	v.Attempts, v.RetryAt, v.Drift = p.Attempts, p.RetryAt, p.Drift
	v.Placements = []Placement{p}
	if leaving && v.DeletionRequestedAt == nil {
		at := t.UpdatedAt
		v.DeletionRequestedAt = &at
	}
	return &v
}

// ComputeRefOf is what a compute provider needs to find the workload of
// the placement p.
func ComputeRefOf(p *Placement) provider.TenantRef {
	return provider.TenantRef{ID: p.WorkloadID, Name: p.WorkloadName, Provider: p.Provider, Config: p.ComputeConfig, ResourceIDs: p.ResourceIDs}
}

// PlacementSpec is a placement as a request declares it.
type PlacementSpec struct {
	Name          string
	Provider      string
	ComputeConfig json.RawMessage
}

// placementsOf makes the placements of a new tenant (id, name) from specs.
func placementsOf(id, name string, specs []PlacementSpec, now time.Time) []Placement {
	out := make([]Placement, len(specs))
	for i, s := range specs {
		wid, wname := Workload(id, name, s.Name)
		out[i] = Placement{Name: s.Name, Provider: s.Provider, ComputeConfig: compacted(s.ComputeConfig), WorkloadID: wid, WorkloadName: wname,
			Status: StatusRequested, StatusChangedAt: now}
	}
	return out
}

// validatePlacements checks the placements' rules, reporting each problem
// at its JSON pointer: for a Simple tenant, the pointers of the fields a
// tenant of one placement is declared with (/provider, /compute_config).
func validatePlacements(t *Tenant, errs *violation.List) {
	if t.Simple() {
		if t.Provider == "" {
			errs.Add("/provider", "is required")
		}
		validateConfig(t.ComputeConfig, "/compute_config", errs)
		return
	}
	if len(t.Placements) > MaxPlacements {
		errs.Add("/placements", "has %d placements; a tenant may have at most %d", len(t.Placements), MaxPlacements)
	}
	seen := make(map[string]bool, len(t.Placements))
	for i, p := range t.Placements {
		at := fmt.Sprintf("/placements/%d", i)
		switch err := ValidatePlacementName(p.Name); {
		case err != nil:
			errs.Add(at+"/name", "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		case seen[p.Name]:
			errs.Add(at+"/name", "%s names another placement of the tenant too; placement names are unique", wire.Quote(p.Name))
		}
		seen[p.Name] = true
		if p.Provider == "" {
			errs.Add(at+"/provider", "is required")
		}
		validateConfig(p.ComputeConfig, at+"/compute_config", errs)
	}
}

// summarize sets the tenant-level observed state of a tenant of several
// placements, or of one being moved, from its placements' (a tenant of one
// has its placement's, unchanged):
//
//   - deleted once every placement is deleted; while deletion is asked
//     for, failed when a placement's destruction failed, else deleting;
//   - otherwise failed when a placement failed at this generation,
//     updating while a placement moves (its source serves), ready
//     when every placement is ready, and while one is still being worked
//     on, provisioning when the tenant has never been ready (it is
//     requested or provisioning), else updating;
//
// ObservedGeneration is the least of the placements', and the message,
// attempts and retry time those of the placements that are not ready,
// each message after its placement's name.
func (t *Tenant) summarize(now time.Time) {
	t.mirror()
	if t.Simple() {
		p := &t.Placements[0]
		if p.Status != t.Status {
			t.StatusChangedAt = now
		}
		t.Status, t.StatusMessage, t.ObservedGeneration = p.Status, p.StatusMessage, p.ObservedGeneration
		t.Attempts, t.RetryAt = p.Attempts, p.RetryAt
		return
	}
	count := map[Status]int{}
	failed, moving := false, false
	observed := t.Generation
	var msgs []string
	attempts := 0
	var retry *time.Time
	for _, p := range t.Placements {
		if m := p.Move; m != nil {
			moving = true
			o := m.Other
			if o.Status == StatusFailed && o.ObservedGeneration == t.Generation {
				// The move's step failed: the operator acts (approve to
				// try it again, cancel to undo it).
				failed = true
				msgs = append(msgs, fmt.Sprintf("%s: the move to %s failed (%s): %s", p.Name, m.To, strings.ReplaceAll(string(m.Step), "_", " "), o.StatusMessage))
			} else {
				msgs = append(msgs, fmt.Sprintf("%s: moving to %s (%s)", p.Name, m.To, strings.ReplaceAll(string(m.Step), "_", " ")))
			}
		}
		count[p.Status]++
		if p.Status == StatusFailed && p.ObservedGeneration == t.Generation {
			failed = true
		}
		observed = min(observed, p.ObservedGeneration)
		if p.Status != StatusReady && p.StatusMessage != "" {
			msgs = append(msgs, p.Name+": "+p.StatusMessage)
		}
		attempts = max(attempts, p.Attempts)
		if p.RetryAt != nil && (retry == nil || p.RetryAt.Before(*retry)) {
			retry = p.RetryAt
		}
	}
	n := len(t.Placements)
	var status Status
	switch {
	case count[StatusDeleted] == n:
		status = StatusDeleted
	case t.DeletionRequestedAt != nil && failed:
		status = StatusFailed
	case t.DeletionRequestedAt != nil:
		status = StatusDeleting
	case failed:
		status = StatusFailed
	case count[StatusReady] == n && !moving:
		status = StatusReady
	case count[StatusRequested] == n && t.Status == StatusRequested && !moving:
		status = StatusRequested
	case t.Status == StatusRequested || t.Status == StatusProvisioning:
		// A tenant that was never ready stays provisioning while any
		// placement is worked on, or moves.
		status = StatusProvisioning
	default:
		// A move is a change in progress whose source serves: the tenant
		// is updating until it is done, and found by the controller's
		// sweeps (ListWork) after a restart.
		status = StatusUpdating
	}
	if status != t.Status {
		t.StatusChangedAt = now
	}
	t.Status, t.ObservedGeneration = status, observed
	t.StatusMessage = strings.Join(msgs, "; ")
	t.Attempts, t.RetryAt = attempts, retry
}
