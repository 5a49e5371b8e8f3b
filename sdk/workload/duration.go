package workload

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written as text such as "250ms" or "1m30s",
// in JSON strings and YAML scalars alike (it is an encoding.TextUnmarshaler),
// for provider settings and landlord's own configuration.
type Duration time.Duration

// UnmarshalText reads a duration such as "250ms"; a negative one is refused.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"250ms\" or \"1m30s\"", b)
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as text.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}
