package jsonscan

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/sdk/violation"
)

// NULAt returns the pointer, under at, of the first string of raw (a JSON
// document) that holds U+0000, or of the object one of whose keys does; ""
// when none does, and at itself when raw is not valid JSON. PostgreSQL can
// store U+0000 neither in text nor in JSON, so landlord refuses it on every
// store, by pointer. In valid JSON, U+0000 can only be written as the
// escape \u0000, so raw is decoded only when it holds one.
func NULAt(raw []byte, at string) string {
	if !hasNULEscape(raw) {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return at
	}
	return findNUL(v, at)
}

// hasNULEscape reports whether JSON text holds the escape \u0000: a
// backslash that is not itself escaped, then u0000.
func hasNULEscape(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+5 < len(raw) && raw[i+1] == 'u' && string(raw[i+2:i+6]) == "0000" {
			return true
		}
		i++ // the escaped character
	}
	return false
}

// findNUL is NULAt on a decoded value; keys are visited in order, so that
// the pointer is the same every time.
func findNUL(v any, at string) string {
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return at
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if strings.ContainsRune(k, 0) {
				return at
			}
			if p := findNUL(v[k], at+"/"+violation.Escape(k)); p != "" {
				return p
			}
		}
	case []any:
		for i, child := range v {
			if p := findNUL(child, at+"/"+strconv.Itoa(i)); p != "" {
				return p
			}
		}
	}
	return ""
}
