package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/jaxxstorm/landlord/terraform-provider-landlord/internal/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// moduleRoot is the provider module's root, from this package's folder
// (where go test runs).
const moduleRoot = "../.."

const regenerate = "run go generate ./... in terraform-provider-landlord"

func mustRender(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := render(context.Background(), moduleRoot)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return files
}

func mustRead(t *testing.T) *providerDoc {
	t.Helper()
	doc, err := read(context.Background(), provider.New("test")())
	if err != nil {
		t.Fatalf("read the provider: %v", err)
	}
	return doc
}

// TestDocsUpToDate fails when docs/ is not what go generate writes: a
// schema's description or an example changed without the pages.
func TestDocsUpToDate(t *testing.T) {
	files := mustRender(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		got, err := os.ReadFile(filepath.Join(moduleRoot, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s is missing: %s", name, regenerate)
		case err != nil:
			t.Fatal(err)
		case !bytes.Equal(got, files[name]):
			t.Errorf("%s is stale (%s): %s", name, firstDifference(got, files[name]), regenerate)
		}
	}
	stale, err := stalePages(moduleRoot, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		t.Errorf("%s documents no resource or data source of the provider: %s", name, regenerate)
	}
}

// firstDifference says where got first differs from want.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("line %d is %q, want %q", i+1, gl, wl)
		}
	}
	return "same lines"
}

// TestEveryTypeHasPageAndExample checks that the provider, each resource
// and each data source has a page and an example (and each importable
// resource an import example), and that each file under examples/provider,
// examples/resources and examples/data-sources is one of those.
func TestEveryTypeHasPageAndExample(t *testing.T) {
	doc := mustRead(t)
	files := mustRender(t)
	type want struct{ page, example, importFile string }
	wants := map[string]want{"provider": {page: indexPage, example: providerExample}}
	for _, ty := range doc.types {
		wants[ty.kind.folder+"/"+ty.typeName] = want{page: ty.pagePath(), example: ty.examplePath(), importFile: ty.importPath()}
	}
	known := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(wants)) {
		w := wants[name]
		known[w.example], known[w.importFile] = true, true
		t.Run(name, func(t *testing.T) {
			if _, ok := files[w.page]; !ok {
				t.Errorf("render makes no page %s", w.page)
			}
			for _, f := range []string{w.example, w.importFile} {
				if f == "" {
					continue
				}
				if _, err := os.Stat(filepath.Join(moduleRoot, filepath.FromSlash(f))); err != nil {
					t.Errorf("no example: %v", err)
				}
			}
		})
	}

	for _, folder := range []string{"examples/provider", "examples/" + resourceKind.folder, "examples/" + dataSourceKind.folder} {
		root := filepath.Join(moduleRoot, filepath.FromSlash(folder))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(moduleRoot, p)
			if err != nil {
				return err
			}
			if name := filepath.ToSlash(rel); !known[name] {
				t.Errorf("%s is an example of no resource or data source of the provider, or not a file docgen reads (%s, %s, import.sh)",
					name, resourceKind.example, dataSourceKind.example)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestTypeName(t *testing.T) {
	ctx := context.Background()
	object := types.ObjectType{AttrTypes: map[string]attr.Type{"a": types.StringType}}
	for _, tc := range []struct {
		name string
		ty   tftypes.Type
		want string
	}{
		{"string", types.StringType.TerraformType(ctx), "String"},
		{"int64", types.Int64Type.TerraformType(ctx), "Number"},
		{"float64", types.Float64Type.TerraformType(ctx), "Number"},
		{"bool", types.BoolType.TerraformType(ctx), "Boolean"},
		{"dynamic", types.DynamicType.TerraformType(ctx), "Dynamic"},
		{"json object", provider.JSONObjectType{}.TerraformType(ctx), "String"},
		{"list of string", types.ListType{ElemType: types.StringType}.TerraformType(ctx), "List of String"},
		{"set of number", types.SetType{ElemType: types.Int64Type}.TerraformType(ctx), "Set of Number"},
		{"map of bool", types.MapType{ElemType: types.BoolType}.TerraformType(ctx), "Map of Boolean"},
		{"object", object.TerraformType(ctx), "Object"},
		{"list of object", types.ListType{ElemType: object}.TerraformType(ctx), "List of Object"},
		{"map of list", types.MapType{ElemType: types.ListType{ElemType: types.StringType}}.TerraformType(ctx), "Map of List of String"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := typeName(tc.ty)
			if err != nil || got != tc.want {
				t.Errorf("typeName(%s) = %q, %v; want %q", tc.ty, got, err, tc.want)
			}
		})
	}
}

// TestSchemaMarkdown renders a schema of every kind of attribute the
// provider's do not all have, against testdata/schema.md.
func TestSchemaMarkdown(t *testing.T) {
	object := types.ObjectType{AttrTypes: map[string]attr.Type{
		"port":  types.Int64Type,
		"inner": types.ObjectType{AttrTypes: map[string]attr.Type{"ok": types.BoolType}},
	}}
	attrs := map[string]rschema.Attribute{
		"name":     rschema.StringAttribute{Required: true, MarkdownDescription: "The `name`."},
		"config":   rschema.StringAttribute{CustomType: provider.JSONObjectType{}, Optional: true, Description: "A JSON object (plain description)."},
		"enabled":  rschema.BoolAttribute{Optional: true, Computed: true, MarkdownDescription: "Optional and computed: optional."},
		"password": rschema.StringAttribute{Optional: true, Sensitive: true, WriteOnly: true, MarkdownDescription: "Sensitive and write-only."},
		"old":      rschema.StringAttribute{Optional: true, DeprecationMessage: "Use name.", MarkdownDescription: "Deprecated.\n\nA second paragraph."},
		"count":    rschema.Int64Attribute{Computed: true, MarkdownDescription: "Read-only."},
		"ports":    rschema.ListAttribute{ElementType: object, Computed: true, MarkdownDescription: "A list of objects."},
		"tags":     rschema.SetAttribute{ElementType: types.StringType, Optional: true},
		"by_name": rschema.MapNestedAttribute{Optional: true, MarkdownDescription: "Nested by name.", NestedObject: rschema.NestedAttributeObject{
			Attributes: map[string]rschema.Attribute{
				"value": rschema.StringAttribute{Required: true, MarkdownDescription: "A value."},
				"rules": rschema.SetNestedAttribute{Optional: true, NestedObject: rschema.NestedAttributeObject{
					Attributes: map[string]rschema.Attribute{
						"allow": rschema.BoolAttribute{Required: true},
						"id":    rschema.StringAttribute{Computed: true},
					},
				}},
			},
		}},
	}
	got, err := schemaMarkdown(context.Background(), attributesOf(attrs))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/schema.md", got+"\n")
}

// TestNestedOfDataSource checks that a data source's nested attribute is
// found through the resource package's NestedAttribute interface.
func TestNestedOfDataSource(t *testing.T) {
	a := dschema.SingleNestedAttribute{Computed: true, Attributes: map[string]dschema.Attribute{
		"x": dschema.StringAttribute{Computed: true},
	}}
	children, ok := nestedOf(a)
	if !ok || len(children) != 1 || children["x"] == nil {
		t.Fatalf("nestedOf(a data source's SingleNestedAttribute) = %v, %v; want its attribute x", children, ok)
	}
	if _, ok := nestedOf(dschema.StringAttribute{}); ok {
		t.Error("nestedOf(a StringAttribute) is nested")
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("rendered markdown differs from %s (%s); go test -update rewrites it\n%s", name, firstDifference([]byte(got), want), got)
	}
}
