package compute

import (
	"bytes"
	"encoding/json"
)

// MergeConfig deep-merges a tenant's compute_config over a provider's
// defaults, as a JSON Merge Patch (RFC 7396) of tenant applied to defaults:
// objects merge key by key, any other value (arrays included) replaces the
// default, and null removes the default's key. Empty or null defaults leave
// the tenant config as it is. Both documents must be JSON objects; a problem
// is a *ValidationError.
func MergeConfig(defaults, tenant json.RawMessage) (json.RawMessage, error) {
	t, err := decodeObject(tenant, "compute config")
	if err != nil {
		return nil, err
	}
	d := map[string]any{}
	if !isNull(defaults) {
		if d, err = decodeObject(defaults, "provider defaults"); err != nil {
			return nil, err
		}
	}
	return json.Marshal(MergePatch(d, t))
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

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// decodeObject parses a JSON object keeping numbers exact.
func decodeObject(raw json.RawMessage, what string) (map[string]any, error) {
	v, err := decodeConfig(raw, what)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Invalid("", "%s must be a JSON object", what)
	}
	return obj, nil
}
