package compute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/violation"
	"github.com/jaxxstorm/landlord/sdk/workload"
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
	// validations counts Validate calls, so that tests can prove a config
	// is validated once where it enters and once per reconcile.
	validations atomic.Int64
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

// Validate checks config against the schema and returns violations of kind
// ErrInvalidSpec, each with its JSON pointer, or nil.
func (s *Schema) Validate(config json.RawMessage) error {
	inst, err := workload.DecodeValue(config, "compute config")
	if err != nil {
		return provider.AsInvalidSpec(err)
	}
	return s.ValidateValue(inst)
}

// ValidateValue checks a decoded config (numbers as json.Number) against the
// schema, as Validate does.
func (s *Schema) ValidateValue(inst any) error {
	s.validations.Add(1)
	return violationsOf(s.compiled.Validate(inst)).Err(provider.ErrInvalidSpec)
}

// Validations returns how many configs the schema has validated.
func (s *Schema) Validations() int64 { return s.validations.Load() }

// violationsOf flattens a validation error of the schema library into
// violations; nil is none.
func violationsOf(err error) violation.List {
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return violation.List{{Message: fmt.Sprintf("cannot validate: %v", err)}}
	}
	var out violation.List
	collectViolations(verr, &out)
	return out
}

// prefixed puts prefix in front of every pointer of l.
func prefixed(prefix string, l violation.List) violation.List {
	for i := range l {
		l[i].Pointer = prefix + l[i].Pointer
	}
	return l
}
