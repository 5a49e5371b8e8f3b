package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// ErrInvalid is the kind of the violations this package reports about a
// document it is given (malformed JSON, a value that must be an object);
// the compute framework reports them as an invalid compute spec.
var ErrInvalid = errors.New("invalid config")

// Merge deep-merges a tenant's compute_config over a provider's defaults, as
// a JSON Merge Patch (RFC 7396) of tenant applied to defaults: objects merge
// key by key, any other value (arrays included) replaces the default, and
// null removes the default's key. Empty or null defaults leave the tenant
// config as it is. Both documents must be JSON objects; a problem is a
// violation of kind ErrInvalid.
func Merge(defaults, tenant json.RawMessage) (json.RawMessage, error) {
	t, err := DecodeObject(tenant, "compute config")
	if err != nil {
		return nil, err
	}
	var d map[string]any
	if !jsonscan.IsNull(defaults) {
		if d, err = DecodeObject(defaults, "provider defaults"); err != nil {
			return nil, err
		}
	}
	return json.Marshal(MergeObjects(d, t))
}

// MergeObjects returns tenant merged over defaults as Merge describes,
// without changing either. The result shares no map with defaults; it may
// share values with tenant.
func MergeObjects(defaults, tenant map[string]any) map[string]any {
	return MergePatch(Clone(defaults), tenant).(map[string]any)
}

// MergePatch applies patch to target as RFC 7396 describes and returns the
// result. It may modify target.
func MergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = MergePatch(t[k], v)
	}
	return t
}

// Clone returns a deep copy of a decoded JSON value's maps and slices.
func Clone[T any](v T) T {
	return clone(any(v)).(T)
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := maps.Clone(v)
		if out == nil {
			out = map[string]any{}
		}
		for k, c := range out {
			out[k] = clone(c)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, c := range v {
			out[i] = clone(c)
		}
		return out
	default:
		return v
	}
}

// DecodeValue parses a JSON document keeping numbers exact (json.Number).
// Malformed JSON is a violation of kind ErrInvalid at the document root;
// what names the document in its message.
func DecodeValue(raw json.RawMessage, what string) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, violation.New(ErrInvalid, "", "%s is empty; it must be a JSON object", what)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, violation.New(ErrInvalid, "", "%s is not valid JSON: %v", what, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, violation.New(ErrInvalid, "", "%s has data after the JSON value", what)
	}
	return v, nil
}

// DecodeObject is DecodeValue for a document that must be a JSON object.
func DecodeObject(raw json.RawMessage, what string) (map[string]any, error) {
	v, err := DecodeValue(raw, what)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, violation.New(ErrInvalid, "", "%s must be a JSON object", what)
	}
	return obj, nil
}
