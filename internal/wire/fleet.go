package wire

import (
	"encoding/json"
	"time"
)

// TenantPlan is the plan a tenant follows, as the API shows it.
type TenantPlan struct {
	Name string `json:"name"`
	// Version is the plan version the tenant runs.
	Version int64 `json:"version"`
	// Pinned keeps the tenant at Version: rollouts leave it alone.
	Pinned bool `json:"pinned"`
}

// PlanChoice is the plan a create, replace or patch asks a tenant to
// follow. Name is required, except in a patch, which may leave it out to
// keep the tenant's plan; Version 0 (left out) is the plan's current
// version when the tenant starts to follow the plan, else the tenant's.
type PlanChoice struct {
	Name    string `json:"name,omitempty"`
	Version int64  `json:"version,omitempty"`
	Pinned  bool   `json:"pinned,omitempty"`
}

// MaintenanceWindow is a weekly window in which rollouts may change a
// tenant.
type MaintenanceWindow struct {
	// Days are mon … sun; empty is every day.
	Days []string `json:"days,omitempty"`
	// Start and End are times of day as HH:MM; an End at or before Start
	// closes the next day.
	Start string `json:"start"`
	End   string `json:"end"`
	// TimeZone is an IANA name; empty is UTC.
	TimeZone string `json:"time_zone,omitempty"`
}

// ConfigLayers are the layers of a tenant's effective config, each with
// its secrets redacted: the provider's defaults, the plan version's config
// and the tenant's own compute_config, each merged over the one before.
type ConfigLayers struct {
	Defaults json.RawMessage `json:"defaults"`
	Plan     json.RawMessage `json:"plan"`
	Tenant   json.RawMessage `json:"tenant"`
}

// Plan is a named line of compute config versions for one provider.
type Plan struct {
	Name        string `json:"name"`
	Provider    string `json:"provider"`
	Description string `json:"description,omitempty"`
	// LatestVersion is the newest version, 0 before the first.
	LatestVersion int64 `json:"latest_version"`
	// CurrentVersion is the version new tenants of the plan get.
	CurrentVersion int64     `json:"current_version"`
	CreatedBy      string    `json:"created_by,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// PlanList lists the plans.
type PlanList struct {
	Plans []Plan `json:"plans"`
}

// CreatePlanRequest is the body of POST /v1/plans.
type CreatePlanRequest struct {
	Name string `json:"name"`
	// Provider is the server's default provider when empty.
	Provider    string `json:"provider,omitempty"`
	Description string `json:"description,omitempty"`
}

// PlanVersion is one published version of a plan; it never changes.
type PlanVersion struct {
	Plan      string          `json:"plan"`
	Version   int64           `json:"version"`
	Config    json.RawMessage `json:"config"`
	Message   string          `json:"message,omitempty"`
	CreatedBy string          `json:"created_by,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// PlanVersionList lists a plan's versions, oldest first.
type PlanVersionList struct {
	Versions []PlanVersion `json:"versions"`
}

// PublishVersionRequest is the body of POST /v1/plans/{plan}/versions.
type PublishVersionRequest struct {
	Config  json.RawMessage `json:"config"`
	Message string          `json:"message,omitempty"`
}

// WaveSpec chooses the members of one wave of a rollout.
type WaveSpec struct {
	Name        string            `json:"name,omitempty"`
	Selector    map[string]string `json:"selector,omitempty"`
	Count       int               `json:"count,omitempty"`
	Percent     int               `json:"percent,omitempty"`
	MaxInFlight int               `json:"max_in_flight,omitempty"`
}

// CreateRolloutRequest is the body of POST /v1/rollouts.
type CreateRolloutRequest struct {
	Plan        string `json:"plan"`
	FromVersion int64  `json:"from_version,omitempty"`
	// ToPlan makes the rollout a fleet move: the plan's tenants move to
	// plan ToPlan (at ToVersion), on its provider.
	ToPlan    string     `json:"to_plan,omitempty"`
	ToVersion int64      `json:"to_version,omitempty"`
	Waves     []WaveSpec `json:"waves,omitempty"`
	// Bake and Deadline are Go durations ("10m", "1h30m").
	Bake        string `json:"bake,omitempty"`
	MaxFailures int    `json:"max_failures,omitempty"`
	Deadline    string `json:"deadline,omitempty"`
}

// AbortRolloutRequest is the optional body of POST
// /v1/rollouts/{rollout}/abort.
type AbortRolloutRequest struct {
	// Rollback moves the tenants the rollout changed back to their
	// versions.
	Rollback bool `json:"rollback,omitempty"`
}

// RolloutWave is a wave of a rollout as assigned, with its members by
// state.
type RolloutWave struct {
	Name        string            `json:"name"`
	Selector    map[string]string `json:"selector,omitempty"`
	Count       int               `json:"count,omitempty"`
	Percent     int               `json:"percent,omitempty"`
	MaxInFlight int               `json:"max_in_flight,omitempty"`
	Size        int               `json:"size"`
	// Counts are the wave's members by state.
	Counts map[string]int `json:"counts"`
}

// WaitingTenant is a member of the wave in progress that waits for its
// maintenance window.
type WaitingTenant struct {
	TenantID   string `json:"tenant_id"`
	TenantName string `json:"tenant_name"`
	// OpensAt is when its window next opens; absent when it cannot be
	// known.
	OpensAt *time.Time `json:"opens_at,omitempty"`
}

// Rollout is a rollout as the API shows it.
type Rollout struct {
	ID          string `json:"id"`
	Plan        string `json:"plan"`
	FromVersion int64  `json:"from_version,omitempty"`
	// ToPlan and ToProvider are a fleet move's target plan and its
	// provider; absent for a rollout of the plan's versions.
	ToPlan     string `json:"to_plan,omitempty"`
	ToProvider string `json:"to_provider,omitempty"`
	ToVersion  int64  `json:"to_version"`
	State      string `json:"state"`
	// Wave is the index of the wave in progress, WaveName its name (absent
	// once every wave is done).
	Wave        int           `json:"wave"`
	WaveName    string        `json:"wave_name,omitempty"`
	Waves       []RolloutWave `json:"waves"`
	Bake        string        `json:"bake"`
	Deadline    string        `json:"deadline"`
	MaxFailures int           `json:"max_failures"`
	// Counts are the members by state, of every wave.
	Counts map[string]int `json:"counts"`
	// Failed names the members that failed.
	Failed []string `json:"failed,omitempty"`
	// Waiting are the pending members of the wave in progress whose
	// maintenance window is closed; shown by GET of one rollout and by
	// its actions, not in lists.
	Waiting    []WaitingTenant `json:"waiting,omitempty"`
	BakeFrom   *time.Time      `json:"bake_from,omitempty"`
	Rollback   bool            `json:"rollback,omitempty"`
	Message    string          `json:"message,omitempty"`
	Version    int64           `json:"version"`
	CreatedBy  string          `json:"created_by,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// RolloutList lists rollouts, newest first.
type RolloutList struct {
	Rollouts []Rollout `json:"rollouts"`
}

// RolloutMember is one tenant of a rollout.
type RolloutMember struct {
	TenantID    string     `json:"tenant_id"`
	TenantName  string     `json:"tenant_name"`
	Wave        int        `json:"wave"`
	WaveName    string     `json:"wave_name"`
	State       string     `json:"state"`
	FromVersion int64      `json:"from_version"`
	Generation  int64      `json:"generation,omitempty"`
	ChangedAt   *time.Time `json:"changed_at,omitempty"`
	FinishedAt  *time.Time `json:"finished_at,omitempty"`
	Message     string     `json:"message,omitempty"`
}

// RolloutMemberList lists a rollout's members, in wave order.
type RolloutMemberList struct {
	Members []RolloutMember `json:"members"`
}

// RolloutEvent is one entry of a rollout's own history.
type RolloutEvent struct {
	Seq        int64     `json:"seq"`
	Time       time.Time `json:"time"`
	Type       string    `json:"type"`
	TenantID   string    `json:"tenant_id,omitempty"`
	TenantName string    `json:"tenant_name,omitempty"`
	Wave       int       `json:"wave"`
	Message    string    `json:"message,omitempty"`
	Actor      string    `json:"actor,omitempty"`
}

// RolloutEventList is a page of a rollout's history, oldest first.
type RolloutEventList struct {
	Events []RolloutEvent `json:"events"`
}

// ConfigChange is one difference between two effective configs; secret
// values are never shown.
type ConfigChange struct {
	Field string `json:"field"`
	From  string `json:"from,omitempty"`
	To    string `json:"to,omitempty"`
}

// Provider actions of a fleet plan: what the provider would do to a
// tenant's workload.
const (
	ActionNone    = "none"
	ActionInPlace = "update in place"
	ActionReplace = "replace"
	// ActionMove: a fleet move provisions a new workload on the target
	// plan's provider, switches to it, and destroys the old one.
	ActionMove = "move"
)

// FleetPlanTenant is what a rollout would do to one tenant.
type FleetPlanTenant struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	FromVersion int64  `json:"from_version"`
	ToVersion   int64  `json:"to_version"`
	Wave        string `json:"wave"`
	// Diff is the ID of the changes of its effective config in the fleet
	// plan's Diffs (FleetPlan.DiffOf); empty when its config does not
	// change.
	Diff   string `json:"diff,omitempty"`
	Action string `json:"action"`
	// WindowOpen says whether the tenant's maintenance window is open now
	// (always, without a window); WindowOpensAt when it next opens.
	WindowOpen    bool       `json:"window_open"`
	WindowOpensAt *time.Time `json:"window_opens_at,omitempty"`
}

// FleetPlanDiff is one set of changes of effective configs, shown once
// for every tenant whose config changes so: tenants of a plan mostly
// change alike, and a large plan version would otherwise be repeated for
// each. A value longer than MaxChangeValue bytes is cut, ending with "…
// (N bytes)"; a diff lists at most MaxDiffChanges changes, and the diffs
// of one fleet plan at most MaxFleetPlanDiffBytes of them: the rest are
// counted in ChangesOmitted.
type FleetPlanDiff struct {
	ID string `json:"id"`
	// Tenants is how many tenants it is the diff of.
	Tenants int            `json:"tenants"`
	Changes []ConfigChange `json:"changes"`
	// ChangesOmitted is how many more changes it has than Changes lists.
	ChangesOmitted int `json:"changes_omitted,omitempty"`
}

// The bounds of a fleet plan's diffs (FleetPlanDiff).
const (
	MaxChangeValue        = 256
	MaxDiffChanges        = 100
	MaxFleetPlanDiffBytes = 1 << 20
)

// FleetPlanWave is one wave of a fleet plan.
type FleetPlanWave struct {
	Name    string            `json:"name"`
	Size    int               `json:"size"`
	Tenants []FleetPlanTenant `json:"tenants"`
}

// PlanTenant is a tenant of a plan that a rollout leaves alone.
type PlanTenant struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int64  `json:"version"`
}

// FleetPlanCounts sum up a fleet plan.
type FleetPlanCounts struct {
	// Waves are the tenants of each wave, by name.
	Waves       map[string]int `json:"waves"`
	Tenants     int            `json:"tenants"`
	Pinned      int            `json:"pinned"`
	Current     int            `json:"current"`
	OutOfWindow int            `json:"out_of_window"`
	// Actions are the tenants by provider action.
	Actions map[string]int `json:"actions"`
}

// FleetPlan is what a rollout would do, tenant by tenant: the answer to a
// dry run of POST /v1/rollouts.
type FleetPlan struct {
	Plan        string `json:"plan"`
	Provider    string `json:"provider"`
	FromVersion int64  `json:"from_version,omitempty"`
	// ToPlan and ToProvider are a fleet move's target plan and its
	// provider: each tenant moves from Plan (its from_version) on
	// Provider to ToPlan (ToVersion) on ToProvider.
	ToPlan     string          `json:"to_plan,omitempty"`
	ToProvider string          `json:"to_provider,omitempty"`
	ToVersion  int64           `json:"to_version"`
	Waves      []FleetPlanWave `json:"waves"`
	// Diffs are the changes of the tenants' effective configs, each set
	// once, in the order the waves' tenants first have them.
	Diffs   []FleetPlanDiff `json:"diffs"`
	Pinned  []PlanTenant    `json:"pinned"`
	Current []PlanTenant    `json:"current"`
	Counts  FleetPlanCounts `json:"counts"`
}

// DiffOf returns the diff of a tenant of the plan, or nil when its config
// does not change.
func (p *FleetPlan) DiffOf(t FleetPlanTenant) *FleetPlanDiff {
	if t.Diff == "" {
		return nil
	}
	for i := range p.Diffs {
		if p.Diffs[i].ID == t.Diff {
			return &p.Diffs[i]
		}
	}
	return nil
}

// Rollout states, the values of Rollout.State (fleet.State).
const (
	RolloutRunning   = "running"
	RolloutPaused    = "paused"
	RolloutHalted    = "halted"
	RolloutAborting  = "aborting"
	RolloutAborted   = "aborted"
	RolloutCompleted = "completed"
)

// Member states, the values of RolloutMember.State and the keys of
// Rollout.Counts (fleet.MemberState).
const (
	MemberPending    = "pending"
	MemberChanging   = "changing"
	MemberDone       = "done"
	MemberFailed     = "failed"
	MemberSkipped    = "skipped"
	MemberRolledBack = "rolled_back"
)
