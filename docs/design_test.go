// Package docs holds landlord's documentation; its test keeps
// docs/design.md true to the tree.
package docs

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDesignLayoutMatchesTheTree: the layout in design.md lists every
// package of the module, one per line, and names no package that does
// not exist.
func TestDesignLayoutMatchesTheTree(t *testing.T) {
	listed := layoutPackages(t, mustRead(t, "design.md"))
	var have []string
	for _, p := range goList(t) {
		have = append(have, p+"/")
	}
	for _, p := range have {
		if !slices.Contains(listed, p) {
			t.Errorf("design.md's layout does not list package %s: add a line for it", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(have, p) {
			t.Errorf("design.md's layout lists %s, which is no package of the module: remove or rename it", p)
		}
	}
}

// qualified finds Go names written package.Name in prose, in backquotes or
// not: tenant.ChangeFeed, compute.Manager.
var qualified = regexp.MustCompile(`\b(api|client|compute|config|controller|fleet|identity|oidc|rollout|seal|server|service|sqlite|postgres|store|tenant|ui|wire|workload)\.([A-Z][A-Za-z0-9]*)`)

// TestDesignNamesExist: every package.Name design.md mentions is declared
// in that package, so that a rename does not leave the design naming what
// is gone.
func TestDesignNamesExist(t *testing.T) {
	doc := mustRead(t, "design.md")
	dirs := map[string]string{}
	for _, p := range goList(t) {
		dirs[filepath.Base(p)] = p
	}
	declared := map[string]map[string]bool{}
	for _, m := range qualified.FindAllStringSubmatch(string(doc), -1) {
		pkg, name := m[1], m[2]
		dir, ok := dirs[pkg]
		if !ok {
			t.Errorf("design.md names %s.%s, but there is no package %s", pkg, name, pkg)
			continue
		}
		if declared[pkg] == nil {
			declared[pkg] = exported(t, filepath.Join("..", dir))
		}
		if !declared[pkg][name] {
			t.Errorf("design.md names %s.%s, which %s does not declare", pkg, name, dir)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// layoutPackages are the paths that start the lines of the code block
// under "## Layout".
func layoutPackages(t *testing.T, doc []byte) []string {
	t.Helper()
	_, after, ok := bytes.Cut(doc, []byte("\n## Layout\n"))
	if !ok {
		t.Fatal(`design.md has no "## Layout" section`)
	}
	_, block, ok := bytes.Cut(after, []byte("```\n"))
	if !ok {
		t.Fatal("design.md's layout has no code block")
	}
	block, _, _ = bytes.Cut(block, []byte("```"))
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(block))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 && strings.HasSuffix(f[0], "/") && !strings.HasPrefix(sc.Text(), " ") {
			out = append(out, f[0])
		}
	}
	return out
}

// goList lists the module's packages, relative to its root.
func goList(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mod := exec.Command("go", "list", "-m")
	mod.Dir = ".."
	root, err := mod.Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	prefix := strings.TrimSpace(string(root)) + "/"
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, prefix); ok && rel != "docs" {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}

// exported are the exported names a package's non-test files declare at
// top level, methods included.
func exported(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				out[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}
