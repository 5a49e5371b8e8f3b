package workload_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// The schema lists the container's fields as workload.schema.json declares
// them, then sidecars, networking and drift, then the provider's own by
// name: the order a form built from it keeps.
func TestSchemaKeepsTheDeclaredOrder(t *testing.T) {
	raw, err := workload.Schema("p", map[string]json.RawMessage{"zone": json.RawMessage(`{"type": "string"}`), "count": json.RawMessage(`{"type": "integer"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc.Properties))
	dec.Token()
	var keys []string
	for dec.More() {
		tok, _ := dec.Token()
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"name", "image", "command", "args", "env", "secrets", "ports", "health_check", "resources", "sidecars", "networking", "drift", "count", "zone"}
	if !slices.Equal(keys, want) {
		t.Errorf("properties in the order %v, want %v", keys, want)
	}
}
