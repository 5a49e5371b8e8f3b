package ecs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// taskCount is desired_count: a fixed number of tasks, which landlord sets
// and compares, or a range ({"min": N, "max": M}) whose count ECS service
// auto scaling owns: landlord creates the service with min tasks and
// afterwards leaves desiredCount out of every UpdateService and out of what
// Inspect compares, so that it never fights the scaling policy.
type taskCount struct {
	fixed    int32
	min, max int32
	scaled   bool // a range: Application Auto Scaling owns the count
}

func (c *taskCount) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		var r struct {
			Min *int32 `json:"min"`
			Max *int32 `json:"max"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return err
		}
		if r.Min == nil || r.Max == nil {
			return fmt.Errorf("a desired_count range needs min and max")
		}
		*c = taskCount{min: *r.Min, max: *r.Max, scaled: true}
		return nil
	}
	var n int32
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*c = taskCount{fixed: n}
	return nil
}

func (c taskCount) MarshalJSON() ([]byte, error) {
	if c.scaled {
		return fmt.Appendf(nil, `{"min":%d,"max":%d}`, c.min, c.max), nil
	}
	return strconv.AppendInt(nil, int64(c.fixed), 10), nil
}

// initial is the count a new service starts with: the fixed count, or the
// range's min.
func (c taskCount) initial() int32 {
	if c.scaled {
		return c.min
	}
	return c.fixed
}

// desiredCountSchema is desired_count's schema: an integer, or a range for
// ECS service auto scaling.
const desiredCountSchema = `{"oneOf": [
	  {"type": "integer", "minimum": 0, "maximum": 5000},
	  {"type": "object", "properties": {"min": {"type": "integer", "minimum": 0, "maximum": 5000}, "max": {"type": "integer", "minimum": 0, "maximum": 5000}},
	   "required": ["min", "max"], "additionalProperties": false}],
	  "default": 1,
	  "description": "How many tasks the service runs: a number landlord sets and keeps (a change made by hand is drift, put back), or {\"min\": N, \"max\": M} when ECS service auto scaling (Application Auto Scaling) owns the count: landlord then creates the service with min tasks and never sets or compares desiredCount afterwards; register the scalable target with the same bounds."}`
