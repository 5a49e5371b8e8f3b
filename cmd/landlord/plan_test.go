package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// mustDecode reads the JSON the CLI printed into v.
func mustDecode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("not a %T: %v\n%s", v, err, out)
	}
}

// mustPlan creates a plan and publishes a version of each config.
func mustPlan(t *testing.T, srv *clienttest.Server, name string, configs ...string) {
	t.Helper()
	mustRunCLI(t, srv, exitOK, "", "plan", "create", name, "-o", "json")
	for _, c := range configs {
		mustRunCLI(t, srv, exitOK, "", "plan", "publish", name, "--config", c, "-o", "json")
	}
}

// A plan's life: created without versions, refused a version its
// provider's schema refuses (with the pointer), published from inline
// YAML, a file and stdin, shown with its versions, refused deletion while a
// tenant follows it, then deleted.
func TestPlanLife(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})

	res := mustRunCLI(t, srv, exitOK, "", "plan", "list")
	if res.stdout != "" || !strings.Contains(res.stderr, "no plans; create one with: landlord plan create NAME") {
		t.Errorf("no plans: stdout %q, stderr %q", res.stdout, res.stderr)
	}
	res = mustRunCLI(t, srv, exitOK, "", "plan", "create", "standard", "--description", "the standard tier")
	mustContain(t, "create", res.stdout, "Name:             standard\n", "Provider:         mock\n", "Description:      the standard tier\n",
		"Current version:  none: publish one with landlord plan publish standard\n")
	mustContain(t, "create's stderr", res.stderr, "publish its first version with: landlord plan publish standard --config VALUE")
	var p client.Plan
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "plan", "create", "premium", "--provider", "mock", "-o", "json").stdout, &p)
	if p.Name != "premium" || p.Provider != "mock" || p.LatestVersion != 0 {
		t.Errorf("created %+v", p)
	}
	res = mustRunCLI(t, srv, exitFailure, "", "plan", "create", "standard")
	mustContain(t, "stderr", res.stderr, "landlord: create plan standard: ", "(409 plan_exists)")
	res = mustRunCLI(t, srv, exitFailure, "", "plan", "create", "other", "--provider", "nope")
	mustContain(t, "stderr", res.stderr, "provider nope is not enabled on this server", "\n  /provider: ")

	t.Run("publish refused, with the pointer", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitFailure, "", "plan", "publish", "standard", "--config", `{"image": 7, "bogus": true}`)
		mustContain(t, "stderr", res.stderr, "landlord: publish plan standard: the config is not valid for provider mock, the plan's (422 invalid_compute_config)",
			"\n  /config/bogus: ", "\n  /config/image: must be a string")
		res = mustRunCLI(t, srv, exitFailure, "", "plan", "publish", "standard", "--config", "image: a\n env: x\n")
		mustContain(t, "stderr", res.stderr, "landlord: --config: line 2, column ")
		res = mustRunCLI(t, srv, exitNotFound, "", "plan", "publish", "nosuch", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "(404 plan_not_found)", "landlord plan list")
		if strings.Contains(res.stderr, "/v1/") {
			t.Errorf("HTTP advice: %s", res.stderr)
		}
	})

	res = mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", "image: app:1", "--message", "first")
	mustContain(t, "publish", res.stdout, "Plan:       standard\n", "Version:    1\n", "Message:    first\n", "Config:\n  image: app:1\n")
	mustContain(t, "publish's stderr", res.stderr, "version 1 is the plan's current version")
	file := filepath.Join(t.TempDir(), "v2.yaml")
	writeTestFile(t, file, "image: app:2\nenv:\n  MODE: prod\n")
	var v client.PlanVersion
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", "@"+file, "-o", "json").stdout, &v)
	var config bytes.Buffer
	if err := json.Compact(&config, v.Config); err != nil || v.Version != 2 || config.String() != `{"image":"app:2","env":{"MODE":"prod"}}` {
		t.Errorf("published version %d, config %s", v.Version, v.Config)
	}
	res = mustRunCLI(t, srv, exitOK, `{"image": "app:3"}`, "plan", "publish", "standard", "--config", "-", "--message", "three")
	mustContain(t, "publish's stderr", res.stderr, "no tenant moved: see what a rollout to version 3 would do with: landlord rollout plan standard --to 3")

	res = mustRunCLI(t, srv, exitOK, "", "plan", "get", "standard")
	mustContain(t, "get", res.stdout, "Current version:  1 (new tenants get it)\n", "Latest version:   3 (tenants get it through a rollout",
		"\nVersions:\n  VERSION  CURRENT  AGE  BY", "\n  1        yes  ", "first\n", "three\n", "\nConfig of version 1:\n  image: app:1\n")
	var got planWithVersions
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "plan", "get", "standard", "-o", "json").stdout, &got)
	if got.Name != "standard" || got.CurrentVersion != 1 || got.LatestVersion != 3 || len(got.Versions) != 3 || got.Versions[2].Message != "three" {
		t.Errorf("get -o json: %+v", got)
	}
	mustContain(t, "get -o yaml", mustRunCLI(t, srv, exitOK, "", "plan", "get", "standard", "-o", "yaml").stdout,
		"name: standard\n", "current_version: 1\n", "versions:\n  - plan: standard\n    version: 1\n")

	res = mustRunCLI(t, srv, exitOK, "", "plan", "versions", "standard")
	if lines := strings.Split(strings.TrimSpace(res.stdout), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[1], "1        yes") {
		t.Errorf("versions:\n%s", res.stdout)
	}
	var vs client.PlanVersionList
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "plan", "versions", "standard", "-o", "json").stdout, &vs)
	if len(vs.Versions) != 3 || vs.Versions[0].Version != 1 {
		t.Errorf("versions -o json: %+v", vs)
	}
	res = mustRunCLI(t, srv, exitOK, "", "plan", "versions", "premium")
	mustContain(t, "no versions", res.stderr, "plan premium has no versions; publish one with: landlord plan publish premium --config VALUE")

	res = mustRunCLI(t, srv, exitOK, "", "plan", "list")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME      PROVIDER  CURRENT  LATEST  AGE  DESCRIPTION") ||
		!strings.HasPrefix(lines[1], "premium   mock      -        -   ") || !strings.HasPrefix(lines[2], "standard  mock      1        3   ") {
		t.Errorf("plan list:\n%s", res.stdout)
	}
	var list client.PlanList
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "plan", "list", "-o", "json").stdout, &list)
	if len(list.Plans) != 2 {
		t.Errorf("plan list -o json: %+v", list)
	}

	// A plan that a tenant follows is not deleted; the error says how to
	// move the tenant, in the CLI's words.
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--plan", "standard")
	res = mustRunCLI(t, srv, exitFailure, "", "plan", "delete", "standard")
	mustContain(t, "stderr", res.stderr, "(409 plan_in_use)", "acme", "landlord list --plan standard", "landlord set TENANT --plan ''")
	if strings.Contains(res.stderr, "/v1/") || strings.Contains(res.stderr, "PATCH") {
		t.Errorf("HTTP advice: %s", res.stderr)
	}
	mustRunCLI(t, srv, exitOK, "", "set", "acme", "--plan", "", "--config", "image: own")
	res = mustRunCLI(t, srv, exitOK, "", "plan", "delete", "standard")
	if res.stdout != "deleted plan standard\n" {
		t.Errorf("delete: %q", res.stdout)
	}
	mustRunCLI(t, srv, exitNotFound, "", "plan", "get", "standard")
	mustRunCLI(t, srv, exitNotFound, "", "plan", "delete", "standard")
	mustContain(t, "delete -o json", mustRunCLI(t, srv, exitOK, "", "plan", "delete", "premium", "-o", "json").stdout, `"name": "premium"`, `"deleted": true`)

	for name, args := range map[string][]string{
		"an unknown verb":          {"plan", "bogus"},
		"create without a name":    {"plan", "create"},
		"publish without --config": {"plan", "publish", "standard"},
		"get with two names":       {"plan", "get", "a", "b"},
		"a bad output":             {"plan", "list", "-o", "xml"},
	} {
		t.Run("usage: "+name, func(t *testing.T) {
			mustRunCLI(t, srv, exitUsage, "", args...)
		})
	}
	if res := mustRunCLI(t, nil, exitOK, "", "plan"); !strings.Contains(res.stdout, "landlord plan [command]") {
		t.Errorf("plan alone shows no help:\n%s", res.stdout)
	}
}
