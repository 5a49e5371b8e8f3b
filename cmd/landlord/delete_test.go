package main

import (
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestDelete(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", "image: a", "--wait", "--timeout", "30s")
	mustRunCLI(t, srv, exitOK, "", "create", "globex", "--config", "image: a", "--wait", "--timeout", "30s")

	res := mustRunCLI(t, srv, exitOK, "", "delete", "acme", "--wait", "--timeout", "30s")
	if res.stdout != "tenant acme deleted\n" {
		t.Errorf("stdout %q", res.stdout)
	}
	mustContain(t, "progress", res.stderr, "acme: deleting")
	mustRunCLI(t, srv, exitNotFound, "", "get", "acme")
	mustRunCLI(t, srv, exitNotFound, "", "delete", "acme")

	res = mustRunCLI(t, srv, exitOK, "", "delete", "globex", "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); tn.Name != "globex" || tn.Status != "deleting" {
		t.Errorf("delete -o json: %+v", tn)
	}
	mustRunCLI(t, srv, exitOK, "", "create", "initech", "--config", "image: a", "--wait", "--timeout", "30s")
	res = mustRunCLI(t, srv, exitOK, "", "delete", "initech", "--wait", "--timeout", "30s", "-o", "json")
	if tn := mustTenantJSON(t, res.stdout); tn.Status != "deleted" {
		t.Errorf("delete --wait -o json: %s", tn.Status)
	}

	res = mustRunCLI(t, srv, exitNotFound, "", "delete", "nobody")
	mustContain(t, "stderr", res.stderr, "landlord: delete tenant nobody: no such tenant", "(404 tenant_not_found)")

	mustRunCLI(t, srv, exitOK, "", "create", "stuck", "--config", `{"image":"a","x-mock":{"fail":"terminal","operations":["destroy"]}}`, "--wait", "--timeout", "30s")
	res = mustRunCLI(t, srv, exitFailure, "", "delete", "stuck", "--wait", "--timeout", "30s")
	mustContain(t, "stderr", res.stderr, "landlord: tenant stuck failed: ")

	mustRunCLI(t, srv, exitOK, "", "create", "later", "--config", "image: a")
	res = mustRunCLI(t, srv, exitOK, "", "delete", "later")
	if res.stdout != "tenant later is deleting; follow it with: landlord get later\n" {
		t.Errorf("delete without --wait: %q", res.stdout)
	}
}
