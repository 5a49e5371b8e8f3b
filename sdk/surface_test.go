package sdk_test

import (
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sdk/surface.txt with the SDK's exported surface as it is")

// surfacePackages are the SDK's packages under its compatibility promise
// (sdk/doc.go); the protocol's generated code is held by its own version
// policy instead.
var surfacePackages = []string{"provider", "workload", "violation", "tenantlock", "plugin", "providertest"}

// TestSurfaceOnlyGrows holds the SDK to its promise, as Go's own api
// check holds the standard library: sdk/surface.txt lists every exported
// identifier of the SDK with its type, and a line of it that is gone or
// changed fails (a removal or an incompatible change breaks providers
// built on the SDK), as does a new identifier the file does not list yet
// (go test ./sdk -run Surface -update adds it, for review).
func TestSurfaceOnlyGrows(t *testing.T) {
	have := surface(t)
	if *update {
		if err := os.WriteFile("surface.txt", []byte(strings.Join(have, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile("surface.txt")
	if err != nil {
		t.Fatal(err)
	}
	promised := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range promised {
		if _, found := slices.BinarySearch(have, line); !found {
			t.Errorf("the SDK no longer has, as promised: %s", line)
		}
	}
	for _, line := range have {
		if !slices.Contains(promised, line) {
			t.Errorf("new in the SDK, not yet in sdk/surface.txt: %s (run go test ./sdk -run Surface -update)", line)
		}
	}
}

// surface lists the exported identifiers of the SDK's packages, one per
// line, sorted: each const, var, func and type, each exported field of a
// struct and each method.
func surface(t *testing.T) []string {
	imp := exportImporter(t)
	var out []string
	for _, name := range surfacePackages {
		pkg, err := imp.Import(module + "/sdk/" + name)
		if err != nil {
			t.Fatalf("type-check sdk/%s: %v", name, err)
		}
		qualify := func(p *types.Package) string {
			if p == pkg {
				return ""
			}
			return p.Path()
		}
		line := func(format string, args ...any) { out = append(out, name+": "+fmt.Sprintf(format, args...)) }
		scope := pkg.Scope()
		for _, id := range scope.Names() {
			obj := scope.Lookup(id)
			if !obj.Exported() {
				continue
			}
			tn, ok := obj.(*types.TypeName)
			if !ok {
				line("%s", types.ObjectString(obj, qualify))
				continue
			}
			// A struct is its exported fields, each a line, so that a new
			// field is an addition; an interface is whole, since a new method
			// breaks its implementations.
			if st, ok := tn.Type().Underlying().(*types.Struct); ok {
				line("type %s struct", id)
				for i := range st.NumFields() {
					if f := st.Field(i); f.Exported() {
						line("field %s.%s %s", id, f.Name(), types.TypeString(f.Type(), qualify))
					}
				}
			} else {
				line("%s", types.ObjectString(obj, qualify))
			}
			for _, typ := range []types.Type{tn.Type(), types.NewPointer(tn.Type())} {
				ms := types.NewMethodSet(typ)
				for i := range ms.Len() {
					if m := ms.At(i).Obj(); m.Exported() {
						line("method (%s) %s%s", types.TypeString(typ, qualify), m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qualify), "func"))
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// exportImporter imports packages from the export data the go command
// builds for them (go list -export), so that the SDK is type-checked as
// compiled, quickly.
func exportImporter(t *testing.T) types.Importer {
	paths := make([]string, len(surfacePackages))
	for i, name := range surfacePackages {
		paths[i] = module + "/sdk/" + name
	}
	lines := goList(t, append([]string{"-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, paths...)...)
	export := map[string]string{}
	for _, l := range lines {
		if path, file, ok := strings.Cut(l, "="); ok && file != "" {
			export[path] = file
		}
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}
