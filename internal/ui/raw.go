package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The editor takes the body as JSON, sent as it is, or as YAML, turned into
// JSON first; either way the API judges it.

// parseRaw reads the editor's text.
func parseRaw(text string) (any, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errors.New("the editor is empty: write the tenant as JSON or YAML")
	}
	if json.Valid([]byte(text)) {
		v, err := decodeOrdered([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("the JSON cannot be read: %w", err)
		}
		return v, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("the editor is empty: write the tenant as JSON or YAML")
	}
	return fromYAML(doc.Content[0], 0)
}

// fromYAML turns a YAML node into the console's JSON values, keeping the
// order of mappings.
func fromYAML(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("the YAML nests deeper than %d levels", maxDepth)
	}
	switch n.Kind {
	case yaml.MappingNode:
		o := object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be text", k.Line)
			}
			val, err := fromYAML(v, depth+1)
			if err != nil {
				return nil, err
			}
			o = append(o, member{Key: k.Value, Value: val})
		}
		return o, nil
	case yaml.SequenceNode:
		a := []any{}
		for _, c := range n.Content {
			v, err := fromYAML(c, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.AliasNode:
		// An alias would be copied where it is used, and aliases of
		// aliases multiply: a few hundred bytes can stand for millions of
		// values. A tenant has no need of them.
		return nil, fmt.Errorf("line %d: YAML aliases (*%s) are not taken; write the value out", n.Line, n.Value)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			return b, nil
		case "!!int", "!!float":
			var f any
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			b, err := json.Marshal(f)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
			}
			return json.Number(b), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: YAML of this kind cannot be JSON", n.Line)
}

// rawText is the body as the editor first shows it: indented JSON.
func rawText(body object) string {
	var b bytes.Buffer
	_ = json.Indent(&b, mustJSON(body), "", "  ")
	return b.String()
}
