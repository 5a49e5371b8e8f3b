package main

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The markdown below follows tfplugindocs's (internal/schemamd of
// github.com/hashicorp/terraform-plugin-docs): its groups, its type names,
// its anchors and its notes, so that pages read as the Registry's readers
// know them.

// writeOnlyNote heads a top-level group with a write-only attribute.
const writeOnlyNote = "> **NOTE**: [Write-only arguments](https://developer.hashicorp.com/terraform/language/resources/ephemeral#write-only-arguments) are supported in Terraform 1.11 and later.\n\n"

// writeOnlyMark marks a write-only attribute, after its type.
const writeOnlyMark = "[Write-only](https://developer.hashicorp.com/terraform/language/resources/ephemeral#write-only-arguments)"

// group is a group of attributes by what a configuration does with them.
type group struct {
	title  string // of the group at the top level
	nested string // of the group in a nested schema
	has    func(attribute) bool
}

var groups = []group{
	{"### Required", "Required:", attribute.IsRequired},
	{"### Optional", "Optional:", attribute.IsOptional},
	{"### Read-Only", "Read-Only:", readOnly},
}

func readOnly(a attribute) bool { return a.IsComputed() && !a.IsOptional() && !a.IsRequired() }

// nested is a schema written after the attributes that hold it: a nested
// attribute's attributes, or an object type's.
type nested struct {
	anchor string
	path   []string
	attrs  map[string]attribute // a nested attribute's
	object *tftypes.Object      // or an object type's
	group  group                // of the attribute whose object it is
}

// schemaMarkdown renders the "## Schema" section of attrs.
func schemaMarkdown(ctx context.Context, attrs map[string]attribute) (string, error) {
	var b strings.Builder
	b.WriteString("## Schema\n\n")
	if err := writeAttributes(ctx, &b, nil, attrs, true); err != nil {
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

// writeAttributes writes attrs, the attributes at path parents, by group,
// then their nested schemas.
func writeAttributes(ctx context.Context, b *strings.Builder, parents []string, attrs map[string]attribute, top bool) error {
	byGroup := make([][]string, len(groups))
	for _, name := range slices.Sorted(maps.Keys(attrs)) {
		i := slices.IndexFunc(groups, func(g group) bool { return g.has(attrs[name]) })
		if i < 0 {
			return fmt.Errorf("attribute %s is neither required, optional nor computed", pathTitle(append(parents, name)))
		}
		byGroup[i] = append(byGroup[i], name)
	}
	var more []nested
	for i, g := range groups {
		names := byGroup[i]
		if len(names) == 0 {
			continue
		}
		if top {
			b.WriteString(g.title + "\n\n")
			if slices.ContainsFunc(names, func(n string) bool { return attrs[n].IsWriteOnly() }) {
				b.WriteString(writeOnlyNote)
			}
		} else {
			b.WriteString(g.nested + "\n\n")
		}
		for _, name := range names {
			n, err := writeAttribute(ctx, b, append(slices.Clip(parents), name), attrs[name], g)
			if err != nil {
				return err
			}
			more = append(more, n...)
		}
		b.WriteString("\n")
	}
	return writeNested(ctx, b, more)
}

// writeAttribute writes one attribute's line and returns the nested
// schema it holds, if it holds one.
func writeAttribute(ctx context.Context, b *strings.Builder, path []string, a attribute, g group) ([]nested, error) {
	ty := a.GetType().TerraformType(ctx)
	children, isNested := nestedOf(a)
	var typ string
	if isNested {
		switch ty.(type) {
		case tftypes.Object:
			typ = "Attributes"
		case tftypes.List:
			typ = "Attributes List"
		case tftypes.Set:
			typ = "Attributes Set"
		case tftypes.Map:
			typ = "Attributes Map"
		default:
			return nil, fmt.Errorf("attribute %s: nested attributes of type %s", pathTitle(path), ty)
		}
	} else {
		var err error
		if typ, err = typeName(ty); err != nil {
			return nil, fmt.Errorf("attribute %s: %w", pathTitle(path), err)
		}
	}
	marks := []string{typ}
	if a.IsSensitive() {
		marks = append(marks, "Sensitive")
	}
	if a.GetDeprecationMessage() != "" {
		marks = append(marks, "Deprecated")
	}
	if a.IsWriteOnly() {
		marks = append(marks, writeOnlyMark)
	}
	fmt.Fprintf(b, "- `%s` (%s)", path[len(path)-1], strings.Join(marks, ", "))
	if d := oneParagraph(descriptionOf(a.GetMarkdownDescription(), a.GetDescription())); d != "" {
		b.WriteString(" " + d)
	}

	var n []nested
	switch object, isObject := objectOf(ty); {
	case isNested:
		n = append(n, nested{anchor: "nestedatt--" + strings.Join(path, "--"), path: path, attrs: children, group: g})
	case isObject:
		n = append(n, nested{anchor: "nestedatt--" + strings.Join(path, "--"), path: path, object: &object, group: g})
	}
	for _, x := range n {
		fmt.Fprintf(b, " (see [below for nested schema](#%s))", x.anchor)
	}
	b.WriteString("\n")
	return n, nil
}

// writeNested writes nested schemas, each under its anchor and title.
func writeNested(ctx context.Context, b *strings.Builder, ns []nested) error {
	for _, n := range ns {
		fmt.Fprintf(b, "<a id=\"%s\"></a>\n### Nested Schema for `%s`\n\n", n.anchor, pathTitle(n.path))
		var err error
		if n.object != nil {
			err = writeObject(b, n.path, *n.object, n.group)
		} else {
			err = writeAttributes(ctx, b, n.path, n.attrs, false)
		}
		if err != nil {
			return err
		}
		b.WriteString("\n")
	}
	return nil
}

// writeObject writes the attributes of an object type: they have a type
// and nothing else, and go in the group of the attribute that holds them.
func writeObject(b *strings.Builder, parents []string, object tftypes.Object, g group) error {
	b.WriteString(g.nested + "\n\n")
	var more []nested
	for _, name := range slices.Sorted(maps.Keys(object.AttributeTypes)) {
		path := append(slices.Clip(parents), name)
		ty := object.AttributeTypes[name]
		typ, err := typeName(ty)
		if err != nil {
			return fmt.Errorf("attribute %s: %w", pathTitle(path), err)
		}
		fmt.Fprintf(b, "- `%s` (%s)", name, typ)
		if inner, ok := objectOf(ty); ok {
			n := nested{anchor: "nestedobjatt--" + strings.Join(path, "--"), path: path, object: &inner, group: g}
			fmt.Fprintf(b, " (see [below for nested schema](#%s))", n.anchor)
			more = append(more, n)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, n := range more {
		fmt.Fprintf(b, "<a id=\"%s\"></a>\n### Nested Schema for `%s`\n\n", n.anchor, pathTitle(n.path))
		if err := writeObject(b, n.path, *n.object, n.group); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	return nil
}

// objectOf returns the object type of ty, or of its elements.
func objectOf(ty tftypes.Type) (tftypes.Object, bool) {
	switch t := ty.(type) {
	case tftypes.Object:
		return t, true
	case tftypes.List:
		o, ok := t.ElementType.(tftypes.Object)
		return o, ok
	case tftypes.Set:
		o, ok := t.ElementType.(tftypes.Object)
		return o, ok
	case tftypes.Map:
		o, ok := t.ElementType.(tftypes.Object)
		return o, ok
	}
	return tftypes.Object{}, false
}

// typeName names a type as tfplugindocs does: "String", "List of Number".
// A custom type is named by the Terraform type it is: a JSON object
// string is a String.
func typeName(ty tftypes.Type) (string, error) {
	var of string
	var elem tftypes.Type
	switch t := ty.(type) {
	case tftypes.List:
		of, elem = "List of ", t.ElementType
	case tftypes.Set:
		of, elem = "Set of ", t.ElementType
	case tftypes.Map:
		of, elem = "Map of ", t.ElementType
	case tftypes.Object:
		return "Object", nil
	case tftypes.Tuple:
		return "Tuple", nil
	default:
		switch {
		case ty.Equal(tftypes.String):
			return "String", nil
		case ty.Equal(tftypes.Number):
			return "Number", nil
		case ty.Equal(tftypes.Bool):
			return "Boolean", nil
		case ty.Equal(tftypes.DynamicPseudoType):
			return "Dynamic", nil
		}
		return "", fmt.Errorf("unexpected type %s", ty)
	}
	e, err := typeName(elem)
	if err != nil {
		return "", err
	}
	return of + e, nil
}

func pathTitle(path []string) string { return strings.Join(path, ".") }

var blankLines = regexp.MustCompile(`\n\n+`)

// oneParagraph keeps a description on its list item's line: paragraphs
// become line breaks.
func oneParagraph(s string) string {
	return blankLines.ReplaceAllString(strings.TrimSpace(s), "  \n")
}
