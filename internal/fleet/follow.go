package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// FoundPlan is what a store read of the plan a tenant is to follow, in the
// transaction that writes the tenant.
type FoundPlan struct {
	// Exists says the plan exists; Provider is its provider.
	Exists   bool
	Provider string
	// HasVersion says the plan has the version the tenant names.
	HasVersion bool
}

// CheckFollow is the rule both stores apply to a tenant's write that puts it
// on plan ref (its create, or a change of its plan): the plan must exist,
// be for the tenant's provider and have the version. It returns nil, or an
// error wrapping tenant.ErrPlanNotFound with a violation at /plan/name or
// /plan/version.
func CheckFollow(ref *tenant.PlanRef, provider string, found FoundPlan) error {
	switch {
	case !found.Exists:
		return violation.New(tenant.ErrPlanNotFound, "/plan/name", "there is no plan %s", ref.Name)
	case found.Provider != provider:
		return violation.New(tenant.ErrPlanNotFound, "/plan/name", "is a plan for provider %s, not %s", found.Provider, provider)
	case !found.HasVersion:
		return violation.New(tenant.ErrPlanNotFound, "/plan/version", "plan %s has no version %d", ref.Name, ref.Version)
	}
	return nil
}

// MaxNewcomersNamed is how many newcomers NewcomersError names.
const MaxNewcomersNamed = 5

// NewcomersError is the refusal of a rollout's completion while tenants
// that follow its plan and that it would take (Select's candidates)
// are not its members: ErrConflict, naming up to MaxNewcomersNamed
// of them (names) and counting them all (n).
func NewcomersError(r *Rollout, names []string, n int) error {
	named := strings.Join(names, ", ")
	if n > len(names) {
		named += fmt.Sprintf(" and %d more", n-len(names))
	}
	if r.Spec.Moves() {
		return fmt.Errorf("%w: rollout %s cannot complete: tenants follow plan %s and are not its members (%s); add them first",
			ErrConflict, r.ID, r.Spec.Plan, named)
	}
	return fmt.Errorf("%w: rollout %s cannot complete: tenants follow plan %s on another version than %d and are not its members (%s); add them first",
		ErrConflict, r.ID, r.Spec.Plan, r.Spec.To, named)
}

// VersionConfig is the rule both stores apply to a plan version they
// publish: its config must be a JSON object holding no U+0000 (PostgreSQL's
// JSONB cannot), and its message at most MaxDescription bytes; else
// an error wrapping ErrInvalid, not a failure of the database. It
// returns the config compacted.
func VersionConfig(config json.RawMessage, message string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, config); err != nil || b.Len() == 0 || b.Bytes()[0] != '{' {
		return nil, fmt.Errorf("%w: a version's config must be a JSON object", ErrInvalid)
	}
	if jsonscan.NULAt(b.Bytes(), "/config") != "" {
		return nil, fmt.Errorf("%w: a version's config must not hold NUL characters", ErrInvalid)
	}
	if len(message) > MaxDescription {
		return nil, fmt.Errorf("%w: a version's message must be at most %d bytes", ErrInvalid, MaxDescription)
	}
	return b.Bytes(), nil
}
