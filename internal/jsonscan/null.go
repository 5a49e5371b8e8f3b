package jsonscan

import "bytes"

// IsNull reports whether raw, a JSON value or nothing, is null or empty:
// a member left out or given as null, which a merge patch and a config
// layer both read as "none".
func IsNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}
