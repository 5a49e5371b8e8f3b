package compute_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

func mustWorkloadSchema(t *testing.T, props map[string]json.RawMessage) *compute.Schema {
	t.Helper()
	raw, err := workload.Schema("test", props)
	if err != nil {
		t.Fatal(err)
	}
	s, err := compute.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWorkloadSchemaViolations(t *testing.T) {
	s := mustWorkloadSchema(t, nil)
	tests := []struct {
		name   string
		config string
		want   []violation.Violation
	}{
		{
			name:   "acceptance: three violations",
			config: `{"image": 5, "ports":[{"container_port":"x"}], "bogus": 1}`,
			want: []violation.Violation{
				{Pointer: "/bogus", Message: `unknown field (extensions must start with "x-")`},
				{Pointer: "/image", Message: "must be a string, not a number"},
				{Pointer: "/ports/0/container_port", Message: "must be an integer, not a string"},
			},
		},
		{
			name:   "missing image",
			config: `{"env": {"A": "1"}}`,
			want:   []violation.Violation{{Pointer: "/image", Message: "is required"}},
		},
		{
			name:   "nested unknown field and range",
			config: `{"image": "a", "resources": {"cpu": 1, "memory_mib": 1}}`,
			want: []violation.Violation{
				{Pointer: "/resources/cpu", Message: `unknown field (extensions must start with "x-")`},
				{Pointer: "/resources/memory_mib", Message: "must be at least 6"},
			},
		},
		{
			name:   "sidecar needs a name",
			config: `{"image": "a", "sidecars": [{"image": "b"}]}`,
			want:   []violation.Violation{{Pointer: "/sidecars/0/name", Message: "is required"}},
		},
		{
			name:   "bad protocol",
			config: `{"image": "a", "ports": [{"container_port": 80, "protocol": "sctp"}]}`,
			want:   []violation.Violation{{Pointer: "/ports/0/protocol", Message: "value must be one of 'tcp', 'udp'"}},
		},
		{
			name:   "extensions are allowed",
			config: `{"image": "a", "x-team": {"anything": [1, 2]}, "ports": [{"container_port": 80, "x-note": "ok"}]}`,
		},
		{
			name:   "malformed JSON",
			config: `{"image": `,
			want:   []violation.Violation{{Pointer: "", Message: "compute config is not valid JSON: unexpected EOF"}},
		},
		{
			name:   "trailing data",
			config: `{"image": "a"} {}`,
			want:   []violation.Violation{{Pointer: "", Message: "compute config has data after the JSON value"}},
		},
		{
			name:   "not an object",
			config: `[1]`,
			want:   []violation.Violation{{Pointer: "", Message: "must be an object, not an array"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate(json.RawMessage(tt.config))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, provider.ErrInvalidSpec) {
				t.Fatalf("Validate = %v, want an error wrapping ErrInvalidSpec", err)
			}
			if diff := cmp.Diff(tt.want, violation.Of(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileSchemaRefusesBadSchemas(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":        `{`,
		"bad type":        `{"type": "thing"}`,
		"remote ref":      `{"$ref": "https://example.com/schema.json"}`,
		"bad pattern":     `{"pattern": "("}`,
		"bad minimum":     `{"minimum": "five"}`,
		"unresolved $ref": `{"$ref": "#/$defs/missing"}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := compute.CompileSchema(json.RawMessage(doc)); err == nil {
				t.Errorf("CompileSchema(%s) succeeded", doc)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	s := mustWorkloadSchema(t, map[string]json.RawMessage{
		"api_key": json.RawMessage(`{"type": "string", "writeOnly": true}`),
	})
	raw := json.RawMessage(`{
		"$defs": {"cred": {"type": "object", "properties": {"user": {"type": "string"}, "password": {"type": "string", "writeOnly": true}}}},
		"type": "object",
		"properties": {
			"credential": {"$ref": "#/$defs/cred"},
			"list": {"type": "array", "items": {"type": "string", "writeOnly": true}},
			"either": {"anyOf": [{"type": "string", "writeOnly": true}, {"type": "number"}]}
		}
	}`)
	own, err := compute.CompileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		schema *compute.Schema
		in     string
		want   string
	}{
		{
			name:   "secrets values, main and sidecar",
			schema: s,
			in:     `{"image":"a","env":{"A":"visible"},"secrets":{"DB":"hunter2"},"sidecars":[{"name":"b","image":"b","secrets":{"TOKEN":"t0k"}}],"api_key":"k3y","x-other":"kept"}`,
			want:   `{"api_key":"[redacted]","env":{"A":"visible"},"image":"a","secrets":{"DB":"[redacted]"},"sidecars":[{"image":"b","name":"b","secrets":{"TOKEN":"[redacted]"}}],"x-other":"kept"}`,
		},
		{
			name:   "through $ref, items and anyOf",
			schema: own,
			in:     `{"credential":{"user":"u","password":"p"},"list":["a","b"],"either":7,"free":"x"}`,
			want:   `{"credential":{"password":"[redacted]","user":"u"},"either":"[redacted]","free":"x","list":["[redacted]","[redacted]"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.schema.Redact(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Redact =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
	// Configs that fail validation are logged and echoed too: a value whose
	// shape the schema cannot follow is redacted whole when a secret may be
	// inside.
	for in, want := range map[string]string{
		`{"image":"a","secrets":"hunter2"}`:                           `{"image":"a","secrets":"[redacted]"}`,
		`{"image":"a","secrets":["hunter2"]}`:                         `{"image":"a","secrets":"[redacted]"}`,
		`{"image":"a","sidecars":{"secrets":{"A":"hunter2"}}}`:        `{"image":"a","sidecars":"[redacted]"}`,
		`{"image":"a","sidecars":[{"name":"b","secrets":"hunter2"}]}`: `{"image":"a","sidecars":[{"name":"b","secrets":"[redacted]"}]}`,
		`{"image":"a","env":["not","secret"]}`:                        `{"image":"a","env":["not","secret"]}`, // nothing secret: as is
	} {
		got, err := s.Redact(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("Redact(%s) = %s, want %s", in, got, want)
		}
	}
	if _, err := s.Redact(json.RawMessage(`{`)); !errors.Is(err, provider.ErrInvalidSpec) {
		t.Errorf("Redact of malformed JSON = %v", err)
	}
}

// A config that names no property leading to a secret is returned as it is,
// without decoding; any other is walked. Both give what the walk gives.
func TestRedactSkipsConfigsWithoutSecrets(t *testing.T) {
	s := mustWorkloadSchema(t, nil)
	for in, want := range map[string]string{
		`{"image":"a","env":{"A":"1"},"ports":[{"container_port":80}]}`: `{"image":"a","env":{"A":"1"},"ports":[{"container_port":80}]}`,
		`{"image":"a","env":{"secrets":"not one"}}`:                     `{"env":{"secrets":"not one"},"image":"a"}`,
		// Escapes spell names the raw text does not show.
		`{"image":"a","\u0073ecrets":{"A":"hunter2"}}`:                                 `{"image":"a","secrets":{"A":"[redacted]"}}`,
		`{"image":"a","sidecars":[{"name":"b","image":"b","\u0073ecrets":{"T":"t"}}]}`: `{"image":"a","sidecars":[{"image":"b","name":"b","secrets":{"T":"[redacted]"}}]}`,
	} {
		got, err := s.Redact(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("Redact(%s) = %s, want %s", in, got, want)
		}
	}
	// A secret reached without a named property: every config is walked.
	open, err := compute.CompileSchema(json.RawMessage(`{"type":"object","additionalProperties":{"type":"string","writeOnly":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := open.Redact(json.RawMessage(`{"anything":"hunter2"}`)); err != nil || string(got) != `{"anything":"[redacted]"}` {
		t.Errorf("Redact with secrets under additionalProperties = %s, %v", got, err)
	}
	for _, bad := range []string{``, ` `, `{`, `{"image":"a"} x`} {
		if _, err := s.Redact(json.RawMessage(bad)); !errors.Is(err, provider.ErrInvalidSpec) {
			t.Errorf("Redact(%q) = %v, want ErrInvalidSpec", bad, err)
		}
	}
}

func TestWorkloadSchemaRefusesSharedFieldNames(t *testing.T) {
	_, err := workload.Schema("test", map[string]json.RawMessage{"image": json.RawMessage(`{"type":"string"}`)})
	if err == nil || !strings.Contains(err.Error(), `"image"`) {
		t.Fatalf("WorkloadSchema with a clashing property = %v", err)
	}
	// An invalid property schema is caught where schemas are compiled: at
	// registration.
	raw, err := workload.Schema("test", map[string]json.RawMessage{"extra": json.RawMessage(`{"type":"nonsense"}`)})
	if err == nil {
		_, err = compute.CompileSchema(raw)
	}
	if err == nil {
		t.Fatal("a workload schema with an invalid property schema compiled")
	}
}

func TestViolationsNeverQuoteValues(t *testing.T) {
	s, err := compute.CompileSchema(json.RawMessage(`{
		"type": "object",
		"properties": {
			"password": {"type": "string", "writeOnly": true, "pattern": "^[a-z]+$", "format": "email"},
			"pin": {"type": "integer", "writeOnly": true, "minimum": 1000, "maximum": 9999, "multipleOf": 7},
			"code": {"const": "expected", "writeOnly": true}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, config := range []string{
		`{"password": "Hunter2!"}`,
		`{"pin": 123457}`,
		`{"pin": 12}`,
		`{"code": "Hunter2!"}`,
	} {
		err := s.Validate(json.RawMessage(config))
		if err == nil {
			t.Fatalf("Validate(%s) passed", config)
		}
		if strings.Contains(err.Error(), "Hunter2") || strings.Contains(err.Error(), "123457") || strings.Contains(err.Error(), " 12") {
			t.Errorf("Validate(%s) quotes the value: %v", config, err)
		}
	}
}

func TestKeepSecrets(t *testing.T) {
	s := mustWorkloadSchema(t, nil)
	prev := `{"image":"a","secrets":{"DB":"hunter2","OLD":"x"},"sidecars":[{"name":"s1","image":"b","secrets":{"T":"one"}},{"name":"s2","image":"b","secrets":{"T":"two"}}]}`
	// s1 is removed: s2's redacted secret must be s2's, not the first item's.
	next := `{"image":"a2","secrets":{"DB":"[redacted]"},"env":{"E":"[redacted]"},"sidecars":[{"name":"s2","image":"b","secrets":{"T":"[redacted]"}}]}`
	keep := func(next string) (json.RawMessage, error) {
		var v any
		if err := json.Unmarshal([]byte(next), &v); err != nil {
			t.Fatal(err)
		}
		if _, err := s.KeepSecrets(v, json.RawMessage(prev)); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	}
	got, err := keep(next)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"env":{"E":"[redacted]"},"image":"a2","secrets":{"DB":"hunter2"},"sidecars":[{"image":"b","name":"s2","secrets":{"T":"two"}}]}`
	if string(got) != want {
		t.Errorf("KeepSecrets =\n %s\nwant\n %s", got, want)
	}
	_, err = keep(`{"image":"a","secrets":{"NEW":"[redacted]"}}`)
	if v := violation.Of(err); len(v) != 1 || v[0].Pointer != "/secrets/NEW" {
		t.Errorf("a redacted secret with nothing to keep = %v, want a violation at /secrets/NEW", err)
	}
}
