package fleet

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// Plan is a named line of compute config versions for one provider.
type Plan struct {
	// Name is a lowercase DNS label, unique among plans.
	Name string `json:"name"`
	// Provider is the compute provider the plan's versions are written
	// for; a tenant on another provider cannot follow the plan.
	Provider    string `json:"provider"`
	Description string `json:"description,omitempty"`
	// Latest is the number of the newest version, 0 before the first is
	// published.
	Latest int64 `json:"latest_version"`
	// Current is the version a tenant that starts to follow the plan gets:
	// the first version published, then the target of each rollout that
	// completes. A newer version reaches tenants only through a rollout.
	Current   int64     `json:"current_version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// Version is one published version of a plan; it never changes.
type Version struct {
	Plan    string `json:"plan"`
	Version int64  `json:"version"`
	// Config is the fragment of compute_config the version sets: a JSON
	// object, valid against the plan provider's schema except that it need
	// not hold the fields the schema requires (a tenant's overrides may).
	Config json.RawMessage `json:"config"`
	// Message says what changed, optionally.
	Message   string    `json:"message,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// MaxDescription is the longest plan description or version message, in
// bytes.
const MaxDescription = 1024

// ValidatePlan checks the fields of a new plan, each at its JSON pointer.
func ValidatePlan(p *Plan) error {
	var errs violation.List
	if err := tenant.ValidateName(p.Name); err != nil {
		errs.Add("/name", "%s", strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": "))
	}
	if p.Provider == "" {
		errs.Add("/provider", "is required")
	}
	if len(p.Description) > MaxDescription {
		errs.Add("/description", "must be at most %d bytes", MaxDescription)
	}
	return errs.Err(ErrInvalid)
}
