package compute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled provider config schema.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
	// secretBelow holds the subschemas under which some value is writeOnly.
	secretBelow map[*jsonschema.Schema]bool
	// secretKeys are the quoted property names every secret lies under (see
	// secretKeysOf), or nil when some secret lies under none.
	secretKeys [][]byte
}

const schemaURL = "landlord:///compute/config.schema.json"

// CompileSchema compiles a JSON Schema document. Documents without "$schema"
// are read as draft 2020-12; a document that is not a valid schema, or that
// refers to another document ("$ref" to a URL), is an error.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("compute: parse schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // never fetch anything
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("compute: add schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("compute: compile schema: %w", err)
	}
	below := secretsBelow(compiled)
	return &Schema{raw: bytes.Clone(raw), compiled: compiled, secretBelow: below, secretKeys: secretKeysOf(compiled, below)}, nil
}

// Raw returns the schema document.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Validate checks config against the schema and returns a *ValidationError
// holding every violation, each with its JSON pointer, or nil.
func (s *Schema) Validate(config json.RawMessage) error {
	inst, err := decodeConfig(config, "compute config")
	if err != nil {
		return err
	}
	return s.validateValue(inst)
}

func (s *Schema) validateValue(inst any) error {
	err := s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return Invalid("", "cannot validate: %v", err)
	}
	out := &ValidationError{}
	collectViolations(verr, out)
	return out.Err()
}

// decodeConfig parses a JSON document keeping numbers exact. Malformed JSON
// is a ValidationError at the document root.
func decodeConfig(config json.RawMessage, what string) (any, error) {
	if len(bytes.TrimSpace(config)) == 0 {
		return nil, Invalid("", "%s is empty; it must be a JSON object", what)
	}
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Invalid("", "%s is not valid JSON: %v", what, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Invalid("", "%s has data after the JSON value", what)
	}
	return v, nil
}

var printer = message.NewPrinter(language.English)

// collectViolations flattens the library's error tree into one violation per
// leaf, worded for people and pointing at the field itself.
func collectViolations(e *jsonschema.ValidationError, out *ValidationError) {
	at := pointer(e.InstanceLocation...)
	if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
		// The causes describe the name, not a value. jsonschema v6.0.3 does
		// not copy the instance location of this error (validator.go, the
		// propertyNames branch), so it may name the wrong object; the message
		// names the key. Shared schemas check names in Go instead.
		var why []string
		for _, leaf := range leaves(e) {
			why = append(why, leaf.ErrorKind.LocalizedString(printer))
		}
		out.Add(at, "key %q is not an allowed name: %s", k.Property, strings.Join(why, "; "))
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			out.Add(at+"/"+pointerEscape(p), "unknown field (extensions must start with \"x-\")")
		}
	case *kind.Required:
		for _, p := range k.Missing {
			out.Add(at+"/"+pointerEscape(p), "is required")
		}
	case *kind.Type:
		out.Add(at, "must be %s, not %s", typeWords(k.Want), article(k.Got))
	case *kind.FalseSchema:
		out.Add(at, "is not allowed here")
	// The library's wording of these quotes the value, which may be a
	// secret; ours does not.
	case *kind.Pattern:
		out.Add(at, "does not match the pattern %s", k.Want)
	case *kind.Format:
		out.Add(at, "is not a valid %s", k.Want)
	case *kind.Const:
		out.Add(at, "is not the one allowed value")
	case *kind.Minimum:
		out.Add(at, "must be at least %s", k.Want.RatString())
	case *kind.Maximum:
		out.Add(at, "must be at most %s", k.Want.RatString())
	case *kind.ExclusiveMinimum:
		out.Add(at, "must be more than %s", k.Want.RatString())
	case *kind.ExclusiveMaximum:
		out.Add(at, "must be less than %s", k.Want.RatString())
	case *kind.MultipleOf:
		out.Add(at, "must be a multiple of %s", k.Want.RatString())
	default:
		out.Add(at, "%s", e.ErrorKind.LocalizedString(printer))
	}
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func typeWords(want []string) string {
	words := make([]string, len(want))
	for i, w := range want {
		words[i] = article(w)
	}
	return strings.Join(words, " or ")
}

func article(typ string) string {
	switch typ {
	case "object", "array", "integer":
		return "an " + typ
	case "null":
		return "null"
	default:
		return "a " + typ
	}
}

// Redact returns config with every value that the schema marks "writeOnly"
// replaced by RedactedValue, for logs and API responses. Values the schema
// does not describe are kept. Malformed JSON is an error.
func (s *Schema) Redact(config json.RawMessage) (json.RawMessage, error) {
	if s.secretKeys != nil && !mentionsAny(config, s.secretKeys) && json.Valid(config) && len(bytes.TrimSpace(config)) > 0 {
		return config, nil // no secret can be in it: most configs, read most often
	}
	inst, err := decodeConfig(config, "compute config")
	if err != nil {
		return nil, err
	}
	return json.Marshal(s.redact(inst, []*jsonschema.Schema{s.compiled}))
}

// KeepSecrets returns next with every secret (writeOnly) value that reads
// RedactedValue replaced by the value at the same place in prev, so that a
// client can send back a config it read, redacted, without erasing the
// secrets in it. Items of arrays of named objects (sidecars) are matched by
// name, others by position. A redacted secret with nothing to restore is a
// violation: "[redacted]" is never stored as a secret.
func (s *Schema) KeepSecrets(next, prev json.RawMessage) (json.RawMessage, error) {
	n, err := decodeConfig(next, "compute config")
	if err != nil {
		return nil, err
	}
	p, err := decodeConfig(prev, "stored compute config")
	if err != nil {
		p = nil
	}
	errs := &ValidationError{}
	out, err := json.Marshal(keepSecrets(n, p, []*jsonschema.Schema{s.compiled}, "", errs))
	if err != nil {
		return nil, err
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func keepSecrets(next, prev any, schemas []*jsonschema.Schema, at string, errs *ValidationError) any {
	applicable := expand(schemas)
	if str, ok := next.(string); ok && str == RedactedValue &&
		slices.ContainsFunc(applicable, func(s *jsonschema.Schema) bool { return s.WriteOnly }) {
		if prev == nil {
			errs.Add(at, "is %q but there is no stored secret to keep; send the secret itself", RedactedValue)
		}
		return prev
	}
	switch n := next.(type) {
	case map[string]any:
		p, _ := prev.(map[string]any)
		for k, child := range n {
			n[k] = keepSecrets(child, p[k], propertySchemas(applicable, k), at+"/"+pointerEscape(k), errs)
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
			n[i] = keepSecrets(child, pc, itemSchemas(applicable, i), fmt.Sprintf("%s/%d", at, i), errs)
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

// redact walks a value with every subschema that applies to it. A value
// under which the schema has a secret, but whose shape the schema cannot
// follow (a string where an object of secrets belongs, say), is redacted
// whole: a config that fails validation must not leak either.
func (s *Schema) redact(v any, schemas []*jsonschema.Schema) any {
	applicable := expand(schemas)
	secret := false
	for _, sub := range applicable {
		if sub.WriteOnly {
			return RedactedValue
		}
		secret = secret || s.secretBelow[sub]
	}
	switch v := v.(type) {
	case map[string]any:
		if secret && !slices.ContainsFunc(applicable, describesObject) {
			return RedactedValue
		}
		for k, child := range v {
			v[k] = s.redact(child, propertySchemas(applicable, k))
		}
	case []any:
		if secret && !slices.ContainsFunc(applicable, describesArray) {
			return RedactedValue
		}
		for i, child := range v {
			v[i] = s.redact(child, itemSchemas(applicable, i))
		}
	default:
		if secret {
			return RedactedValue
		}
	}
	return v
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

// propertyNames lists the names a schema's top level declares, sorted.
func (s *Schema) propertyNames() []string {
	names := make([]string, 0, len(s.compiled.Properties))
	for name := range s.compiled.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ValidateProviderConfig checks a spec's ProviderConfig against the schema
// and then with rules (a provider's ValidateConfig), with violations pointed
// at /provider_config, for providers' Validate.
func (s *Schema) ValidateProviderConfig(config json.RawMessage, rules func(json.RawMessage) error) error {
	if len(config) == 0 {
		return nil
	}
	err := s.Validate(config)
	if err == nil {
		err = rules(config)
	}
	var verr *ValidationError
	if errors.As(err, &verr) {
		return verr.Prefixed("/provider_config")
	}
	return err
}
