package ui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// node is a JSON Schema as the form reads it: references resolved,
// properties in the order the form shows them. The form is built from the
// provider's schema alone: a provider that adds a field gets an input for
// it with no change here. What the schema says beyond the shape (patterns,
// bounds) is shown as help and checked by the API, never by the console.
type node struct {
	Type        string // object, array, string, integer, number, boolean; "" for an enum of any type
	Description string
	Enum        []any
	Default     any
	WriteOnly   bool
	Properties  []*property // objects with named properties
	// Values is the schema of the values of an object whose keys are free
	// (additionalProperties with a schema): a map, shown as key and value
	// rows.
	Values *node
	Items  *node // arrays
	// Hints are the schema's limits, said in words.
	Hints []string
}

type property struct {
	Name     string
	Required bool
	*node
}

// maxSchemaDepth bounds how deep the form follows a schema, so that a
// recursive one ends.
const maxSchemaDepth = 12

// parseSchema reads a provider's compute_config schema, keeping the order
// in which each object's properties are declared.
func parseSchema(raw json.RawMessage) (*node, error) {
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("ui: schema: %w", err)
	}
	root, ok := schemaValue(v, false).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ui: schema: not a JSON object")
	}
	return build(root, root, 0)
}

// schemaValue turns what decodeOrdered read into encoding/json's shapes
// (map[string]any, float64), except the value of a "properties" keyword,
// which stays an object: its members in the order the schema declares
// them, the last of a repeated name at the place of its first.
func schemaValue(v any, properties bool) any {
	switch v := v.(type) {
	case object:
		if properties {
			out := object{}
			at := map[string]int{}
			for _, m := range v {
				val := schemaValue(m.Value, false)
				if i, seen := at[m.Key]; seen {
					out[i].Value = val
					continue
				}
				at[m.Key] = len(out)
				out = append(out, member{Key: m.Key, Value: val})
			}
			return out
		}
		out := make(map[string]any, len(v))
		for _, m := range v {
			out[m.Key] = schemaValue(m.Value, m.Key == "properties")
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = schemaValue(e, false)
		}
		return out
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}

func build(root, s map[string]any, depth int) (*node, error) {
	if depth > maxSchemaDepth {
		return &node{}, nil
	}
	s, err := resolve(root, s)
	if err != nil {
		return nil, err
	}
	n := &node{Description: str(s["description"]), WriteOnly: s["writeOnly"] == true, Default: s["default"]}
	switch t := s["type"].(type) {
	case string:
		n.Type = t
	case []any: // ["string", "null"]: the first that is not null
		for _, e := range t {
			if e != "null" {
				n.Type = str(e)
				break
			}
		}
	}
	if e, ok := s["enum"].([]any); ok {
		n.Enum = e
	}
	if n.Type == "" && (s["properties"] != nil || s["additionalProperties"] != nil) {
		n.Type = "object"
	}
	if n.Type == "" && s["items"] != nil {
		n.Type = "array"
	}
	n.Hints = hints(s)
	switch n.Type {
	case "object":
		required, _ := s["required"].([]any)
		props, _ := s["properties"].(object)
		for _, p := range props {
			m, ok := p.Value.(map[string]any)
			if !ok {
				continue // true or false: nothing to fill in
			}
			child, err := build(root, m, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Key, err)
			}
			n.Properties = append(n.Properties, &property{Name: p.Key, Required: slices.Contains(required, any(p.Key)), node: child})
		}
		// Within a rank, the order the provider declared.
		slices.SortStableFunc(n.Properties, func(a, b *property) int { return cmp.Compare(a.rank(), b.rank()) })
		if m, ok := s["additionalProperties"].(map[string]any); ok {
			v, err := build(root, m, depth+1)
			if err != nil {
				return nil, err
			}
			n.Values = v
		}
	case "array":
		if m, ok := s["items"].(map[string]any); ok {
			it, err := build(root, m, depth+1)
			if err != nil {
				return nil, err
			}
			n.Items = it
		}
	}
	return n, nil
}

// rank orders the form: required fields first, then single values, lists
// of values, maps, and last the groups (objects and lists of objects);
// within each, the order the schema declares its properties in.
func (p *property) rank() int {
	switch {
	case p.Required:
		return 0
	case p.scalar():
		return 1
	case p.Type == "array" && (p.Items == nil || p.Items.scalar()):
		return 2
	case p.Type == "object" && p.Values != nil && len(p.Properties) == 0:
		return 3
	}
	return 4
}

func (n *node) scalar() bool {
	return n.Type == "string" || n.Type == "integer" || n.Type == "number" || n.Type == "boolean" || (n.Type == "" && n.Enum != nil)
}

// resolve follows a local $ref ("#/$defs/port"); the referring schema's own
// keywords (a "required" beside the $ref) win over the target's.
func resolve(root, s map[string]any) (map[string]any, error) {
	for range maxSchemaDepth {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, nil
		}
		target, err := lookup(root, ref)
		if err != nil {
			return nil, err
		}
		merged := map[string]any{}
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range s {
			if k != "$ref" {
				merged[k] = v
			}
		}
		if _, again := target["$ref"]; !again {
			delete(merged, "$ref")
		} else {
			merged["$ref"] = target["$ref"]
		}
		s = merged
	}
	return nil, fmt.Errorf("ui: schema: $ref chain longer than %d", maxSchemaDepth)
}

func lookup(root map[string]any, ref string) (map[string]any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("ui: schema: $ref %q is not local (#/...)", ref)
	}
	var cur any = root
	for _, seg := range strings.Split(path, "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch m := cur.(type) {
		case map[string]any:
			cur = m[seg]
		case object: // properties
			cur, _ = m.get(seg)
		default:
			return nil, fmt.Errorf("ui: schema: $ref %q does not resolve", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ui: schema: $ref %q does not resolve", ref)
	}
	return m, nil
}

// hints says a schema's limits in words, for the field's help.
func hints(s map[string]any) []string {
	var out []string
	num := func(k string) (string, bool) {
		v, ok := s[k].(float64)
		if !ok {
			return "", false
		}
		b, _ := json.Marshal(v)
		return string(b), true
	}
	lo, hasLo := num("minimum")
	hi, hasHi := num("maximum")
	switch {
	case hasLo && hasHi:
		out = append(out, lo+" to "+hi)
	case hasLo:
		out = append(out, "at least "+lo)
	case hasHi:
		out = append(out, "at most "+hi)
	}
	if n, ok := num("maxItems"); ok {
		out = append(out, "at most "+n+" items")
	}
	if n, ok := num("maxLength"); ok {
		out = append(out, "at most "+n+" characters")
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
