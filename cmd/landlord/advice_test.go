package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// The CLI's errors name its flags and commands, not the API's endpoints,
// headers and query parameters.
func TestErrorsSpeakCLI(t *testing.T) {
	t.Setenv("LANDLORD_TOKEN", "")
	srv := clienttest.NewServer(t, clienttest.Options{Tokens: map[string]string{"ci": "cli-test-token"}})
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no token", []string{"list"}, exitFailure, []string{"the server needs an API token: pass --token or set LANDLORD_TOKEN", "(401 unauthorized)"}},
		{"wrong token", []string{"list", "--token", "nope"}, exitFailure, []string{"the server does not accept the API token given (--token or LANDLORD_TOKEN)", "(401 unauthorized)"}},
		{"no such tenant", []string{"get", "nosuch", "--token", "cli-test-token"}, exitNotFound,
			[]string{"landlord: tenant nosuch: no such tenant; see the tenants with: landlord list", "(404 tenant_not_found)"}},
		{"a page token from elsewhere", []string{"list", "--page-token", "bogus", "--token", "cli-test-token"}, exitFailure,
			[]string{"(400 invalid_parameter)", "\n  --page-token: was not returned by this listing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mustRunCLI(t, srv, tc.code, "", tc.args...)
			mustContain(t, "stderr", res.stderr, tc.want...)
			for _, http := range []string{"GET /v1", "Authorization", "Bearer", "parameter page_token"} {
				if strings.Contains(res.stderr, http) {
					t.Errorf("stderr gives HTTP advice (%s):\n%s", http, res.stderr)
				}
			}
		})
	}
}

// --page-size is refused out of 1 to 500 before anything is sent;
// --include-deleted lists deleted tenants too.
func TestListFlags(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	for _, size := range []string{"0", "-1", "501"} {
		res := mustRunCLI(t, srv, exitUsage, "", "list", "--page-size", size)
		mustContain(t, "stderr", res.stderr, "--page-size "+size+": must be from 1 to 500")
	}
	mustRunCLI(t, srv, exitOK, "", "create", "live", "--config", "image: a")
	mustRunCLI(t, srv, exitOK, "", "create", "gone", "--config", "image: a")
	gone := mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "delete", "gone", "-o", "json").stdout)
	ctx := context.Background()
	cur, err := srv.Store.Get(ctx, gone.ID, tenant.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Store.UpdateObserved(ctx, cur.ID, tenant.Observation{Generation: cur.Generation, Status: tenant.StatusDeleted}); err != nil {
		t.Fatal(err)
	}
	if res := mustRunCLI(t, srv, exitOK, "", "list"); strings.Contains(res.stdout, "gone") {
		t.Errorf("list shows a deleted tenant:\n%s", res.stdout)
	}
	res := mustRunCLI(t, srv, exitOK, "", "list", "--include-deleted", "--page-size", "1", "--all-pages")
	mustContain(t, "list --include-deleted", res.stdout, "gone  deleted", "live  requested")
}
