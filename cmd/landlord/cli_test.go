package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

// cliResult is what a run of the CLI printed and the exit code main would
// end with.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the landlord command with args against srv, as main does,
// without a terminal.
func runCLI(t *testing.T, srv *clienttest.Server, stdin string, args ...string) cliResult {
	t.Helper()
	if srv != nil {
		args = append(args, "--addr", srv.URL)
	}
	root := newRootCommand()
	var stdout, stderr bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetIn(strings.NewReader(stdin))
	err := execute(root)
	if err != nil {
		stderr.WriteString("landlord: " + err.Error() + "\n")
	}
	return cliResult{stdout: stdout.String(), stderr: stderr.String(), code: exitCodeOf(err)}
}

// exitCodeOf is main's mapping of errors to exit codes.
func exitCodeOf(err error) int { return exitCode(err) }

// mustRunCLI runs the CLI and checks its exit code.
func mustRunCLI(t *testing.T, srv *clienttest.Server, code int, stdin string, args ...string) cliResult {
	t.Helper()
	res := runCLI(t, srv, stdin, args...)
	if res.code != code {
		t.Fatalf("landlord %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, code, res.stdout, res.stderr)
	}
	return res
}

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}
