package tenant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// DriftReport is the last drift the controller found in a tenant's
// workload: what differed from the declared state, when, and what was done
// about it.
type DriftReport struct {
	// DetectedAt is when the controller found the drift.
	DetectedAt time.Time `json:"detected_at"`
	// Generation is the desired generation it was compared with.
	Generation int64 `json:"generation"`
	// Policy is what was done: provider.DriftRepair (put back) or
	// provider.DriftObserve (reported only).
	Policy provider.DriftPolicy `json:"policy"`
	// Differences are the paths that differed, with the expected and found
	// values (secrets redacted).
	Differences []provider.Drift `json:"differences"`
	// ResolvedAt is when a check first found the workload as declared
	// again (repaired, or undone by hand); nil while the drift is open.
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// Open reports whether r is a drift not yet found resolved.
func (r *DriftReport) Open() bool { return r != nil && r.ResolvedAt == nil }

// News reports whether r, an open drift just found, is not the drift cur
// already records as open: a new drift, or one that came back after it
// was resolved. Only news is an event and counts in the metrics.
func (r *DriftReport) News(cur *DriftReport) bool {
	return !cur.Open() || !r.Same(cur)
}

// Resolved returns a copy of r resolved at now.
func (r *DriftReport) Resolved(now time.Time) *DriftReport {
	out := *r
	out.Differences = slices.Clone(r.Differences)
	out.ResolvedAt = &now
	return &out
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
	if r.Policy == provider.DriftObserve {
		what = "observed only (drift policy observe): not repaired"
	}
	parts := make([]string, len(r.Differences))
	for i, d := range r.Differences {
		parts[i] = d.String()
	}
	return fmt.Sprintf("drift at generation %d, %s: %s", r.Generation, what, strings.Join(parts, "; "))
}
