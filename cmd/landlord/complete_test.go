package main

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestCompleteTenantNames(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	for _, name := range []string{"acme", "acorn", "globex"} {
		mustRunCLI(t, srv, exitOK, "", "create", name, "--config", "image: a")
	}
	for _, verb := range []string{"get", "set", "delete", "history"} {
		t.Run(verb, func(t *testing.T) {
			// cobra's hidden __complete command is what shells call.
			res := mustRunCLI(t, nil, exitOK, "", "__complete", verb, "--addr", srv.URL, "ac")
			if !strings.HasPrefix(res.stdout, "acme\trequested\nacorn\trequested\n:4\n") {
				t.Errorf("completions:\n%s", res.stdout)
			}
			res = mustRunCLI(t, nil, exitOK, "", "__complete", verb, "--addr", srv.URL, "acme", "")
			if strings.Contains(res.stdout, "acme") || !strings.HasSuffix(res.stdout, ":4\n") {
				t.Errorf("a second argument is completed:\n%s", res.stdout)
			}
		})
	}
	res := mustRunCLI(t, nil, exitOK, "", "__complete", "list", "--status", "re")
	if !strings.Contains(res.stdout, "requested\n") {
		t.Errorf("--status completions:\n%s", res.stdout)
	}
	res = mustRunCLI(t, nil, exitOK, "", "__complete", "get", "--addr", "http://127.0.0.1:1", "")
	if !strings.HasPrefix(res.stdout, ":4\n") {
		t.Errorf("completions without a server:\n%s", res.stdout)
	}
}
