package main

import (
	"fmt"
	"strings"
)

// parsePairs reads repeated key=value flags into a map; nil when none are
// given. A pair without "=", with an empty key or given twice is a usage
// error.
func parsePairs(flag string, values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	for _, v := range values {
		k, val, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			return nil, withExitCode(exitUsage, fmt.Errorf("--%s %q: give key=value", flag, v))
		case hasKey(out, k):
			return nil, withExitCode(exitUsage, fmt.Errorf("--%s %s is given twice", flag, k))
		}
		out[k] = val
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
