package openapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

// The schemas of the OpenAPI document are generated from the wire types by
// openapi3gen. Two things are added by hand, because reflection cannot see
// them: what a type or field means (Go comments are gone at run time), and a
// few tighter schemas (an enum, "compute_config is an object"). A note that
// names no field fails the build of the document, so notes cannot outlive
// their fields.

// schemaGenerator makes the component schemas of the wire types.
type schemaGenerator struct {
	gen       *openapi3gen.Generator
	schemas   openapi3.Schemas
	used      map[fieldKey]bool
	usedTypes map[reflect.Type]bool
}

func newSchemaGenerator() *schemaGenerator {
	g := &schemaGenerator{schemas: openapi3.Schemas{}, used: map[fieldKey]bool{}, usedTypes: map[reflect.Type]bool{}}
	g.gen = openapi3gen.NewGenerator(
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.SchemaCustomizer(g.customize),
	)
	return g
}

// ref returns a reference to the component schema of v's type, generating
// it and the schemas it refers to on first use.
func (g *schemaGenerator) ref(v any) (*openapi3.SchemaRef, error) {
	ref, err := g.gen.NewSchemaRefForValue(v, g.schemas)
	if err != nil {
		return nil, fmt.Errorf("schema of %T: %w", v, err)
	}
	if ref.Ref == "" {
		return nil, fmt.Errorf("schema of %T: a body must be a struct", v)
	}
	return openapi3.NewSchemaRef(ref.Ref, nil), nil
}

// customize makes openapi3gen's schemas say what the JSON encoding does,
// in OpenAPI 3.1 terms, and adds the notes.
func (g *schemaGenerator) customize(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	// openapi3gen marks a pointer "nullable", which OpenAPI 3.1 dropped for
	// a "null" type. A nil pointer with omitempty is left out, never null.
	if s.Nullable {
		s.Nullable = false
		if !omitted(tag) && s.Type != nil {
			s.Type.With(openapi3.TypeNull)
		}
	}
	if t.Kind() != reflect.Struct || s.Properties == nil {
		return nil
	}
	doc, ok := typeNotes[t]
	if !ok {
		return fmt.Errorf("%s: typeNotes does not describe this body type", t)
	}
	s.Description = doc
	g.usedTypes[t] = true
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		// Fields without omitempty are always sent, so always present.
		if !omitted(f.Tag) {
			s.Required = append(s.Required, name)
		}
		key := fieldKey{t, name}
		note, ok := fieldNotes[key]
		if !ok {
			continue
		}
		g.used[key] = true
		prop := s.Properties[name]
		if prop == nil || prop.Value == nil || strings.HasPrefix(prop.Ref, "#/") {
			return fmt.Errorf("%s.%s: a note on a field without an inline schema", t, name)
		}
		p := prop.Value
		p.Description = note.doc
		for _, e := range note.enum {
			p.Enum = append(p.Enum, e)
		}
		if note.object {
			p.Type = &openapi3.Types{openapi3.TypeObject}
		}
	}
	return nil
}

// unused returns an error naming the notes on types and fields that no
// generated schema has.
func (g *schemaGenerator) unused() error {
	var stale []string
	for k := range fieldNotes {
		if !g.used[k] {
			stale = append(stale, k.t.String()+"."+k.name)
		}
	}
	for t := range typeNotes {
		if !g.usedTypes[t] {
			stale = append(stale, t.String())
		}
	}
	slices.Sort(stale)
	if len(stale) > 0 {
		return fmt.Errorf("notes on types or fields that no body has: %s", strings.Join(stale, ", "))
	}
	return nil
}

func omitted(tag reflect.StructTag) bool {
	_, opts, _ := strings.Cut(tag.Get("json"), ",")
	for o := range strings.SplitSeq(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			return true
		}
	}
	return false
}

// closed refuses unknown members in the request body schema ref points to,
// as the handlers do.
func (g *schemaGenerator) closed(ref *openapi3.SchemaRef) {
	no := false
	g.component(ref).AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
}

func (g *schemaGenerator) component(ref *openapi3.SchemaRef) *openapi3.Schema {
	return g.schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")].Value
}

// mergePatch returns a reference to the schema of an RFC 7396 merge patch of
// the body ref points to: every member optional, and null (which removes a
// member) allowed for those the body may leave out.
func (g *schemaGenerator) mergePatch(ref *openapi3.SchemaRef) *openapi3.SchemaRef {
	name := strings.TrimPrefix(ref.Ref, "#/components/schemas/") + "MergePatch"
	if _, ok := g.schemas[name]; !ok {
		body := g.component(ref)
		patch := &openapi3.Schema{
			Type:                 &openapi3.Types{openapi3.TypeObject},
			Description:          "An RFC 7396 JSON merge patch of " + strings.TrimPrefix(ref.Ref, "#/components/schemas/") + ": a member sent replaces the stored one (objects merge member by member), null removes it, a member left out is kept.",
			Properties:           openapi3.Schemas{},
			AdditionalProperties: body.AdditionalProperties,
		}
		for pname, p := range body.Properties {
			optional := !slices.Contains(body.Required, pname)
			switch {
			case p.Ref != "" && optional:
				patch.Properties[pname] = openapi3.NewSchemaRef("", &openapi3.Schema{AnyOf: openapi3.SchemaRefs{p, {Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}}}}})
			case p.Ref != "" || !optional || p.Value.Type == nil:
				patch.Properties[pname] = p
			default:
				q := *p.Value
				types := p.Value.Type.Clone()
				types.With(openapi3.TypeNull)
				q.Type = &types
				patch.Properties[pname] = openapi3.NewSchemaRef("", &q)
			}
		}
		g.schemas[name] = openapi3.NewSchemaRef("", patch)
	}
	return openapi3.NewSchemaRef("#/components/schemas/"+name, nil)
}
