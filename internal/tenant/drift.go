package tenant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
)

// DriftReport is the last drift the controller found in a tenant's
// workload: what differed from the declared state, when, and what was done
// about it.
type DriftReport struct {
	// DetectedAt is when the controller found the drift.
	DetectedAt time.Time `json:"detected_at"`
	// Generation is the desired generation it was compared with.
	Generation int64 `json:"generation"`
	// Policy is what was done: compute.DriftRepair (put back) or
	// compute.DriftObserve (reported only).
	Policy compute.DriftPolicy `json:"policy"`
	// Differences are the paths that differed, with the expected and found
	// values (secrets redacted).
	Differences []compute.Drift `json:"differences"`
}

// Same reports whether r reports the same differences as other, under the
// same policy and generation: a drift seen again, not a new one.
func (r *DriftReport) Same(other *DriftReport) bool {
	if r == nil || other == nil {
		return r == other
	}
	return r.Generation == other.Generation && r.Policy == other.Policy && slices.Equal(r.Differences, other.Differences)
}

// Describe is the report in full, for the drift_detected event: what was
// done and every difference.
func (r *DriftReport) Describe() string {
	what := "repairing"
	if r.Policy == compute.DriftObserve {
		what = "observed only (drift policy observe): not repaired"
	}
	parts := make([]string, len(r.Differences))
	for i, d := range r.Differences {
		parts[i] = d.String()
	}
	return fmt.Sprintf("drift at generation %d, %s: %s", r.Generation, what, strings.Join(parts, "; "))
}
