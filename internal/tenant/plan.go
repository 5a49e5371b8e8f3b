package tenant

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// PlanRef is the plan a tenant follows. Its effective compute config is the
// provider's defaults, then the plan version's config, then the tenant's
// own compute_config, each merged over the one before: the tenant's
// overrides survive a new plan version.
type PlanRef struct {
	// Name is the plan's name (a DNS label, as a tenant's).
	Name string `json:"name"`
	// Version is the plan version the tenant runs, from 1.
	Version int64 `json:"version"`
	// Pinned keeps the tenant at Version: rollouts of the plan skip it until
	// it is unpinned.
	Pinned bool `json:"pinned,omitempty"`
}

// String is the reference as written on the command line: "standard@3"
// for a pinned tenant, "standard (v3)" for one that follows its plan.
func (p PlanRef) String() string {
	if p.Pinned {
		return p.Name + "@" + strconv.FormatInt(p.Version, 10)
	}
	return fmt.Sprintf("%s (v%d)", p.Name, p.Version)
}

var planRefPattern = regexp.MustCompile(`^([^@]+)(?:@([0-9]+))?$`)

// ParsePlanRef reads "standard" (follow the plan; version 0, for the caller
// to fill with the plan's current version) or "standard@3" (pinned to
// version 3).
func ParsePlanRef(s string) (PlanRef, error) {
	m := planRefPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return PlanRef{}, fmt.Errorf("%w: plan %s is not NAME or NAME@VERSION", ErrInvalid, wire.Quote(s))
	}
	ref := PlanRef{Name: m[1]}
	if m[2] != "" {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil || v < 1 {
			return PlanRef{}, fmt.Errorf("%w: plan version %s is not a number from 1", ErrInvalid, wire.Quote(m[2]))
		}
		ref.Version, ref.Pinned = v, true
	}
	if err := ValidateName(ref.Name); err != nil {
		return PlanRef{}, fmt.Errorf("%w: plan name %s", err, wire.Quote(ref.Name))
	}
	return ref, nil
}

// validatePlan checks a stored tenant's plan reference.
func validatePlan(p *PlanRef, errs *violation.List) {
	if p == nil {
		return
	}
	if err := ValidateName(p.Name); err != nil {
		errs.Add("/plan/name", "%s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
	}
	if p.Version < 1 {
		errs.Add("/plan/version", "must be at least 1")
	}
}

// samePlan reports whether two plan references are equal (nil is no plan).
func samePlan(a, b *PlanRef) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func clonePlan(p *PlanRef) *PlanRef {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Follow is a plan a write puts a tenant on, or the target of one of its
// moves (on the target's provider).
type Follow struct {
	Plan     PlanRef
	Provider string
}

// NewFollows returns the plans next follows, or the targets of its moves
// do, that cur (nil for a create) did not: those the stores check, in the
// transaction that writes next, exist, are for the provider and have the
// version (fleet.CheckFollow). A plan the tenant follows already cannot
// have been deleted meanwhile (a plan's deletion is refused while a tenant
// or a move's target follows it), and needs no check.
func NewFollows(cur, next *Tenant) []Follow {
	var out []Follow
	if next.Plan != nil && (cur == nil || !samePlan(cur.Plan, next.Plan)) &&
		(cur == nil || !movedOnto(cur, next.Plan)) {
		out = append(out, Follow{Plan: *next.Plan, Provider: next.Provider})
	}
	for _, p := range next.Placements {
		m := p.Move
		if m == nil || m.Plan == nil || m.SwitchedAt != nil {
			continue
		}
		if q := placementOf(cur, p.Name); q == nil || q.Move == nil || q.Move.ID != m.ID {
			out = append(out, Follow{Plan: *m.Plan, Provider: m.To})
		}
	}
	return out
}

// movedOnto reports whether plan is the one a move of cur's targets, which
// a switch makes the tenant's: it was checked when the move started.
func movedOnto(cur *Tenant, plan *PlanRef) bool {
	for _, p := range cur.Placements {
		if p.Move != nil && p.Move.SwitchedAt == nil && samePlan(p.Move.Plan, plan) {
			return true
		}
	}
	return false
}

// placementOf is t's placement named name, nil when t is nil or has none.
func placementOf(t *Tenant, name string) *Placement {
	if t == nil {
		return nil
	}
	return t.Placement(name)
}
