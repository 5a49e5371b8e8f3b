package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every exit code the CLI can end with (a constant exit… of this package)
// is described in the root command's help and in the README's table, and
// neither describes a code that is not one.
func TestExitCodesDocumented(t *testing.T) {
	codes := exitCodeConstants(t)
	if len(codes) < 5 {
		t.Fatalf("found the exit codes %v: is the exit… const block still in this package?", codes)
	}

	help := newRootCommand().Long
	if !strings.Contains(help, exitCodesHelp) {
		t.Errorf("the root command's help does not show exitCodesHelp:\n%s", help)
	}
	checkCodes(t, "the root command's help", codes, regexp.MustCompile(`(?m)^  (\d+)  \S`).FindAllStringSubmatch(exitCodesHelp, -1))

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README.md has no section ## Exit codes")
	}
	section, _, _ = strings.Cut(section, "\n#")
	checkCodes(t, "README.md's exit codes", codes, regexp.MustCompile("(?m)^\\| `(\\d+)` \\|").FindAllStringSubmatch(section, -1))
}

// checkCodes compares the codes a document describes (each match's first
// group) with the constants.
func checkCodes(t *testing.T, doc string, codes map[int]string, matches [][]string) {
	t.Helper()
	described := map[int]bool{}
	for _, m := range matches {
		n, _ := strconv.Atoi(m[1])
		if described[n] {
			t.Errorf("%s describes exit code %d twice", doc, n)
		}
		described[n] = true
		if _, ok := codes[n]; !ok {
			t.Errorf("%s describes exit code %d, which no exit… constant has", doc, n)
		}
	}
	for n, name := range codes {
		if !described[n] {
			t.Errorf("%s does not describe exit code %d (%s)", doc, n, name)
		}
	}
}

// exitCodeConstants reads the package's source for its constants named
// exit… with an integer value.
func exitCodeConstants(t *testing.T) map[int]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !exitName.MatchString(id.Name) {
						continue
					}
					lit, ok := valueAt(vs, i).(*ast.BasicLit)
					if ok && lit.Kind == token.STRING {
						continue // exitCodesHelp
					}
					if !ok || lit.Kind != token.INT {
						t.Fatalf("%s: %s is not an integer literal: write exit codes as numbers, so that this test can read them", fset.Position(id.Pos()), id.Name)
					}
					n, err := strconv.Atoi(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if other, ok := codes[n]; ok {
						t.Errorf("%s and %s are both exit code %d", other, id.Name, n)
					}
					codes[n] = id.Name
				}
			}
		}
	}
	return codes
}

var exitName = regexp.MustCompile(`^exit[A-Z]`)

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}
