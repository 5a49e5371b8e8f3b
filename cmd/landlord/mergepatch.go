package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// replacingPatch is the JSON merge patch (RFC 7396) that turns the object
// from into the object to: members to leaves out are null, objects in both
// are patched member by member, anything else that differs is to's. A
// secret that the API showed as "[redacted]" and that to holds so is left
// out of the patch, and keeps its value, as a replace keeps it.
func replacingPatch(from, to json.RawMessage) (json.RawMessage, error) {
	var a, b any
	if err := decodeNumbers(from, &a); err != nil {
		return nil, fmt.Errorf("read the tenant's compute_config: %w", err)
	}
	if err := decodeNumbers(to, &b); err != nil {
		return nil, fmt.Errorf("read --config: %w", err)
	}
	return json.Marshal(patchOf(a, b))
}

func patchOf(from, to any) any {
	fm, ok1 := from.(map[string]any)
	tm, ok2 := to.(map[string]any)
	if !ok1 || !ok2 {
		return to
	}
	out := map[string]any{}
	for k := range fm {
		if _, ok := tm[k]; !ok {
			out[k] = nil
		}
	}
	for k, tv := range tm {
		fv, ok := fm[k]
		switch {
		case ok && reflect.DeepEqual(fv, tv):
		case ok:
			out[k] = patchOf(fv, tv)
		default:
			out[k] = tv
		}
	}
	return out
}

func decodeNumbers(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// replacingPairs is the merge patch that turns the map from into to: each
// of to's pairs, and null for each key to leaves out.
func replacingPairs(from, to map[string]string) map[string]any {
	out := map[string]any{}
	for k := range from {
		out[k] = nil
	}
	for k, v := range to {
		out[k] = v
	}
	return out
}
