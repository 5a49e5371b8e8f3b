package workload

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

//go:embed workload.schema.json
var fragment []byte

// Schema returns the compute_config schema of a provider that runs container
// workloads: the shared container fields at the top level (the main
// container), "sidecars" (more containers, each with a name), "networking"
// and "drift" (the drift policy), plus the provider's own top-level
// properties, each given as a JSON Schema. The schema is strict: unknown fields are rejected, except
// names starting with "x-", which are left for extensions. Provider
// properties may refer to the shared definitions ("#/$defs/duration"). The
// registry compiles it when the provider is registered.
//
// The properties are written in a useful order, which a form built from the
// schema keeps: the container's fields as workload.schema.json declares
// them (name, image, command, args, env, secrets, ports, health_check,
// resources), then sidecars, networking and drift, then the provider's
// own, by name.
func Schema(title string, properties map[string]json.RawMessage) (json.RawMessage, error) {
	return SchemaWith(title, properties, SchemaOptions{})
}

// SchemaOptions change what Schema writes.
type SchemaOptions struct {
	// ImageOptional leaves image out of required, for a provider that can
	// run a config without one (ECS runs a given task definition).
	ImageOptional bool
}

// SchemaWith is Schema with options.
func SchemaWith(title string, properties map[string]json.RawMessage, opts SchemaOptions) (json.RawMessage, error) {
	var doc map[string]any
	if err := json.Unmarshal(fragment, &doc); err != nil {
		return nil, fmt.Errorf("workload: schema: %w", err)
	}
	defs := doc["$defs"].(map[string]any)
	container := defs["container"].(map[string]any)
	props := maps.Clone(container["properties"].(map[string]any))
	props["sidecars"] = map[string]any{
		"type":        "array",
		"maxItems":    16,
		"items":       map[string]any{"$ref": "#/$defs/container", "required": []string{"name", "image"}},
		"description": "More containers that run beside the main one and reach it by name.",
	}
	props["networking"] = map[string]any{"$ref": "#/$defs/networking"}
	props["drift"] = map[string]any{
		"type": "string",
		"enum": []string{"repair", "observe"},
		"description": "What landlord does when what runs differs from this config (a field changed or an object deleted by hand): " +
			"repair (the default) puts it back; observe reports it in the tenant's status and history and changes nothing.",
	}
	for name, raw := range properties {
		if _, taken := props[name]; taken {
			return nil, fmt.Errorf("workload: schema: provider property %q is a shared workload field", name)
		}
		var sub any
		if err := json.Unmarshal(raw, &sub); err != nil {
			return nil, fmt.Errorf("workload: schema: property %q: %w", name, err)
		}
		props[name] = sub
	}
	delete(doc, "$comment")
	doc["$id"] = "https://landlord.dev/schemas/compute/" + title + ".json"
	doc["title"] = title + " compute_config"
	doc["type"] = "object"
	order, err := containerOrder()
	if err != nil {
		return nil, err
	}
	order = append(order, "sidecars", "networking", "drift")
	order = append(order, slices.Sorted(maps.Keys(properties))...)
	doc["properties"] = ordered{keys: order, values: props}
	if !opts.ImageOptional {
		doc["required"] = []string{"image"}
	}
	doc["patternProperties"] = map[string]any{"^x-": true}
	doc["additionalProperties"] = false
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("workload: schema: %w", err)
	}
	return out, nil
}

// containerOrder is the order workload.schema.json declares the
// container's properties in.
func containerOrder() ([]string, error) {
	var doc struct {
		Defs struct {
			Container struct {
				Properties json.RawMessage `json:"properties"`
			} `json:"container"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(fragment, &doc); err != nil {
		return nil, fmt.Errorf("workload: schema: %w", err)
	}
	return objectKeys(doc.Defs.Container.Properties)
}

// objectKeys lists the keys of a JSON object in the order they are
// written.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, fmt.Errorf("workload: schema: %w", err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("workload: schema: %w", err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("workload: schema: %w", err)
		}
	}
	return keys, nil
}

// ordered is a JSON object written with its keys in a given order (every
// key of values, each once).
type ordered struct {
	keys   []string
	values map[string]any
}

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
