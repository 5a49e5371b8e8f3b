package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

func TestList(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	res := mustRunCLI(t, srv, exitOK, "", "list")
	if res.stdout != "" || res.stderr != "no tenants\n" {
		t.Errorf("empty list: stdout %q, stderr %q", res.stdout, res.stderr)
	}
	for i := range 5 {
		tier := "silver"
		if i < 2 {
			tier = "gold"
		}
		mustRunCLI(t, srv, exitOK, "", "create", fmt.Sprintf("tenant-%d", i), "--config", "image: a", "--label", "tier="+tier)
	}

	res = mustRunCLI(t, srv, exitOK, "", "list")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "NAME      STATUS     PROVIDER  ENDPOINTS  AGE  MESSAGE") {
		t.Fatalf("list table:\n%s", res.stdout)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "tenant-") || !strings.Contains(l, "  requested  mock      ") {
			t.Errorf("row not aligned: %q", l)
		}
	}

	names := func(out string) []string {
		t.Helper()
		var list client.TenantList
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("not a tenant list: %v\n%s", err, out)
		}
		var ns []string
		for _, tn := range list.Tenants {
			ns = append(ns, tn.Name)
		}
		slices.Sort(ns)
		return ns
	}
	if got := names(mustRunCLI(t, srv, exitOK, "", "list", "--label", "tier=gold", "-o", "json").stdout); !slices.Equal(got, []string{"tenant-0", "tenant-1"}) {
		t.Errorf("tier=gold: %v", got)
	}
	if got := names(mustRunCLI(t, srv, exitOK, "", "list", "--status", "ready,failed", "--status", "deleting", "-o", "json").stdout); len(got) != 0 {
		t.Errorf("ready or failed: %v", got)
	}
	if got := names(mustRunCLI(t, srv, exitOK, "", "list", "--status", "requested", "--provider", "mock", "-o", "json").stdout); len(got) != 5 {
		t.Errorf("requested on mock: %v", got)
	}

	res = mustRunCLI(t, srv, exitOK, "", "list", "--page-size", "2")
	if n := strings.Count(res.stdout, "\n"); n != 3 {
		t.Errorf("a page of 2 has %d lines:\n%s", n, res.stdout)
	}
	mustContain(t, "stderr", res.stderr, "more tenants: list them all with --all-pages, or the next page with --page-token ")
	all := names(mustRunCLI(t, srv, exitOK, "", "list", "--page-size", "2", "--all-pages", "-o", "json").stdout)
	if len(all) != 5 {
		t.Errorf("all pages: %v", all)
	}
	if out := mustRunCLI(t, srv, exitOK, "", "list", "--all-pages", "-o", "yaml").stdout; !strings.Contains(out, "tenants:\n  - id: ") || !strings.Contains(out, `next_page_token: ""`) {
		t.Errorf("yaml:\n%s", out)
	}

	res = mustRunCLI(t, srv, exitFailure, "", "list", "--status", "sleeping")
	mustContain(t, "stderr", res.stderr, "(400 invalid_parameter)", "\n  --status: ")
	mustRunCLI(t, srv, exitUsage, "", "list", "--label", "tier")
	mustRunCLI(t, srv, exitUsage, "", "list", "extra")
}
