package client_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The client stands alone: a program that talks to landlord imports the
// standard library and the API's wire types, never the server. The CLI's
// verbs and the console are clients too: they reach the server through
// the client and share its vocabulary through wire, so that neither
// carries the server's stores, providers or controller.

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

// serverPackages are the packages only the server runs, and what pulls in
// a platform's SDK, each with the reason. No client-side package may depend
// on them.
var serverPackages = []struct{ prefix, why string }{
	{module + "/internal/api", "the HTTP API, the server's"},
	{module + "/internal/controller", "the controller, the server's (and client-go's work queue)"},
	{module + "/internal/rollout", "the rollout driver, the server's"},
	{module + "/internal/store", "a store, the server's"},
	{module + "/internal/compute/providers", "a compute provider, the server's"},
	{module + "/internal/config", "the server's configuration"},
	{module + "/internal/oidc", "the server's OIDC sign-in"},
	{module + "/internal/secretbox", "the server's encryption of secrets"},
	{module + "/internal/metrics", "the server's metrics"},
	{module + "/internal/server", "the server's composition"},
	{module + "/internal/service", "the server's use cases"},
	{"k8s.io/", "Kubernetes"},
	{"sigs.k8s.io/", "Kubernetes"},
	{"github.com/aws/", "the AWS SDK"},
	{"github.com/hashicorp/nomad", "Nomad"},
	{"github.com/moby/", "the Docker provider"},
	{"github.com/docker/", "the Docker provider"},
	{"github.com/jackc/pgx", "the Postgres store"},
	{"modernc.org/", "the SQLite store"},
	{"github.com/getkin/kin-openapi", "OpenAPI generation, the server's"},
	{"github.com/santhosh-tekuri/jsonschema", "JSON Schema validation, the server's"},
	{"github.com/prometheus/", "the server's metrics"},
}

// serverPackage is why dep is a server package, or "" when it is not one.
func serverPackage(dep string) string {
	for _, f := range serverPackages {
		if dep == f.prefix || strings.HasPrefix(dep, strings.TrimSuffix(f.prefix, "/")+"/") {
			return f.why
		}
	}
	return ""
}

// serveFiles are the files of cmd/landlord that work on the server's side
// rather than through the API: serve, which hands its settings to
// internal/server; the provider table serve registers; secrets, which
// reseals a database's stored secrets; demo, which builds the demo image
// on the Engine; and backup, which copies the database. The rest are the
// CLI's verbs.
var serveFiles = []string{"serve.go", "providers.go", "secrets.go", "demo.go", "backup.go"}

// TestClientSideLeavesTheServerOut: the console and the CLI's verbs depend
// on no server package; of the module's own packages they use the client
// and wire, and the console the two small domain packages it shares with
// the server's stores.
func TestClientSideLeavesTheServerOut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		roots []string
		// own are the module's packages it may depend on, each with why.
		own map[string]string
	}{
		{"internal/ui", []string{module + "/internal/ui"}, map[string]string{
			module + "/internal/ui":       "",
			module + "/client":            "",
			module + "/internal/wire":     "",
			module + "/internal/identity": "the session store's contract, which the server's stores implement for the console",
			module + "/sdk/violation":     "JSON pointers of the fields at fault, as the API's problems name them",
		}},
		{"cmd/landlord verbs", mustCLIImports(t), map[string]string{
			module + "/client":         "",
			module + "/internal/wire":  "",
			module + "/internal/build": "which landlord this is (landlord version), standard library only",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps := mustListDeps(t, tc.roots...)
			for _, d := range deps.nonStandard {
				if _, ok := tc.own[d]; ok {
					continue
				}
				why := serverPackage(d)
				if why == "" && strings.HasPrefix(d, module+"/") {
					why = "a package of the module the client side does not share"
				}
				if why != "" {
					t.Errorf("%s depends on %s: %s\n  through %s", tc.name, d, why, strings.Join(deps.path(d, tc.roots...), " → "))
				}
			}
		})
	}
}

// mustCLIImports are the packages the CLI's verbs import: those of every
// file of cmd/landlord but its tests and serveFiles.
func mustCLIImports(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "cmd", "landlord", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in cmd/landlord: %v", err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, "_test.go") || slices.ContainsFunc(serveFiles, func(p string) bool { ok, _ := filepath.Match(p, base); return ok }) {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, imp := range file.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", f, imp.Path.Value, err)
			}
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
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
				t.Errorf("%s depends on %s: %s\n  through %s", tc.pkg, d, why, strings.Join(deps.path(d, tc.pkg), " → "))
			}
		})
	}
}

// deps is what go list -deps says of packages.
type deps struct {
	listed      map[string]bool
	nonStandard []string
	imports     map[string][]string
}

func mustListDeps(t *testing.T, pkgs ...string) deps {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}} {{.Standard}} {{join .Imports ","}}`}, pkgs...)
	cmd := exec.Command("go", args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", strings.Join(pkgs, " "), err, stderr)
	}
	d := deps{listed: map[string]bool{}, imports: map[string][]string{}}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		d.listed[f[0]] = true
		if f[1] != "true" {
			d.nonStandard = append(d.nonStandard, f[0])
		}
		if len(f) > 2 {
			d.imports[f[0]] = strings.Split(f[2], ",")
		}
	}
	for _, pkg := range pkgs {
		if !d.listed[pkg] {
			t.Fatalf("go list -deps %s does not list %s itself:\n%s", strings.Join(pkgs, " "), pkg, out)
		}
	}
	return d
}

// path is a shortest chain of imports to a package from one of others.
func (d deps) path(to string, from ...string) []string {
	prev := map[string]string{}
	for _, f := range from {
		prev[f] = ""
	}
	queue := slices.Clone(from)
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
	return []string{strings.Join(from, ", "), "…", to}
}
