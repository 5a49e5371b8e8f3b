package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// attribute is what docgen reads of a schema attribute. Every attribute
// of the framework's resource, data source and provider schemas has these
// methods: they are those of the framework's internal fwschema.Attribute,
// which each schema package's Attribute interface embeds.
type attribute interface {
	GetDescription() string
	GetMarkdownDescription() string
	GetDeprecationMessage() string
	GetType() attr.Type
	IsRequired() bool
	IsOptional() bool
	IsComputed() bool
	IsSensitive() bool
	IsWriteOnly() bool
}

// nestedAttribute is an attribute with attributes of its own (a
// SingleNestedAttribute, ListNestedAttribute, …). The resource, data
// source and provider schema packages each declare it, as the same method
// set (Attribute and the internal fwschema.NestedAttribute), so the
// resource package's declaration matches the nested attributes of all
// three.
type nestedAttribute = rschema.NestedAttribute

// kind is a kind of page other than the provider's.
type kind struct {
	title   string // in a page's title: "Resource"
	folder  string // under docs/ and examples/
	example string // the example's file name, in examples/<folder>/<type>/
}

var (
	resourceKind   = kind{title: "Resource", folder: "resources", example: "resource.tf"}
	dataSourceKind = kind{title: "Data Source", folder: "data-sources", example: "data-source.tf"}
)

// schemaDoc is what a page shows of a schema.
type schemaDoc struct {
	description string // markdown
	attributes  map[string]attribute
}

// typeDoc is a resource or data source.
type typeDoc struct {
	kind       kind
	typeName   string // landlord_tenant
	short      string // tenant: the page's name
	schema     schemaDoc
	importable bool // a resource with ImportState
}

// providerDoc is the provider, its resources and its data sources.
type providerDoc struct {
	name   string // landlord
	schema schemaDoc
	types  []typeDoc // resources then data sources, in the provider's order
}

// read reads the schemas of p, its resources and its data sources, as
// Terraform would ask for them (GetProviderSchema calls these methods).
func read(ctx context.Context, p provider.Provider) (*providerDoc, error) {
	var meta provider.MetadataResponse
	p.Metadata(ctx, provider.MetadataRequest{}, &meta)
	if meta.TypeName == "" {
		return nil, errors.New("the provider's Metadata gives no type name")
	}
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	ps.Diagnostics.Append(ps.Schema.ValidateImplementation(ctx)...)
	s, err := docOf("the provider", ps.Schema.MarkdownDescription, ps.Schema.Description,
		ps.Schema.Attributes, len(ps.Schema.Blocks), ps.Diagnostics)
	if err != nil {
		return nil, err
	}
	doc := &providerDoc{name: meta.TypeName, schema: s}
	seen := map[string]bool{}
	add := func(k kind, typeName string, s schemaDoc, importable bool) error {
		short, ok := strings.CutPrefix(typeName, doc.name+"_")
		if !ok || short == "" {
			return fmt.Errorf("%s %q: its name does not start with %s_", k.title, typeName, doc.name)
		}
		if seen[k.folder+"/"+typeName] {
			return fmt.Errorf("two %s types are named %s", k.folder, typeName)
		}
		seen[k.folder+"/"+typeName] = true
		doc.types = append(doc.types, typeDoc{kind: k, typeName: typeName, short: short, schema: s, importable: importable})
		return nil
	}

	for _, newResource := range p.Resources(ctx) {
		r := newResource()
		var m resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: doc.name}, &m)
		var rs resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &rs)
		rs.Diagnostics.Append(rs.Schema.ValidateImplementation(ctx)...)
		s, err := docOf("resource "+m.TypeName, rs.Schema.MarkdownDescription, rs.Schema.Description,
			rs.Schema.Attributes, len(rs.Schema.Blocks), rs.Diagnostics)
		if err != nil {
			return nil, err
		}
		_, importable := r.(resource.ResourceWithImportState)
		if err := add(resourceKind, m.TypeName, s, importable); err != nil {
			return nil, err
		}
	}
	for _, newDataSource := range p.DataSources(ctx) {
		d := newDataSource()
		var m datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: doc.name}, &m)
		var ds datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &ds)
		ds.Diagnostics.Append(ds.Schema.ValidateImplementation(ctx)...)
		s, err := docOf("data source "+m.TypeName, ds.Schema.MarkdownDescription, ds.Schema.Description,
			ds.Schema.Attributes, len(ds.Schema.Blocks), ds.Diagnostics)
		if err != nil {
			return nil, err
		}
		if err := add(dataSourceKind, m.TypeName, s, false); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// docOf is the schemaDoc of a schema, or the error of its diagnostics.
// Blocks are refused: the provider has none, and docgen renders none.
func docOf[A attribute](what, markdown, plain string, attrs map[string]A, blocks int, diags diag.Diagnostics) (schemaDoc, error) {
	var errs []error
	for _, d := range diags.Errors() {
		errs = append(errs, fmt.Errorf("%s: %s: %s", what, d.Summary(), d.Detail()))
	}
	if blocks > 0 {
		errs = append(errs, fmt.Errorf("%s: its schema has blocks, which docgen does not render", what))
	}
	if err := errors.Join(errs...); err != nil {
		return schemaDoc{}, err
	}
	return schemaDoc{description: descriptionOf(markdown, plain), attributes: attributesOf(attrs)}, nil
}

// attributesOf widens a schema package's attributes to docgen's.
func attributesOf[A attribute](in map[string]A) map[string]attribute {
	out := make(map[string]attribute, len(in))
	for name, a := range in {
		out[name] = a
	}
	return out
}

// nestedOf returns the attributes of a nested attribute, and false for
// any other.
func nestedOf(a attribute) (map[string]attribute, bool) {
	n, ok := a.(nestedAttribute)
	if !ok {
		return nil, false
	}
	out := map[string]attribute{}
	for name, child := range n.GetNestedObject().GetAttributes() {
		out[name] = child
	}
	return out, true
}

// descriptionOf is the markdown description, or else the plain one, as
// Terraform's schema JSON (and so tfplugindocs) has it.
func descriptionOf(markdown, plain string) string {
	if markdown != "" {
		return markdown
	}
	return plain
}
