package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// RestWave is the name of the wave that takes the tenants the spec's waves
// leave. A spec may name its last wave so only when that wave takes every
// tenant the others leave (no selector, count or percent); Assign then adds
// no wave of its own.
const RestWave = "rest"

// MaxWaves is the most waves a spec may give: wire.MaxWaves, which the CLI
// checks too, under the name ValidateSpec and internal/api use.
const MaxWaves = wire.MaxWaves

// ValidateSpec checks a rollout's spec, reporting every problem with its
// JSON pointer.
func ValidateSpec(s Spec) error {
	var errs violation.List
	if err := tenant.ValidateName(s.Plan); err != nil {
		errs.Add("/plan", "%s", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
	}
	if s.To < 1 {
		errs.Add("/to_version", "must be at least 1")
	}
	if s.Moves() {
		switch err := tenant.ValidateName(s.ToPlan); {
		case err != nil:
			errs.Add("/to_plan", "%s", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
		case s.ToPlan == s.Plan:
			errs.Add("/to_plan", "is the plan the tenants follow: leave it out to roll them to another version of it")
		}
	}
	if s.From < 0 {
		errs.Add("/from_version", "must be at least 1, or left out for every version")
	} else if s.From != 0 && s.From == s.To && !s.Moves() {
		errs.Add("/from_version", "is the version the rollout moves to")
	}
	if s.MaxFailures < 0 {
		errs.Add("/max_failures", "must be at least 0")
	}
	if s.Bake < 0 {
		errs.Add("/bake", "must not be negative")
	}
	if s.Deadline < 0 {
		errs.Add("/deadline", "must not be negative")
	}
	if len(s.Waves) > MaxWaves {
		// Each wave is not checked: the problems of 10,000 would bury this one.
		errs.Add("/waves", "has %d waves; at most %d are allowed (tenants no wave takes form a last wave of their own)", len(s.Waves), MaxWaves)
		return errs.Err(ErrInvalid)
	}
	names := map[string]bool{}
	for i, w := range s.Waves {
		at := fmt.Sprintf("/waves/%d", i)
		name := waveName(w, i)
		switch err := tenant.ValidateName(name); {
		case err != nil:
			errs.Add(at+"/name", "%s", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
		case names[name]:
			errs.Add(at+"/name", "%s names another wave", wire.Quote(name))
		case name == RestWave && (i < len(s.Waves)-1 || len(w.Selector) > 0 || w.Count != 0 || w.Percent != 0):
			errs.Add(at+"/name", "%s names the last wave, which takes every tenant the waves before it leave: "+
				"give this wave another name, or make it the last one, without selector, count or percent", wire.Quote(name))
		}
		names[name] = true
		// Each term is checked alone, so that its problem is at its key's
		// pointer in the body (ValidateSelector's pointers are a query's).
		for k, v := range w.Selector {
			for _, bad := range violation.Of(tenant.ValidateSelector(map[string]string{k: v})) {
				errs.Add(at+"/selector/"+violation.Escape(k), "%s", bad.Message)
			}
		}
		switch {
		case w.Count != 0 && w.Percent != 0:
			errs.Add(at+"/percent", "set count or percent, not both")
		case w.Count < 0:
			errs.Add(at+"/count", "must be at least 1, or left out for no limit")
		case w.Percent < 0 || w.Percent > 100:
			errs.Add(at+"/percent", "must be from 1 to 100, or left out for no limit")
		}
		if w.MaxInFlight < 0 {
			errs.Add(at+"/max_in_flight", "must be at least 1, or left out for the whole wave")
		}
	}
	return errs.Err(ErrInvalid)
}

func waveName(w Wave, i int) string {
	if w.Name != "" {
		return w.Name
	}
	return fmt.Sprintf("wave-%d", i+1)
}

// Selection is how a rollout's spec sorts the tenants that follow its plan.
type Selection struct {
	// Candidates are the tenants the rollout takes, in id order.
	Candidates []*tenant.Tenant
	// Pinned are tenants pinned to a version: left alone.
	Pinned []*tenant.Tenant
	// Current are tenants already on the target version (a rollout of
	// versions), or, with From set, on another version than From: left
	// alone.
	Current []*tenant.Tenant
}

// Select sorts tenants (those following spec.Plan, in id order) into those
// the rollout takes and those it leaves. Tenants being deleted are left
// out altogether.
func Select(spec Spec, tenants []*tenant.Tenant) Selection {
	var s Selection
	for _, t := range tenants {
		switch {
		case t.Plan == nil || t.Plan.Name != spec.Plan || t.DeletionRequestedAt != nil || t.Status == tenant.StatusDeleted:
		case t.Plan.Pinned:
			s.Pinned = append(s.Pinned, t)
		case !spec.Moves() && t.Plan.Version == spec.To || spec.From != 0 && t.Plan.Version != spec.From:
			s.Current = append(s.Current, t)
		default:
			s.Candidates = append(s.Candidates, t)
		}
	}
	return s
}

// Assign puts candidates (in id order) into the spec's waves, as Wave
// describes, and returns the waves with their sizes and the members. A wave
// may be empty. Tenants no wave takes join the wave named RestWave: the
// spec's last wave when it is so named (ValidateSpec), else one added last.
// So no two waves share the name.
func Assign(spec Spec, candidates []*tenant.Tenant) ([]AssignedWave, []Member) {
	taken := make([]bool, len(candidates))
	waves := make([]AssignedWave, 0, len(spec.Waves)+1)
	members := make([]Member, 0, len(candidates))
	fill := func(i int, selector map[string]string, limit int) {
		for j, t := range candidates {
			if taken[j] || limit >= 0 && waves[i].Size >= limit || !matches(selector, t.Labels) {
				continue
			}
			taken[j] = true
			waves[i].Size++
			members = append(members, Member{TenantID: t.ID, TenantName: t.Name, Wave: i, State: MemberPending, From: t.Plan.Version})
		}
	}
	for i, w := range spec.Waves {
		aw := AssignedWave{Wave: w}
		aw.Name = waveName(w, i)
		waves = append(waves, aw)
		limit := -1
		switch {
		case w.Count > 0:
			limit = w.Count
		case w.Percent > 0:
			limit = (w.Percent*len(candidates) + 99) / 100
		}
		fill(i, w.Selector, limit)
	}
	rest := slices.IndexFunc(waves, func(w AssignedWave) bool { return w.Name == RestWave })
	if rest < 0 && (slices.Contains(taken, false) || len(waves) == 0) {
		waves = append(waves, AssignedWave{Wave: Wave{Name: RestWave}})
		rest = len(waves) - 1
	}
	if rest >= 0 {
		fill(rest, nil, -1)
	}
	return waves, members
}

// SizeWaves sets each wave's Size to its number of members (members by
// wave index, as a store counts them) and reports whether any changed: the
// rule of Store.AddMembers, so that a wave joined by tenants that began to
// follow the plan during the rollout says how many it has.
func SizeWaves(waves []AssignedWave, members map[int]int) bool {
	changed := false
	for i := range waves {
		if waves[i].Size != members[i] {
			waves[i].Size, changed = members[i], true
		}
	}
	return changed
}

func matches(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Counts are a rollout's members by state.
type Counts map[MemberState]int

// Count counts members by state, of one wave or (wave < 0) of all.
func Count(members []Member, wave int) Counts {
	c := Counts{}
	for _, m := range members {
		if wave < 0 || m.Wave == wave {
			c[m.State]++
		}
	}
	return c
}

// Failed returns the members that failed, by name, for messages.
func Failed(members []Member) []string {
	var out []string
	for _, m := range members {
		if m.State == MemberFailed {
			out = append(out, m.TenantName)
		}
	}
	slices.Sort(out)
	return out
}

// deadline is the spec's member deadline, or the default.
func (s Spec) deadline() time.Duration {
	if s.Deadline > 0 {
		return s.Deadline
	}
	return DefaultDeadline
}
