package main

import (
	"errors"
	"testing"
)

// Cobra's errors about verbs, flags and arguments end the process with
// exit code 2 and keep cobra's words, because they are typed where cobra
// makes them; an error merely worded like one is not a usage error.
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown verb", []string{"crate"}, `unknown command "crate" for "landlord"`},
		{"unknown flag", []string{"list", "--bogus"}, "unknown flag: --bogus"},
		{"unknown shorthand", []string{"list", "-z"}, "unknown shorthand flag: 'z' in -z"},
		{"invalid flag value", []string{"list", "--page-size", "many"}, `invalid argument "many" for "--page-size" flag`},
		{"flag without its value", []string{"list", "--page-size"}, "flag needs an argument: --page-size"},
		{"too many arguments", []string{"get", "a", "b"}, "accepts 1 arg(s), received 2"},
		{"too few arguments", []string{"get"}, "accepts 1 arg(s), received 0"},
		{"an argument where none is taken", []string{"list", "extra"}, `unknown command "extra" for "landlord list"`},
		{"an argument of a nested verb", []string{"compute", "providers", "extra"}, `unknown command "extra" for "landlord compute providers"`},
		{"required flag", []string{"set", "acme"}, `required flag(s) "config" not set`},
		{"an argument of cobra's completion verb", []string{"completion", "bash", "extra"}, `unknown command "extra" for "landlord completion bash"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustRunCLI(t, nil, exitUsage, "", tt.args...)
			mustContain(t, "stderr", res.stderr, "landlord: "+tt.want)
		})
	}
	for _, msg := range []string{"unknown flag: --x", "requires a tenant", "accepts nothing", "invalid argument"} {
		if code := exitCode(errors.New(msg)); code != exitFailure {
			t.Errorf("exitCode(%q) = %d, want %d: only typed errors are usage errors", msg, code, exitFailure)
		}
	}
}
