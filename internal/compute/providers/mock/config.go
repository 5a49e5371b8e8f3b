package mock

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Name is the provider's name.
const Name = "mock"

// Settings are the provider's own keys in its configuration block.
type Settings struct {
	// Latency is added to every operation.
	Latency workload.Duration `json:"latency"`
	// FailureRate is the fraction (0 to 1) of operations that fail with a
	// retryable error.
	FailureRate float64 `json:"failure_rate"`
}

// Behaviour is what a tenant asks of the mock through "x-mock".
type Behaviour struct {
	// Fail is "transient" or "terminal"; empty means no injected failure.
	Fail string `json:"fail,omitempty"`
	// FailTimes is how many calls of each listed operation fail; 0 means all.
	FailTimes int `json:"fail_times,omitempty"`
	// Latency is added to each of the tenant's operations.
	Latency string `json:"latency,omitempty"`
	// Operations are the operations Fail applies to; empty means provision
	// and update.
	Operations []Operation `json:"operations,omitempty"`
	// StartAfter keeps a provisioned or updated workload pending (starting)
	// for this long, as platforms that start workloads asynchronously do.
	StartAfter string `json:"start_after,omitempty"`
	// Progress is reported (provider.ReportProgress) at the start of each
	// provision and update, before the latency, as a long step would.
	Progress string `json:"progress,omitempty"`
	// Listen serves each port on a real listener on 127.0.0.1 (its
	// host_port when set) that answers with a line naming the workload, and
	// reports its address; without it an endpoint is a mock:// name nothing
	// answers on.
	Listen bool `json:"listen,omitempty"`
}

// Operation names a provider operation, for call counts and injected
// failures.
type Operation string

// Operations the mock counts.
const (
	OpProvision Operation = "provision"
	OpUpdate    Operation = "update"
	OpDestroy   Operation = "destroy"
	OpStatus    Operation = "status"
)

// behaviourSchema is the JSON Schema of "x-mock".
const behaviourSchema = `{
  "type": "object",
  "description": "Behaviour the mock provider simulates for this tenant.",
  "properties": {
    "fail": {"enum": ["transient", "terminal"], "description": "Make operations fail with a retryable (transient) or permanent (terminal) error."},
    "fail_times": {"type": "integer", "minimum": 0, "description": "Fail only the first N calls of each operation; 0 fails them all."},
    "latency": {"$ref": "#/$defs/duration", "description": "Delay added to each operation."},
    "start_after": {"$ref": "#/$defs/duration", "description": "Keep the workload starting (pending) this long after each provision or update."},
    "progress": {"type": "string", "maxLength": 200, "description": "A progress message reported at the start of each provision and update, before the latency."},
    "listen": {"type": "boolean", "description": "Serve each port on a real listener on 127.0.0.1 (its host_port when set) that answers with a line naming the workload, and report its address; without it an endpoint is a mock:// name nothing answers on."},
    "operations": {
      "type": "array",
      "items": {"enum": ["provision", "update", "destroy", "status"]},
      "uniqueItems": true,
      "description": "Operations that fail; default provision and update."
    }
  },
  "additionalProperties": false
}`

func configSchema() (json.RawMessage, error) {
	return workload.Schema(Name, map[string]json.RawMessage{"x-mock": json.RawMessage(behaviourSchema)})
}

// tenantOptions are the mock's own fields of a tenant config, which
// DecodeConfig stores in the spec's Options.
type tenantOptions struct {
	Mock Behaviour `json:"x-mock"`
}

// behaviourOf returns what a resolved spec asks of the mock.
func behaviourOf(spec *provider.TenantComputeSpec) Behaviour {
	o, _ := spec.Options.(tenantOptions)
	return o.Mock
}

// key identifies the behaviour, so that fail_times counts per behaviour.
func (b Behaviour) key() string {
	k, _ := json.Marshal(b)
	return string(k)
}

func (b Behaviour) latency() time.Duration { return parseDuration(b.Latency) }

func (b Behaviour) startAfter() time.Duration { return parseDuration(b.StartAfter) }

func parseDuration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

// failsOn reports whether the n-th call (1-based) of op fails.
func (b Behaviour) failsOn(op Operation, n int) bool {
	if b.Fail == "" {
		return false
	}
	ops := b.Operations
	if len(ops) == 0 {
		ops = []Operation{OpProvision, OpUpdate}
	}
	for _, o := range ops {
		if o == op {
			return b.FailTimes == 0 || n <= b.FailTimes
		}
	}
	return false
}

func (b Behaviour) check() error {
	var errs violation.List
	for field, v := range map[string]string{"latency": b.Latency, "start_after": b.StartAfter} {
		if _, err := time.ParseDuration(v); v != "" && err != nil {
			errs.Add("/x-mock/"+field, "%q is not a duration such as 250ms", v)
		}
	}
	return errs.Err(provider.ErrInvalidSpec)
}

func (s Settings) check() error {
	if s.FailureRate < 0 || s.FailureRate > 1 {
		return fmt.Errorf("compute.mock: %w", provider.Invalid("/failure_rate", "%v is not a fraction between 0 and 1", s.FailureRate))
	}
	return nil
}
