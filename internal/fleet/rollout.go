package fleet

import (
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// State is where a rollout is in its life.
type State string

// Rollout states. Running, paused, halted and aborting are active: a plan
// has at most one active rollout.
const (
	// StateRunning: the controller changes tenants wave by wave.
	StateRunning State = "running"
	// StatePaused: someone paused it; no tenant is changed until it is
	// resumed (tenants already changing go on converging).
	StatePaused State = "paused"
	// StateHalted: the failure budget ran out; like paused, until someone
	// resumes or aborts it.
	StateHalted State = "halted"
	// StateAborting: someone aborted it asking for the changed tenants to
	// be rolled back; the controller moves them back to their versions.
	StateAborting State = "aborting"
	// StateAborted: finished by an abort.
	StateAborted State = "aborted"
	// StateCompleted: every member is done (or skipped); the target is the
	// plan's current version.
	StateCompleted State = "completed"
)

// Active reports whether the rollout has not finished.
func (s State) Active() bool {
	switch s {
	case StateRunning, StatePaused, StateHalted, StateAborting:
		return true
	}
	return false
}

// Valid reports whether s is a rollout state.
func (s State) Valid() bool { return s.Active() || s == StateAborted || s == StateCompleted }

// Wave chooses the next members of a rollout. Members are assigned to waves
// in order when the rollout starts: each wave takes, from the tenants no
// earlier wave took, those matching Selector, at most Count or Percent of
// all members when one is set. Tenants that no wave takes go to the last
// wave named "rest" (RestWave): one the spec ends with, which then may
// have no selector, count or percent, or else one added after the spec's.
type Wave struct {
	Name string `json:"name"`
	// Selector is labels a tenant must all have (key=value); empty
	// matches every tenant.
	Selector map[string]string `json:"selector,omitempty"`
	// Count and Percent limit the wave's size: at most Count tenants, or
	// Percent of the rollout's members, rounded up. At most one is set; 0
	// is no limit.
	Count   int `json:"count,omitempty"`
	Percent int `json:"percent,omitempty"`
	// MaxInFlight is how many of the wave's tenants may be changing at
	// once; 0 is all of them.
	MaxInFlight int `json:"max_in_flight,omitempty"`
}

// Spec is what a rollout is asked to do.
type Spec struct {
	Plan string `json:"plan"`
	// From, when not 0, limits the rollout to tenants on that version;
	// else it takes every tenant following the plan on another version
	// than To.
	From int64 `json:"from_version,omitempty"`
	To   int64 `json:"to_version"`
	// ToPlan, when set, makes the rollout a fleet move: it moves each
	// member's tenant (a tenant.Move, make-before-break) to follow plan
	// ToPlan at version To on ToPlan's provider, the tenant's own
	// compute_config going with it. Empty: To is a version of Plan.
	ToPlan string `json:"to_plan,omitempty"`
	// ToProvider is ToPlan's provider, as the rollout was created: the
	// provider its moves' targets run on (a plan's provider never
	// changes, and a plan a rollout moves tenants onto cannot be deleted
	// while it runs).
	ToProvider string `json:"to_provider,omitempty"`
	// Waves are taken in order; see Wave.
	Waves []Wave `json:"waves,omitempty"`
	// Bake is how long every tenant of a wave must stay ready before the
	// next wave starts.
	Bake time.Duration `json:"bake,omitempty"`
	// MaxFailures is the failure budget: the rollout halts when more
	// members than this have failed.
	MaxFailures int `json:"max_failures"`
	// Deadline is how long a changed tenant has to become ready at its new
	// generation before it counts as failed; 0 is DefaultDeadline.
	Deadline time.Duration `json:"deadline,omitempty"`
}

// Moves reports whether the rollout is a fleet move (ToPlan).
func (s Spec) Moves() bool { return s.ToPlan != "" }

// Target is the plan and version a member's tenant follows once the
// rollout changed it.
func (s Spec) Target() tenant.PlanRef {
	if s.Moves() {
		return tenant.PlanRef{Name: s.ToPlan, Version: s.To}
	}
	return tenant.PlanRef{Name: s.Plan, Version: s.To}
}

// Done is the version of Plan whose followers the rollout leaves alone
// as done already: To for a rollout of versions, 0 (none: versions start
// at 1) for a fleet move, which takes the plan's followers at any
// version. The stores' newcomers queries take it.
func (s Spec) Done() int64 {
	if s.Moves() {
		return 0
	}
	return s.To
}

// DefaultDeadline is a member's deadline when the spec sets none.
const DefaultDeadline = 15 * time.Minute

// Rollout is a stored rollout: its spec and where it stands.
type Rollout struct {
	ID   string `json:"id"`
	Spec Spec   `json:"spec"`
	// Waves are the spec's waves as assigned (the "rest" wave added when
	// some tenants were left), with their sizes.
	Waves []AssignedWave `json:"waves"`
	State State          `json:"state"`
	// Wave is the index of the wave in progress (len(Waves) once every wave
	// is done).
	Wave int `json:"wave"`
	// BakeFrom is when every member of the current wave was first seen
	// done: the wave's bake started then. Nil while the wave is in
	// progress.
	BakeFrom *time.Time `json:"bake_from,omitempty"`
	// Rollback says an abort moves the changed members back.
	Rollback bool `json:"rollback,omitempty"`
	// Message says why the rollout is as it is (the tenants that failed,
	// who paused it).
	Message string `json:"message,omitempty"`
	// Version counts writes; UpdateRollout requires the caller's.
	Version    int64      `json:"version"`
	CreatedBy  string     `json:"created_by,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// AssignedWave is a wave with the number of members assigned to it.
type AssignedWave struct {
	Wave
	Size int `json:"size"`
}

// MemberState is where one tenant is in a rollout.
type MemberState string

// Member states.
const (
	// MemberPending: not changed yet.
	MemberPending MemberState = "pending"
	// MemberChanging: moved to the target version; waiting for it to be
	// ready at Generation.
	MemberChanging MemberState = "changing"
	// MemberDone: ready at Generation (or later).
	MemberDone MemberState = "done"
	// MemberFailed: failed at Generation, or not ready by its deadline.
	MemberFailed MemberState = "failed"
	// MemberSkipped: left alone: deleted, pinned or moved off the plan
	// after the rollout started.
	MemberSkipped MemberState = "skipped"
	// MemberRolledBack: moved back to From by an abort.
	MemberRolledBack MemberState = "rolled_back"
)

// Member is one tenant of a rollout.
type Member struct {
	TenantID   string      `json:"tenant_id"`
	TenantName string      `json:"tenant_name"`
	Wave       int         `json:"wave"`
	State      MemberState `json:"state"`
	// From is the plan version the tenant ran when the rollout took it.
	From int64 `json:"from_version"`
	// Generation is the tenant's generation that carries the target
	// version (0 until it is changed).
	Generation int64      `json:"generation,omitempty"`
	ChangedAt  *time.Time `json:"changed_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Message    string     `json:"message,omitempty"`
}

// EventType names what happened in a rollout.
type EventType string

// Rollout event types.
const (
	EventStarted     EventType = "started"
	EventWaveStarted EventType = "wave_started"
	EventWaveBaking  EventType = "wave_baking"
	EventChanged     EventType = "tenant_changed"
	EventDone        EventType = "tenant_done"
	EventFailed      EventType = "tenant_failed"
	EventSkipped     EventType = "tenant_skipped"
	EventRolledBack  EventType = "tenant_rolled_back"
	EventPaused      EventType = "paused"
	EventResumed     EventType = "resumed"
	EventHalted      EventType = "halted"
	EventAborted     EventType = "aborted"
	EventCompleted   EventType = "completed"
)

// Event is one entry in a rollout's own history.
type Event struct {
	RolloutID string    `json:"rollout_id"`
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Type      EventType `json:"type"`
	// TenantID and TenantName are set on tenant events.
	TenantID   string `json:"tenant_id,omitempty"`
	TenantName string `json:"tenant_name,omitempty"`
	Wave       int    `json:"wave"`
	Message    string `json:"message,omitempty"`
	Actor      string `json:"actor,omitempty"`
}
