package compute

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Redact returns config with every value that the schema marks "writeOnly"
// replaced by workload.RedactedValue, for logs and API responses. Values the
// schema does not describe are kept. Malformed JSON is an error.
func (s *Schema) Redact(config json.RawMessage) (json.RawMessage, error) {
	if s.secretKeys != nil && !mentionsAny(config, s.secretKeys) && json.Valid(config) && len(bytes.TrimSpace(config)) > 0 {
		return config, nil // no secret can be in it: most configs, read most often
	}
	inst, err := workload.DecodeValue(config, "compute config")
	if err != nil {
		return nil, provider.AsInvalidSpec(err)
	}
	return json.Marshal(s.redact(inst, []*jsonschema.Schema{s.compiled}))
}

// mayHoldRedacted reports whether a config's text may hold a secret sent
// back as workload.RedactedValue, which KeepSecrets restores.
func mayHoldRedacted(config []byte) bool {
	return bytes.Contains(config, []byte(workload.RedactedValue)) || bytes.IndexByte(config, '\\') >= 0
}

// KeepSecrets replaces, in the decoded config next, every secret (writeOnly)
// value that reads workload.RedactedValue by the value at the same place in
// prev, the stored config, so that a client can send back a config it read,
// redacted, without erasing the secrets in it. Items of arrays of named
// objects (sidecars) are matched by name, others by position. A redacted
// secret with nothing to restore is a violation: "[redacted]" is never
// stored as a secret. It reports whether it restored any value.
func (s *Schema) KeepSecrets(next any, prev json.RawMessage) (bool, error) {
	p, err := workload.DecodeValue(prev, "stored compute config")
	if err != nil {
		p = nil
	}
	k := &keeper{}
	keepSecrets(next, p, []*jsonschema.Schema{s.compiled}, "", k)
	return k.restored > 0, k.errs.Err(provider.ErrInvalidSpec)
}

// keeper is what keepSecrets found: how many secrets it restored, and the
// redacted secrets it could not.
type keeper struct {
	restored int
	errs     violation.List
}

func keepSecrets(next, prev any, schemas []*jsonschema.Schema, at string, k *keeper) any {
	applicable := expand(schemas)
	if str, ok := next.(string); ok && str == workload.RedactedValue &&
		slices.ContainsFunc(applicable, func(s *jsonschema.Schema) bool { return s.WriteOnly }) {
		if prev == nil {
			k.errs.Add(at, "is %q but there is no stored secret to keep; send the secret itself", workload.RedactedValue)
		} else {
			k.restored++
		}
		return prev
	}
	switch n := next.(type) {
	case map[string]any:
		p, _ := prev.(map[string]any)
		for key, child := range n {
			n[key] = keepSecrets(child, p[key], propertySchemas(applicable, key), at+"/"+violation.Escape(key), k)
		}
	case []any:
		p, _ := prev.([]any)
		byName := namedItems(p)
		for i, child := range n {
			var pc any
			if name, ok := itemName(child); ok && byName != nil {
				pc = byName[name]
			} else if byName == nil && i < len(p) {
				pc = p[i]
			}
			n[i] = keepSecrets(child, pc, itemSchemas(applicable, i), fmt.Sprintf("%s/%d", at, i), k)
		}
	}
	return next
}

// namedItems indexes an array of objects by their "name"; nil when its
// items are not all named objects.
func namedItems(items []any) map[string]any {
	if len(items) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, it := range items {
		name, ok := itemName(it)
		if !ok {
			return nil
		}
		out[name] = it
	}
	return out
}

func itemName(v any) (string, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	name, ok := obj["name"].(string)
	return name, ok
}

// redact replaces every secret of v by workload.RedactedValue.
func (s *Schema) redact(v any, schemas []*jsonschema.Schema) any {
	w := &secretWalk{schema: s, fn: func(string, any) (any, error) { return workload.RedactedValue, nil }}
	out, _ := w.walk(v, schemas) // fn never fails
	return out
}

// secretWalk visits the secrets of a decoded config, the one walk that
// Redact and MapSecrets share.
type secretWalk struct {
	schema *Schema
	fn     func(pointer string, value any) (any, error)
	path   []string // escaped reference tokens of the value being walked
}

// walk visits v with every subschema that applies to it. A value under
// which the schema has a secret, but whose shape the schema cannot follow
// (a string where an object of secrets belongs, say), is a secret whole: a
// config that fails validation must not leak either. A value with no
// secret below it is returned as it is.
func (w *secretWalk) walk(v any, schemas []*jsonschema.Schema) (any, error) {
	applicable := expand(schemas)
	secret := false
	for _, sub := range applicable {
		if sub.WriteOnly {
			return w.fn(w.pointer(), v)
		}
		secret = secret || w.schema.secretBelow[sub]
	}
	if !secret {
		return v, nil
	}
	switch v := v.(type) {
	case map[string]any:
		if !slices.ContainsFunc(applicable, describesObject) {
			return w.fn(w.pointer(), v)
		}
		for k, child := range v {
			w.path = append(w.path, violation.Escape(k))
			out, err := w.walk(child, propertySchemas(applicable, k))
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return nil, err
			}
			v[k] = out
		}
	case []any:
		if !slices.ContainsFunc(applicable, describesArray) {
			return w.fn(w.pointer(), v)
		}
		for i, child := range v {
			w.path = append(w.path, strconv.Itoa(i))
			out, err := w.walk(child, itemSchemas(applicable, i))
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return nil, err
			}
			v[i] = out
		}
	default:
		return w.fn(w.pointer(), v)
	}
	return v, nil
}

// pointer is the JSON pointer of the value being walked.
func (w *secretWalk) pointer() string {
	if len(w.path) == 0 {
		return ""
	}
	return "/" + strings.Join(w.path, "/")
}

// MapSecrets calls fn with the JSON pointer and the value of every secret
// in the decoded config v (numbers as json.Number), and puts what fn
// returns in its place. A secret is what Redact replaces: a value the
// schema marks writeOnly, or a value under one whose shape the schema
// cannot follow, passed whole. It returns v with the replacements made
// (what fn returned, when v itself is a secret) and the first error of fn.
func (s *Schema) MapSecrets(v any, fn func(pointer string, value any) (any, error)) (any, error) {
	w := &secretWalk{schema: s, fn: fn}
	return w.walk(v, []*jsonschema.Schema{s.compiled})
}

// MayHoldSecrets reports whether config's text may hold a secret. It is
// false only when the text names none of the properties through which the
// schema's secrets are reached (most configs), so that a caller can skip
// decoding it.
func (s *Schema) MayHoldSecrets(config []byte) bool {
	return s.secretKeys == nil || mentionsAny(config, s.secretKeys)
}

func describesObject(s *jsonschema.Schema) bool {
	return len(s.Properties) > 0 || len(s.PatternProperties) > 0 || s.AdditionalProperties != nil || s.UnevaluatedProperties != nil
}

func describesArray(s *jsonschema.Schema) bool {
	return s.Items != nil || s.Items2020 != nil || len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil
}

// secretsBelow finds every subschema of root that is writeOnly or has a
// writeOnly subschema, iterating to a fixed point so that cycles through
// $ref are handled.
func secretsBelow(root *jsonschema.Schema) map[*jsonschema.Schema]bool {
	var all []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		for _, sub := range children(s) {
			visit(sub)
		}
	}
	visit(root)
	below := map[*jsonschema.Schema]bool{}
	for changed := true; changed; {
		changed = false
		for _, s := range all {
			if below[s] {
				continue
			}
			if s.WriteOnly || slices.ContainsFunc(children(s), func(c *jsonschema.Schema) bool { return below[c] }) {
				below[s] = true
				changed = true
			}
		}
	}
	return below
}

// children lists a schema's direct subschemas.
// secretKeysOf returns, quoted as in JSON text, the names of the properties
// through which root's secrets are reached: every path from root to a
// writeOnly value takes one of them as its first named property. It returns
// nil when some secret is reached without a named property (through
// additionalProperties of the root object, say).
func secretKeysOf(root *jsonschema.Schema, below map[*jsonschema.Schema]bool) [][]byte {
	names := map[string]bool{}
	seen := map[*jsonschema.Schema]bool{}
	unnamed := false
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] || !below[s] {
			return
		}
		seen[s] = true
		if s.WriteOnly {
			unnamed = true
			return
		}
		for name, sub := range s.Properties {
			if below[sub] {
				names[name] = true // a named step: the walk stops here
			}
		}
		for _, c := range unnamedChildren(s) {
			visit(c)
		}
	}
	visit(root)
	if unnamed {
		return nil
	}
	keys := make([][]byte, 0, len(names))
	for name := range names {
		quoted, _ := json.Marshal(name)
		keys = append(keys, quoted)
	}
	return keys
}

// mentionsAny reports whether config's text may name one of keys: it does
// when it holds one of them, quoted, or any escape sequence (a name can be
// spelled with escapes).
func mentionsAny(config []byte, keys [][]byte) bool {
	if bytes.IndexByte(config, '\\') >= 0 {
		return true
	}
	for _, k := range keys {
		if bytes.Contains(config, k) {
			return true
		}
	}
	return false
}

func children(s *jsonschema.Schema) []*jsonschema.Schema {
	out := unnamedChildren(s)
	for _, sub := range s.Properties {
		if sub != nil {
			out = append(out, sub)
		}
	}
	return out
}

// unnamedChildren are the subschemas of s other than its named properties.
func unnamedChildren(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.Items2020, s.UnevaluatedItems, s.UnevaluatedProperties, s.Contains, s.PropertyNames}
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.PrefixItems...)
	for _, sub := range s.PatternProperties {
		out = append(out, sub)
	}
	for _, sub := range s.DependentSchemas {
		out = append(out, sub)
	}
	for _, x := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := x.(type) {
		case *jsonschema.Schema:
			out = append(out, x)
		case []*jsonschema.Schema:
			out = append(out, x...)
		}
	}
	return slices.DeleteFunc(out, func(c *jsonschema.Schema) bool { return c == nil })
}

// expand adds the schemas that apply to the same value through references and
// combinators. Branches of anyOf, oneOf and if/then/else are all followed:
// redacting too much is safe, too little is not.
func expand(schemas []*jsonschema.Schema) []*jsonschema.Schema {
	seen := map[*jsonschema.Schema]bool{}
	var out []*jsonschema.Schema
	var add func(s *jsonschema.Schema)
	add = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
		add(s.Ref)
		add(s.RecursiveRef)
		if s.DynamicRef != nil {
			add(s.DynamicRef.Ref)
		}
		for _, group := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range group {
				add(sub)
			}
		}
		add(s.If)
		add(s.Then)
		add(s.Else)
		for _, sub := range s.DependentSchemas {
			add(sub)
		}
	}
	for _, s := range schemas {
		add(s)
	}
	return out
}

func propertySchemas(schemas []*jsonschema.Schema, name string) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range schemas {
		matched := false
		if sub, ok := s.Properties[name]; ok {
			out = append(out, sub)
			matched = true
		}
		for re, sub := range s.PatternProperties {
			if re.MatchString(name) {
				out = append(out, sub)
				matched = true
			}
		}
		if !matched {
			if sub, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
				out = append(out, sub)
			}
			if s.UnevaluatedProperties != nil {
				out = append(out, s.UnevaluatedProperties)
			}
		}
	}
	return out
}

func itemSchemas(schemas []*jsonschema.Schema, i int) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, s := range schemas {
		switch {
		case i < len(s.PrefixItems):
			out = append(out, s.PrefixItems[i])
		case s.Items2020 != nil:
			out = append(out, s.Items2020)
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			out = append(out, items)
		case []*jsonschema.Schema:
			if i < len(items) {
				out = append(out, items[i])
			} else if add, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
				out = append(out, add)
			}
		}
		if s.UnevaluatedItems != nil {
			out = append(out, s.UnevaluatedItems)
		}
	}
	return out
}
