package nomad

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/hashicorp/nomad/api"
)

// groupCount is the count field: a fixed number of allocations, which
// landlord registers and compares, or a range ({"min": N, "max": M}) whose
// count a scaler owns (the Nomad Autoscaler, or an operator's nomad job
// scale): landlord registers the job with min allocations at first, and
// afterwards registers it with the count it finds (kept within the range)
// and leaves the count out of what Inspect compares, so that it never
// fights the scaler.
type groupCount struct {
	fixed    int
	min, max int
	ranged   bool
}

func (c *groupCount) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		var r struct {
			Min *int `json:"min"`
			Max *int `json:"max"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return err
		}
		if r.Min == nil || r.Max == nil {
			return errors.New("a count range needs min and max")
		}
		*c = groupCount{min: *r.Min, max: *r.Max, ranged: true}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*c = groupCount{fixed: n}
	return nil
}

func (c groupCount) MarshalJSON() ([]byte, error) {
	if c.ranged {
		return fmt.Appendf(nil, `{"min":%d,"max":%d}`, c.min, c.max), nil
	}
	return strconv.AppendInt(nil, int64(c.fixed), 10), nil
}

// initial is the count a new job starts with: the fixed count, or the
// range's min.
func (c groupCount) initial() int {
	if c.ranged {
		return c.min
	}
	return c.fixed
}

// scaling is the group's scaling block of a range: Nomad then refuses a
// count outside it, from nomad job scale and from the autoscaler alike
// (the job specification's scaling block). A fixed count has none.
func (c groupCount) scaling() *api.ScalingPolicy {
	if !c.ranged {
		return nil
	}
	return &api.ScalingPolicy{Min: new(int64(c.min)), Max: new(int64(c.max)), Enabled: new(true)}
}

// keep is the count to register over a live count of a range: the live
// one, brought within the range (which may have changed since).
func (c groupCount) keep(live int) int {
	return min(max(live, c.min), c.max)
}

// countSchema is count's schema: an integer, or a range for a scaler.
const countSchema = `{"oneOf": [
	  {"type": "integer", "minimum": 0, "maximum": 1000},
	  {"type": "object", "properties": {"min": {"type": "integer", "minimum": 0, "maximum": 1000}, "max": {"type": "integer", "minimum": 0, "maximum": 1000}},
	   "required": ["min", "max"], "additionalProperties": false}],
	  "default": 1,
	  "description": "How many allocations of the tenant's task group run: a number landlord sets and keeps (nomad job scale by hand is drift, put back), or {\"min\": N, \"max\": M} when a scaler owns the count (the Nomad Autoscaler with a policy that targets the job's group tenant, or operators with nomad job scale): landlord then registers the job with min allocations at first, writes the group's scaling block with min and max so that Nomad refuses any count outside them, and afterwards keeps the count it finds and never compares it."}`
