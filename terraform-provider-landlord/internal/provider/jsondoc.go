package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// redacted is what landlord shows in place of a secret (a value its
// provider's schema marks writeOnly), and what keeps a stored secret when
// sent back.
const redacted = "[redacted]"

// decodeJSON decodes a JSON document, keeping numbers as written.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

// decodeObject decodes a JSON object; what is another JSON value or not
// JSON at all is an error that says so.
func decodeObject(raw []byte) (map[string]any, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// encodeJSON encodes v compactly, with object keys sorted: the form
// landlord answers with, so that the state reads as the API does.
func encodeJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// v came from decodeJSON, or is built of its kinds of values.
		panic(fmt.Sprintf("provider: encode JSON: %v", err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonEqual reports whether two decoded documents are the same JSON:
// key order does not matter, and numbers are equal by value (1 and 1.0).
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && len(a) == len(b) && !slices.ContainsFunc(slices.Collect(maps.Keys(a)), func(k string) bool {
			bv, ok := b[k]
			return !ok || !jsonEqual(a[k], bv)
		})
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonEqual)
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	default: // string, bool, nil
		return a == b
	}
}

// mergePatch applies patch to doc as a JSON merge patch (RFC 7396), the
// way landlord merges a provider's defaults under a tenant's config:
// objects merge member by member, null removes, anything else replaces.
func mergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	d, ok := doc.(map[string]any)
	if !ok {
		d = map[string]any{}
	}
	out := maps.Clone(d)
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// mergeDiff returns the JSON merge patch that makes cur into want, and
// whether there is any change: members cur has and want lacks are null,
// objects are compared member by member, anything else is replaced whole
// when it differs. want must hold no null (a merge patch cannot set one).
func mergeDiff(cur, want any) (any, bool) {
	c, okc := cur.(map[string]any)
	w, okw := want.(map[string]any)
	if !okc || !okw {
		return want, !jsonEqual(cur, want)
	}
	patch := map[string]any{}
	for k := range c {
		if _, ok := w[k]; !ok {
			patch[k] = nil
		}
	}
	for k, wv := range w {
		cv, ok := c[k]
		if !ok {
			patch[k] = wv
			continue
		}
		if p, changed := mergeDiff(cv, wv); changed {
			patch[k] = p
		}
	}
	return patch, len(patch) > 0
}

// pointerTokens splits an RFC 6901 JSON pointer into its reference tokens.
func pointerTokens(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", pointer)
	}
	tokens := strings.Split(pointer[1:], "/")
	for i, t := range tokens {
		tokens[i] = violation.Unescape(t)
	}
	return tokens, nil
}

// setPointer sets the value at pointer in doc, making the objects on its
// way that are missing. An array on the way must already hold the index.
func setPointer(doc map[string]any, pointer string, value any) error {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return err
	}
	if len(tokens) == 0 {
		return errors.New("the pointer names the whole compute_config, not a member of it")
	}
	var at any = doc
	for i, tok := range tokens {
		last := i == len(tokens)-1
		switch node := at.(type) {
		case map[string]any:
			if last {
				node[tok] = value
				return nil
			}
			next, ok := node[tok]
			if !ok || next == nil {
				next = map[string]any{}
				node[tok] = next
			}
			at = next
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(node) || strconv.Itoa(n) != tok {
				return fmt.Errorf("%s: %q is not an index of the array there (it has %d items)", pointer, tok, len(node))
			}
			if last {
				node[n] = value
				return nil
			}
			at = node[n]
		default:
			return fmt.Errorf("%s: %s is not an object or an array", pointer, "/"+strings.Join(tokens[:i], "/"))
		}
	}
	return nil
}

// pointerOf escapes tokens into a JSON pointer.
func pointerOf(tokens []string) string { return violation.Pointer(tokens...) }

// withoutRedacted returns v without the secrets landlord shows as
// "[redacted]": a member whose value is that string is left out, and so
// is an object that held nothing else. Arrays keep their items.
func withoutRedacted(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if x == redacted {
				continue
			}
			if obj, ok := x.(map[string]any); ok && len(obj) > 0 {
				stripped := withoutRedacted(obj).(map[string]any)
				if len(stripped) == 0 {
					continue
				}
				out[k] = stripped
				continue
			}
			out[k] = withoutRedacted(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutRedacted(x)
		}
		return out
	default:
		return v
	}
}

// pointersWhere returns the pointers of the values in v, members and
// items at any depth, that match, in key and index order.
func pointersWhere(v any, match func(any) bool) []string {
	var found []string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		if match(v) {
			found = append(found, pointerOf(at))
		}
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k], append(slices.Clip(at), k))
			}
		case []any:
			for i, x := range v {
				walk(x, append(slices.Clip(at), strconv.Itoa(i)))
			}
		}
	}
	walk(v, nil)
	return found
}

// redactedPointers returns the pointers of the secrets in shown, a config
// as landlord shows it: the places that hold "[redacted]".
func redactedPointers(shown any) []string {
	return pointersWhere(shown, func(x any) bool { return x == redacted })
}

// nullPointers returns the pointers of the nulls in v.
func nullPointers(v any) []string {
	return pointersWhere(v, func(x any) bool { return x == nil })
}

// valueAt returns the value at pointer in doc, if there is one.
func valueAt(doc any, pointer string) (any, bool) {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return nil, false
	}
	at := doc
	for _, tok := range tokens {
		switch node := at.(type) {
		case map[string]any:
			v, ok := node[tok]
			if !ok {
				return nil, false
			}
			at = v
		case []any:
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(node) {
				return nil, false
			}
			at = node[n]
		default:
			return nil, false
		}
	}
	return at, true
}

// clearSecrets returns the pointers at which shown, a config as landlord
// shows it (secrets "[redacted]"), has a secret that given, the config as
// sent, holds in clear.
func clearSecrets(given, shown any) []string {
	var found []string
	for _, p := range redactedPointers(shown) {
		if v, ok := valueAt(given, p); ok && v != redacted {
			found = append(found, p)
		}
	}
	return found
}

// withSecrets returns config with each secret of secrets (JSON pointer
// into config → value) set in it. config is not changed.
func withSecrets(config map[string]any, secrets map[string]string) (map[string]any, error) {
	if len(secrets) == 0 {
		return config, nil
	}
	out := cloneObject(config)
	for _, p := range slices.Sorted(maps.Keys(secrets)) {
		if err := setPointer(out, p, secrets[p]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cloneObject is a deep copy of a decoded object.
func cloneObject(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneObject(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneValue(x)
		}
		return out
	default:
		return v
	}
}

// rawJSON encodes a decoded document for a request body.
func rawJSON(v any) json.RawMessage { return json.RawMessage(encodeJSON(v)) }

// providerOf is the compute_provider member of a config: the provider it
// asks for, "" when it leaves the choice to landlord's default.
func providerOf(config map[string]any) string {
	p, _ := config["compute_provider"].(string)
	return p
}

// problemOf returns the API's problem in err, if err is an answer of the
// API that is not a success.
func problemOf(err error) (*client.Error, bool) {
	var e *client.Error
	ok := errors.As(err, &e)
	return e, ok
}
