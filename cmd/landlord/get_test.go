package main

import (
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestGet(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	created := mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "create", "acme", "--config", "image: a", "--label", "tier=gold", "-o", "json").stdout)

	res := mustRunCLI(t, srv, exitOK, "", "get", "acme")
	mustContain(t, "stdout", res.stdout, "Name:        acme\n", "ID:          "+created.ID+"\n", "Status:      requested\n", "Labels:      tier=gold\n", "Created:", "s ago)")

	byID := mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "get", created.ID, "-o", "json").stdout)
	if byID.ID != created.ID || byID.Version != created.Version {
		t.Errorf("get by id: %+v", byID)
	}
	mustContain(t, "yaml", mustRunCLI(t, srv, exitOK, "", "get", "acme", "-o", "yaml").stdout, "name: acme\n", "id: "+created.ID+"\n")

	res = mustRunCLI(t, srv, exitNotFound, "", "get", "nobody")
	mustContain(t, "stderr", res.stderr, "landlord: tenant nobody: no such tenant; ", "(404 tenant_not_found)")
	if res.stdout != "" {
		t.Errorf("stdout of a failure: %q", res.stdout)
	}
	mustRunCLI(t, srv, exitUsage, "", "get")
}

func TestAddressAndToken(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Tokens: map[string]string{"ci": "cli-test-token"}})
	res := mustRunCLI(t, srv, exitFailure, "", "list")
	mustContain(t, "stderr", res.stderr, "(401 unauthorized)")
	mustRunCLI(t, srv, exitOK, "", "list", "--token", "cli-test-token")

	t.Setenv("LANDLORD_TOKEN", "cli-test-token")
	mustRunCLI(t, srv, exitOK, "", "list")
	t.Setenv("LANDLORD_ADDR", srv.URL)
	mustRunCLI(t, nil, exitOK, "", "list")
	res = mustRunCLI(t, nil, exitFailure, "", "list", "--token", "wrong-token")
	mustContain(t, "stderr", res.stderr, "(401 unauthorized)")
	if strings.Contains(res.stderr, "wrong-token") {
		t.Errorf("the token is printed: %s", res.stderr)
	}

	t.Setenv("LANDLORD_ADDR", "http://127.0.0.1:1")
	res = mustRunCLI(t, nil, exitFailure, "", "get", "acme")
	mustContain(t, "stderr", res.stderr, "landlord: tenant acme: client: GET http://127.0.0.1:1/v1/tenants/acme: ", "is landlord serve running there?")
	mustRunCLI(t, nil, exitUsage, "", "get", "acme", "--addr", "ftp://x")
}
