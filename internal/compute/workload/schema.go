package workload

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
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
func Schema(title string, properties map[string]json.RawMessage) (json.RawMessage, error) {
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
	doc["properties"] = props
	doc["required"] = []string{"image"}
	doc["patternProperties"] = map[string]any{"^x-": true}
	doc["additionalProperties"] = false
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("workload: schema: %w", err)
	}
	return out, nil
}
