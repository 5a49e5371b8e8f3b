package provider

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// DriftDetector is implemented by providers that compare what runs on the
// platform with what they wrote for a tenant. The controller asks it about
// every ready tenant (on each resync, and at once when a ChangeNotifier says
// the tenant's workload changed), so that a change made by hand with the
// platform's own tools is found and put back.
type DriftDetector interface {
	// Inspect reads the tenant's workload live, as GetStatus does, and
	// compares every object and field the provider writes for spec (counts,
	// images, commands, environment, ports, resources, health checks,
	// secrets and where they are mounted, sub-objects such as services,
	// secrets, network policies, variables, load balancers, networks and
	// port bindings) with what the platform holds now. It changes nothing.
	// A field that spec leaves to another controller (a scaling range
	// instead of a fixed count) is not compared. It returns an error
	// wrapping ErrTenantNotFound when nothing exists for the tenant.
	Inspect(ctx context.Context, spec *TenantComputeSpec) (*Inspection, error)
}

// Inspection is what Inspect found.
type Inspection struct {
	// Status is the workload's live status, as GetStatus reports it: its
	// endpoints are where it answers now.
	Status *ComputeStatus `json:"status"`
	// Drift lists every difference between the spec and the platform, in a
	// stable order; empty when what runs is what was declared.
	Drift []Drift `json:"drift,omitempty"`
}

// Drift is one difference between what a provider wrote for a tenant and
// what the platform holds. Secret values never appear in it: a differing
// secret reads RedactedValue.
type Drift struct {
	// Path names what differs, from the kind of object down to the field,
	// with "/" between: "deployment/replicas", "containers/app/image",
	// "containers/app/env/LOG_LEVEL", "service" for a sub-object that is
	// gone.
	Path string `json:"path"`
	// Kind sorts the difference for metrics and summaries.
	Kind DriftKind `json:"kind"`
	// Expected is what the spec asks for; empty for something that should
	// not exist.
	Expected string `json:"expected,omitempty"`
	// Found is what the platform holds; empty when it is missing.
	Found string `json:"found,omitempty"`
}

// String is the difference in words, as wire.DriftDifference words it
// for the API's clients.
func (d Drift) String() string {
	return wire.DriftDifference{Path: d.Path, Expected: d.Expected, Found: d.Found}.String()
}

// DriftKind sorts drift into a few kinds, the label of
// landlord_drift_detected_total.
type DriftKind string

// Drift kinds.
const (
	// DriftMissing: an object the provider writes is gone (a service, a
	// secret, a network policy, a variable, a network).
	DriftMissing DriftKind = "missing"
	// DriftScale: the number of instances (replicas, count, desired count).
	DriftScale DriftKind = "scale"
	// DriftImage: a container's image.
	DriftImage DriftKind = "image"
	// DriftCommand: a container's command or arguments.
	DriftCommand DriftKind = "command"
	// DriftEnv: a container's environment or secrets, or where secrets are
	// mounted.
	DriftEnv DriftKind = "env"
	// DriftPorts: ports, port bindings, services' ports, load balancers.
	DriftPorts DriftKind = "ports"
	// DriftResources: CPU and memory.
	DriftResources DriftKind = "resources"
	// DriftHealth: health checks and probes.
	DriftHealth DriftKind = "health"
	// DriftNetwork: networks, network policies, isolation.
	DriftNetwork DriftKind = "network"
	// DriftPlacement: an instance moved or its address changed.
	DriftPlacement DriftKind = "placement"
	// DriftState: the workload is gone, stopped, failed or not running.
	DriftState DriftKind = "state"
	// DriftSettings: any other field the provider writes (deployment
	// settings, labels, tags, quotas).
	DriftSettings DriftKind = "settings"
)

// DriftKinds lists every kind, for metrics.
var DriftKinds = []DriftKind{DriftMissing, DriftScale, DriftImage, DriftCommand, DriftEnv, DriftPorts,
	DriftResources, DriftHealth, DriftNetwork, DriftPlacement, DriftState, DriftSettings}

// DriftPolicy says what the controller does with drift.
type DriftPolicy string

// Drift policies, set by the "drift" field of a compute_config (or of a
// provider's configuration block, as every tenant's default).
const (
	// DriftRepair (the default) puts back what differs.
	DriftRepair DriftPolicy = "repair"
	// DriftObserve reports what differs and changes nothing.
	DriftObserve DriftPolicy = "observe"
)

// Summarize is drift in one line for status messages and events: the first
// few differences, and how many more there are.
func Summarize(drift []Drift) string {
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, d := range drift {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(drift)-shown))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}

// SortDrift orders drift by path, so that the same differences always read
// alike.
func SortDrift(drift []Drift) {
	slices.SortStableFunc(drift, func(a, b Drift) int { return strings.Compare(a.Path, b.Path) })
}

// DriftCollector gathers differences as a provider compares what it wrote
// with what it finds; its zero value is ready to use.
type DriftCollector struct {
	drift []Drift
}

// Compare records a difference at path when expected and found differ.
func (c *DriftCollector) Compare(path string, kind DriftKind, expected, found string) {
	if expected != found {
		c.drift = append(c.drift, Drift{Path: path, Kind: kind, Expected: expected, Found: found})
	}
}

// Missing records that the object at path, described by expected, is gone.
func (c *DriftCollector) Missing(path, expected string) {
	c.drift = append(c.drift, Drift{Path: path, Kind: DriftMissing, Expected: expected})
}

// CompareMap records, at prefix/key, every key whose value differs between
// expected and found, in kind. The values of keys that secret reports
// (nil for none) read RedactedValue, or nothing when they are missing.
func (c *DriftCollector) CompareMap(prefix string, kind DriftKind, expected, found map[string]string, secret func(key string) bool) {
	if maps.Equal(expected, found) {
		return // the common case, at no cost
	}
	keys := make([]string, 0, len(expected)+len(found))
	for k := range expected {
		keys = append(keys, k)
	}
	for k := range found {
		if _, ok := expected[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		want, inSpec := expected[k]
		got, live := found[k]
		if inSpec == live && want == got {
			continue
		}
		if secret != nil && secret(k) {
			want, got = redactPresent(want, inSpec), redactPresent(got, live)
		}
		c.drift = append(c.drift, Drift{Path: prefix + "/" + k, Kind: kind, Expected: want, Found: got})
	}
}

func redactPresent(v string, present bool) string {
	if !present {
		return ""
	}
	return workload.RedactedValue
}

// Add records d.
func (c *DriftCollector) Add(d Drift) { c.drift = append(c.drift, d) }

// Drift returns what was recorded, sorted by path; nil when nothing was.
func (c *DriftCollector) Drift() []Drift {
	if len(c.drift) == 0 {
		return nil
	}
	out := slices.Clone(c.drift)
	SortDrift(out)
	return out
}

// CompareContainers records how the containers found running differ from
// the spec's, container by container, at the shared paths
// ("containers/<name>/image", ".../env/<KEY>", ".../secrets/<KEY>", ...):
// for providers whose platform keeps the portable workload as it was
// given. Secret values are compared and never shown.
func (c *DriftCollector) CompareContainers(spec *TenantComputeSpec, found []workload.ContainerSpec, foundSecrets []workload.SecretReference) {
	live := make(map[string]workload.ContainerSpec, len(found))
	for _, f := range found {
		live[f.Name] = f
	}
	for _, want := range spec.Containers {
		at := "containers/" + want.Name
		got, ok := live[want.Name]
		if !ok {
			c.Missing(at, want.Image)
			continue
		}
		delete(live, want.Name)
		// Values are formatted only when they differ: a check of a
		// workload that runs as declared allocates nothing here.
		c.Compare(at+"/image", DriftImage, want.Image, got.Image)
		if !slices.Equal(want.Command, got.Command) {
			c.Compare(at+"/command", DriftCommand, quoteList(want.Command), quoteList(got.Command))
		}
		if !slices.Equal(want.Args, got.Args) {
			c.Compare(at+"/args", DriftCommand, quoteList(want.Args), quoteList(got.Args))
		}
		c.CompareMap(at+"/env", DriftEnv, want.Env, got.Env, nil)
		if !slices.Equal(want.Ports, got.Ports) {
			c.Compare(at+"/ports", DriftPorts, portList(want.Ports), portList(got.Ports))
		}
		if !reflect.DeepEqual(want.HealthCheck, got.HealthCheck) {
			c.Compare(at+"/health_check", DriftHealth, healthString(want.HealthCheck), healthString(got.HealthCheck))
		}
		if want.Resources != got.Resources {
			c.Compare(at+"/resources/cpu_millicores", DriftResources, number(want.Resources.CPUMillicores), number(got.Resources.CPUMillicores))
			c.Compare(at+"/resources/memory_mib", DriftResources, number(want.Resources.MemoryMiB), number(got.Resources.MemoryMiB))
		}
	}
	if !slices.Equal(spec.Secrets, foundSecrets) {
		for _, want := range spec.Containers {
			c.CompareMap("containers/"+want.Name+"/secrets", DriftEnv, secretsOf(spec.Secrets, want.Name), secretsOf(foundSecrets, want.Name), func(string) bool { return true })
		}
	}
	for name, extra := range live {
		c.Add(Drift{Path: "containers/" + name, Kind: DriftSettings, Found: extra.Image})
	}
}

// secretsOf returns the secret values of one container, by name.
func secretsOf(secrets []workload.SecretReference, container string) map[string]string {
	out := map[string]string{}
	for _, s := range secrets {
		if s.Container == container {
			out[s.Name] = s.Value.Reveal()
		}
	}
	return out
}
