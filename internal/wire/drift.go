package wire

import (
	"fmt"
	"time"
)

// Drift is the last difference the controller found between a tenant's
// declared state and what runs on its platform.
type Drift struct {
	// DetectedAt is when it was found.
	DetectedAt time.Time `json:"detected_at"`
	// Generation is the desired generation it was compared with.
	Generation int64 `json:"generation"`
	// Policy is what was done: "repair" (put back) or "observe"
	// (reported only), the tenant's drift policy.
	Policy string `json:"policy"`
	// Differences are the paths that differed.
	Differences []DriftDifference `json:"differences"`
	// ResolvedAt is when a check found the workload as declared again
	// (repaired, or undone by hand); absent while the drift is open.
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// DriftDifference is one path that differed. Secret values never appear:
// a differing secret reads "[redacted]".
type DriftDifference struct {
	// Path names what differed: "deployment/replicas",
	// "containers/app/image", "service" (a sub-object that was gone).
	Path string `json:"path"`
	// Kind sorts it: missing, scale, image, command, env, ports,
	// resources, health, network, placement, state or settings.
	Kind string `json:"kind"`
	// Expected is what the declared state asks for; absent for something
	// that should not exist.
	Expected string `json:"expected,omitempty"`
	// Found is what the platform held; absent when it was missing.
	Found string `json:"found,omitempty"`
}

// String is the difference as the controller words it in the
// drift_detected event and the CLI shows it: "containers/app/image:
// expected a, found b".
func (d DriftDifference) String() string {
	switch {
	case d.Found == "" && d.Expected == "":
		return d.Path + " differs"
	case d.Found == "":
		return fmt.Sprintf("%s: missing (expected %s)", d.Path, d.Expected)
	case d.Expected == "":
		return fmt.Sprintf("%s: unexpected %s", d.Path, d.Found)
	default:
		return fmt.Sprintf("%s: expected %s, found %s", d.Path, d.Expected, d.Found)
	}
}
