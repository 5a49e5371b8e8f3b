package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// create --plan and set --plan, --pin, --unpin and --maintenance-window,
// and how get and list show them.
func TestCreateAndSetPlan(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	mustPlan(t, srv, "standard", "image: app:1\nenv: {TIER: standard}", "image: app:2\nenv: {TIER: standard}")
	mustPlan(t, srv, "premium", "image: app:1\nenv: {TIER: premium}")
	get := func(name string) client.Tenant {
		t.Helper()
		return mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "get", name, "-o", "json").stdout)
	}
	plan := func(name string) string {
		t.Helper()
		return planString(get(name).Plan)
	}

	t.Run("create", func(t *testing.T) {
		res := mustRunCLI(t, srv, exitOK, "", "create", "acme", "--plan", "standard")
		mustContain(t, "create", res.stdout, "Plan:        standard@1\n", "Compute config (overrides of plan standard@1):\n  {}\n")
		tn := mustTenantJSON(t, mustRunCLI(t, srv, exitOK, "", "create", "globex", "--plan", "standard@2", "--pin",
			"--config", "env: {OWN: globex}", "--maintenance-window", "Sat,Sun 02:00-04:00 Europe/Paris", "-o", "json").stdout)
		if diff := cmp.Diff(&client.TenantPlan{Name: "standard", Version: 2, Pinned: true}, tn.Plan); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(&client.MaintenanceWindow{Days: []string{"sat", "sun"}, Start: "02:00", End: "04:00", TimeZone: "Europe/Paris"}, tn.MaintenanceWindow); diff != "" {
			t.Errorf("window (-want +got):\n%s", diff)
		}
		res = mustRunCLI(t, srv, exitOK, "", "create", "dry", "--plan", "premium", "--dry-run")
		mustContain(t, "dry run", res.stdout, "Effective config:\n", "TIER: premium")

		res = mustRunCLI(t, srv, exitFailure, "", "create", "x", "--plan", "nosuch")
		mustContain(t, "stderr", res.stderr, "(422 invalid_plan)", "\n  --plan name: no plan has this name; the plans are premium, standard")
		res = mustRunCLI(t, srv, exitFailure, "", "create", "x", "--plan", "standard@9")
		mustContain(t, "stderr", res.stderr, "(422 invalid_plan)", "\n  --plan version: is not a version of plan standard (1 to 2)")
		res = mustRunCLI(t, srv, exitUsage, "", "create", "x", "--plan", "standard@x")
		mustContain(t, "stderr", res.stderr, `landlord: --plan "standard@x": the version after @ must be a number from 1, such as standard@3`)
		res = mustRunCLI(t, srv, exitUsage, "", "create", "x", "--pin", "--config", "image: a")
		mustContain(t, "stderr", res.stderr, "landlord: --pin needs --plan")
		res = mustRunCLI(t, srv, exitUsage, "", "create", "x", "--plan", "")
		mustContain(t, "stderr", res.stderr, "landlord: --plan '': name the plan the tenant follows")
		res = mustRunCLI(t, srv, exitUsage, "", "create", "x")
		mustContain(t, "stderr", res.stderr, `landlord: required flag(s) "config" not set: give the tenant's compute_config, or --plan to follow a plan`)
		res = mustRunCLI(t, srv, exitUsage, "", "create", "x", "--plan", "standard", "--maintenance-window", "someday 02:00-04:00")
		mustContain(t, "stderr", res.stderr, `landlord: --maintenance-window "someday 02:00-04:00": "someday": not a day or a range of days`)
	})

	t.Run("set", func(t *testing.T) {
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--plan", "standard@2", "--pin")
		if got := plan("acme"); got != "standard@2 (pinned)" {
			t.Errorf("after --plan standard@2 --pin: %s", got)
		}
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--unpin")
		if got := plan("acme"); got != "standard@2" {
			t.Errorf("after --unpin: %s", got)
		}
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--pin")
		if got := plan("acme"); got != "standard@2 (pinned)" {
			t.Errorf("after --pin: %s", got)
		}
		// Another plan: its current version; the pin stays, as the API's
		// patch keeps it.
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--plan", "premium", "--unpin")
		if got := plan("acme"); got != "premium@1" {
			t.Errorf("after --plan premium --unpin: %s", got)
		}

		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--maintenance-window", "mon-fri 22:00-02:00 America/New_York")
		if got := windowString(get("acme").MaintenanceWindow); got != "mon,tue,wed,thu,fri 22:00-02:00 America/New_York" {
			t.Errorf("window %s", got)
		}
		// A new window replaces the old one whole: no days is every day.
		res := mustRunCLI(t, srv, exitOK, "", "set", "acme", "--maintenance-window", "01:00-03:00")
		mustContain(t, "set", res.stdout, "Maintenance window:  daily 01:00-03:00 UTC\n")
		res = mustRunCLI(t, srv, exitOK, "", "set", "acme", "--maintenance-window", "")
		if strings.Contains(res.stdout, "Maintenance window") || get("acme").MaintenanceWindow != nil {
			t.Errorf("the window was not removed:\n%s", res.stdout)
		}

		// Labels alone, without --config: the config stays.
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--label", "ring=canary")
		if tn := get("acme"); tn.Labels["ring"] != "canary" || !sameJSON(tn.ComputeConfig, "{}") {
			t.Errorf("after --label: labels %v, config %s", tn.Labels, tn.ComputeConfig)
		}

		// Leaving the plan needs a whole config: the overrides alone do not
		// validate.
		res = mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--plan", "")
		mustContain(t, "stderr", res.stderr, "(422 invalid_compute_config)", "/compute_config")
		res = mustRunCLI(t, srv, exitOK, "", "set", "acme", "--plan", "", "--config", "image: own\nenv: {A: b}", "--label", "tier=gold")
		tn := get("acme")
		if tn.Plan != nil || !sameJSON(tn.ComputeConfig, `{"image":"own","env":{"A":"b"}}`) || len(tn.Labels) != 1 || tn.Labels["tier"] != "gold" {
			t.Errorf("after --plan '': plan %+v, config %s, labels %v\n%s", tn.Plan, tn.ComputeConfig, tn.Labels, res.stdout)
		}
		// And back on a plan, with a config of overrides that replaces
		// the whole one.
		mustRunCLI(t, srv, exitOK, "", "set", "acme", "--plan", "standard", "--config", "env: {A: c}")
		if tn := get("acme"); planString(tn.Plan) != "standard@1" || !sameJSON(tn.ComputeConfig, `{"env":{"A":"c"}}`) {
			t.Errorf("back on standard: plan %+v, config %s", tn.Plan, tn.ComputeConfig)
		}

		for name, args := range map[string][]string{
			"nothing to set":           {"set", "acme"},
			"--pin and --unpin":        {"set", "acme", "--pin", "--unpin"},
			"--plan '' and --pin":      {"set", "acme", "--plan", "", "--pin"},
			"a bad window":             {"set", "acme", "--maintenance-window", "sat 2:00-4:00"},
			"a bad version":            {"set", "acme", "--plan", "standard@0"},
			"a version without a name": {"set", "acme", "--plan", "@3"},
		} {
			t.Run("usage: "+name, func(t *testing.T) {
				mustRunCLI(t, srv, exitUsage, "", args...)
			})
		}
		res = mustRunCLI(t, srv, exitFailure, "", "set", "acme", "--plan", "standard@9")
		mustContain(t, "stderr", res.stderr, "\n  --plan version: ")
	})

	// A secret sent back as "[redacted]" keeps its value when the change
	// is a patch, as it does in a replace.
	t.Run("secrets", func(t *testing.T) {
		mustRunCLI(t, srv, exitOK, "", "create", "vault", "--config", `{"image": "a", "secrets": {"TOKEN": "s3cret"}, "env": {"A": "1"}}`)
		shown := get("vault").ComputeConfig
		if !strings.Contains(string(shown), "[redacted]") {
			t.Fatalf("the secret is not redacted: %s", shown)
		}
		mustRunCLI(t, srv, exitOK, string(shown), "set", "vault", "--config", "-", "--maintenance-window", "sun 03:00-04:00")
		stored, err := srv.Store.Get(context.Background(), "vault", tenant.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(stored.ComputeConfig), "s3cret") || stored.MaintenanceWindow == nil {
			t.Errorf("stored config %s, window %+v", stored.ComputeConfig, stored.MaintenanceWindow)
		}
	})

	t.Run("get and list", func(t *testing.T) {
		mustContain(t, "get", mustRunCLI(t, srv, exitOK, "", "get", "globex").stdout,
			"Plan:                standard@2 (pinned)\n", "Maintenance window:  sat,sun 02:00-04:00 Europe/Paris\n",
			"Compute config (overrides of plan standard@2):\n  env:\n    OWN: globex\n")
		res := mustRunCLI(t, srv, exitOK, "", "list")
		mustContain(t, "list", res.stdout, "  PLAN  ", "  standard@2 (pinned)  ", "  standard@1  ")
		var list client.TenantList
		mustDecode(t, mustRunCLI(t, srv, exitOK, "", "list", "--plan", "standard", "-o", "json").stdout, &list)
		var names []string
		for _, tn := range list.Tenants {
			names = append(names, tn.Name)
		}
		if diff := cmp.Diff([]string{"acme", "globex"}, names); diff != "" {
			t.Errorf("list --plan standard (-want +got):\n%s", diff)
		}
	})
}

func TestParseWindow(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want client.MaintenanceWindow
	}{
		{"sat,sun 02:00-04:00 Europe/Paris", client.MaintenanceWindow{Days: []string{"sat", "sun"}, Start: "02:00", End: "04:00", TimeZone: "Europe/Paris"}},
		{"Mon-Fri 22:00-02:00", client.MaintenanceWindow{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "22:00", End: "02:00"}},
		{"fri-mon 00:00-06:00 UTC", client.MaintenanceWindow{Days: []string{"mon", "fri", "sat", "sun"}, Start: "00:00", End: "06:00", TimeZone: "UTC"}},
		{"saturday,sun,sat 01:00-02:00", client.MaintenanceWindow{Days: []string{"sat", "sun"}, Start: "01:00", End: "02:00"}},
		{"daily 01:00-02:00 Asia/Tokyo", client.MaintenanceWindow{Start: "01:00", End: "02:00", TimeZone: "Asia/Tokyo"}},
		{"  01:00-02:00  ", client.MaintenanceWindow{Start: "01:00", End: "02:00"}},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseWindow(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, tt := range []struct{ in, want string }{
		{"", `--maintenance-window "": is empty; write it as '[DAYS] HH:MM-HH:MM [TIME_ZONE]'`},
		{"sat,sun", `--maintenance-window "sat,sun": is not a window; write it as`},
		{"sat 02:00 04:00", `--maintenance-window "sat 02:00 04:00": is not a window; write it as`},
		{"sat 02:00-04:00 Europe/Paris extra", `is not a window`},
		{"sat,someday,mon-funday 02:00-04:00", `--maintenance-window "sat,someday,mon-funday 02:00-04:00": "someday", "mon-funday": not a day or a range of days: use mon, tue, wed, thu, fri, sat, sun, ranges such as mon-fri, or daily`},
		// Every problem at once.
		{"sat 2:00-25:00 Mars/Olympus", `--maintenance-window "sat 2:00-25:00 Mars/Olympus": "25:00" is not a time of day as HH:MM; "2:00" is not a time of day as HH:MM; "Mars/Olympus" is not a known time zone`},
	} {
		t.Run("bad "+tt.in, func(t *testing.T) {
			_, err := parseWindow(tt.in)
			if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseWindow(%q) = %v (exit %d), want a usage error with %q", tt.in, err, exitCode(err), tt.want)
			}
		})
	}
}

func TestReplacingPatch(t *testing.T) {
	for _, tt := range []struct{ name, from, to, want string }{
		{"same", `{"image":"a","env":{"A":"1"}}`, `{"env":{"A":"1"},"image":"a"}`, `{}`},
		{"a member changed", `{"image":"a"}`, `{"image":"b"}`, `{"image":"b"}`},
		{"members removed", `{"image":"a","env":{"A":"1","B":"2"}}`, `{"image":"a","env":{"A":"1"}}`, `{"env":{"B":null}}`},
		{"a member added", `{"image":"a"}`, `{"image":"a","env":{"A":"1"}}`, `{"env":{"A":"1"}}`},
		{"an object replaced by a string", `{"x":{"a":1}}`, `{"x":"s"}`, `{"x":"s"}`},
		{"lists replace", `{"ports":[1,2]}`, `{"ports":[1]}`, `{"ports":[1]}`},
		{"numbers as written", `{"n":1.0}`, `{"n":1.0}`, `{}`},
		{"a redacted secret kept", `{"secrets":{"T":"[redacted]","U":"[redacted]"}}`, `{"secrets":{"T":"[redacted]","U":"new"}}`, `{"secrets":{"U":"new"}}`},
		{"everything removed", `{"image":"a"}`, `{}`, `{"image":null}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replacingPatch(json.RawMessage(tt.from), json.RawMessage(tt.to))
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(got, tt.want) {
				t.Errorf("patch %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCompletePlansAndRollouts(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	mustPlan(t, srv, "standard", "image: a")
	mustPlan(t, srv, "premium")
	for _, args := range [][]string{{"plan", "get"}, {"plan", "publish"}, {"rollout", "plan"}, {"create", "x", "--plan"}, {"set", "x", "--plan"}, {"list", "--plan"}} {
		args = append([]string{"__complete", "--addr", srv.URL}, append(args, "st")...)
		res := mustRunCLI(t, nil, exitOK, "", args...)
		if !strings.HasPrefix(res.stdout, "standard\tmock, version 1\n:4\n") {
			t.Errorf("%v: completions:\n%s", args, res.stdout)
		}
	}
	res := mustRunCLI(t, nil, exitOK, "", "__complete", "plan", "get", "--addr", srv.URL, "standard", "")
	if !strings.HasPrefix(res.stdout, ":4\n") {
		t.Errorf("a second argument is completed:\n%s", res.stdout)
	}
	mustRunCLI(t, srv, exitOK, "", "create", "acme", "--plan", "standard", "-o", "json")
	mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", "image: b", "-o", "json")
	ro := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "-o", "json").stdout)
	for _, verb := range []string{"status", "pause", "abort"} {
		res := mustRunCLI(t, nil, exitOK, "", "__complete", "rollout", verb, "--addr", srv.URL, "")
		if !strings.HasPrefix(res.stdout, ro.ID+"\tstandard * → 2, running\n") {
			t.Errorf("rollout %s: completions:\n%s", verb, res.stdout)
		}
	}
}

// sameJSON reports whether got and want are the same JSON value.
func sameJSON(got json.RawMessage, want string) bool {
	var g, w any
	return json.Unmarshal(got, &g) == nil && json.Unmarshal([]byte(want), &w) == nil && cmp.Equal(g, w)
}
