package client_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The client stands alone: a program that talks to landlord imports the
// standard library and the API's wire types, never the server.

const module = "github.com/jaxxstorm/landlord"

// forbidden are import path prefixes of what must never reach the client or
// the wire types, each with the reason, so that a failure says what was
// pulled in.
var forbidden = []struct{ prefix, why string }{
	{module + "/internal/", "a server package (only internal/wire is shared with the client)"},
	{module + "/cmd/", "a command"},
	{"github.com/santhosh-tekuri/jsonschema", "JSON Schema validation, the server's"},
	{"github.com/getkin/kin-openapi", "OpenAPI generation, the server's"},
	{"github.com/danielgtaylor/huma", "an HTTP framework, the server's"},
	{"github.com/jackc/pgx", "the Postgres store"},
	{"modernc.org/", "the SQLite store"},
	{"github.com/mattn/go-sqlite3", "a SQLite driver"},
	{"github.com/moby/", "the Docker provider"},
	{"github.com/docker/", "the Docker provider"},
	{"k8s.io/", "Kubernetes"},
	{"sigs.k8s.io/", "Kubernetes"},
	{"golang.org/x/text", "text processing, the server's"},
	{"go.yaml.in/yaml", "configuration files, the server's"},
	{"gopkg.in/yaml", "configuration files"},
	{"github.com/oasdiff/yaml", "YAML, which kin-openapi brings"},
}

func TestStandsAlone(t *testing.T) {
	for _, tc := range []struct {
		pkg string
		// allowed are the packages outside the standard library it may
		// depend on (itself included).
		allowed []string
	}{
		{module + "/client", []string{module + "/client", module + "/internal/wire"}},
		{module + "/internal/wire", []string{module + "/internal/wire"}},
	} {
		t.Run(strings.TrimPrefix(tc.pkg, module+"/"), func(t *testing.T) {
			deps := mustListDeps(t, tc.pkg)
			for _, d := range deps.nonStandard {
				if slices.Contains(tc.allowed, d) {
					continue
				}
				why := "outside the standard library; the client carries only the standard library and the wire types"
				for _, f := range forbidden {
					if strings.HasPrefix(d, f.prefix) {
						why = f.why
						break
					}
				}
				t.Errorf("%s depends on %s: %s\n  through %s", tc.pkg, d, why, strings.Join(deps.path(tc.pkg, d), " → "))
			}
		})
	}
}

// deps is what go list -deps says of a package.
type deps struct {
	nonStandard []string
	imports     map[string][]string
}

func mustListDeps(t *testing.T, pkg string) deps {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{.Standard}} {{join .Imports ","}}`, pkg)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	d := deps{imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		if f[1] != "true" {
			d.nonStandard = append(d.nonStandard, f[0])
		}
		if len(f) > 2 {
			d.imports[f[0]] = strings.Split(f[2], ",")
		}
	}
	if !slices.Contains(d.nonStandard, pkg) {
		t.Fatalf("go list -deps %s does not list the package itself:\n%s", pkg, out)
	}
	return d
}

// path is a shortest chain of imports from one package to another.
func (d deps) path(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range d.imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return []string{from, "…", to}
}
