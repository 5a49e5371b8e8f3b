package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// mustFleet makes plan standard (version 1, then v2 published) and n
// tenants on version 1, t00 to t0n, the first labelled ring=canary, each
// with its own env; then a tenant pinned to version 1 and one already on
// version 2.
func mustFleet(t *testing.T, srv *clienttest.Server, n int, v2 string) {
	t.Helper()
	mustPlan(t, srv, "standard", "image: example.com/app:1\nenv: {TIER: standard}")
	for i := range n {
		args := []string{"create", fmt.Sprintf("t%02d", i), "--plan", "standard", "--config", fmt.Sprintf("env: {OWN: '%d'}", i), "-o", "json"}
		if i == 0 {
			args = append(args, "--label", "ring=canary")
		}
		mustRunCLI(t, srv, exitOK, "", args...)
	}
	mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", v2, "-o", "json")
	mustRunCLI(t, srv, exitOK, "", "create", "pinned", "--plan", "standard@1", "--pin", "-o", "json")
	mustRunCLI(t, srv, exitOK, "", "create", "current", "--plan", "standard@2", "-o", "json")
}

const v2 = "image: example.com/app:2\nenv: {TIER: standard}"

// canaryThenHalf are --wave flags: the canary, then half of the tenants.
var canaryThenHalf = []string{"--wave", "name=canary,selector=ring=canary,count=1", "--wave", "name=half,percent=50,max-in-flight=2"}

func mustRollout(t *testing.T, out string) client.Rollout {
	t.Helper()
	var ro client.Rollout
	mustDecode(t, out, &ro)
	if ro.ID == "" {
		t.Fatalf("no rollout:\n%s", out)
	}
	return ro
}

// rollout plan shows, per wave, each tenant's versions, action and
// changes, then the pinned, current and out-of-window counts; it starts
// nothing.
func TestRolloutPlan(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	mustFleet(t, srv, 5, v2)
	res := mustRunCLI(t, srv, exitOK, "", append([]string{"rollout", "plan", "standard"}, canaryThenHalf...)...)
	checkGolden(t, "rollout_plan_cli", []byte(res.stdout))

	var fp client.FleetPlan
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", append([]string{"rollout", "plan", "standard", "--to", "2", "-o", "json"}, canaryThenHalf...)...).stdout, &fp)
	var sizes []int
	for _, w := range fp.Waves {
		sizes = append(sizes, w.Size)
	}
	if !slices.Equal(sizes, []int{1, 3, 1}) || fp.Counts.Pinned != 1 || fp.Counts.Current != 1 || fp.Counts.Tenants != 5 {
		t.Errorf("fleet plan: sizes %v, counts %+v", sizes, fp.Counts)
	}
	mustContain(t, "-o yaml", mustRunCLI(t, srv, exitOK, "", "rollout", "plan", "standard", "-o", "yaml").stdout, "plan: standard\n", "to_version: 2\n", "waves:\n  - name: rest\n")
	if res := mustRunCLI(t, srv, exitOK, "", "rollout", "list"); res.stdout != "" || res.stderr != "no rollouts\n" {
		t.Errorf("a plan started a rollout: %q %q", res.stdout, res.stderr)
	}

	// The server's refusals name the flags.
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "plan", "standard", "--to", "7", "--wave", "name=Canary,count=1")
	mustContain(t, "stderr", res.stderr, "(422 invalid_body)", "\n  --to: plan standard has no version 7; its versions are 1 to 2",
		"\n  --wave \"name=Canary,count=1\" name: ")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "plan", "nosuch")
	mustContain(t, "stderr", res.stderr, "(422 invalid_body)", "\n  /plan: no plan has this name; the plans are standard")
	// A version that a tenant's own config does not validate with is
	// refused, naming the tenant.
	mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", "env: {TIER: standard}", "-o", "json")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "plan", "standard", "--to", "3")
	mustContain(t, "stderr", res.stderr, "(422 plan_version_breaks_tenants)", "tenant t00 (")
}

// A rollout started, then watched to its end without a terminal: a line
// each time one changes, then the rollout as it ended; every tenant of the
// plan but the pinned one is at version 2.
func TestRolloutWatch(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	// Each tenant takes a moment to start at version 2, so that the watch
	// sees the waves go by.
	mustFleet(t, srv, 5, v2+"\nx-mock: {start_after: 200ms}")

	res := mustRunCLI(t, srv, exitOK, "", append([]string{"rollout", "start", "standard"}, canaryThenHalf...)...)
	mustContain(t, "start", res.stdout, "Rollout of plan standard (mock) to version 2: 5 tenants in 3 waves", "\nWave 1 of 3, canary: 1 tenant\n",
		"\nStarted rollout ", "\nID:  ")
	id := strings.TrimSuffix(strings.SplitN(strings.SplitN(res.stdout, "Started rollout ", 2)[1], "\n", 2)[0], ".")
	mustContain(t, "start's stderr", res.stderr, "follow it with: landlord rollout status "+id+" --watch")

	res = mustRunCLI(t, srv, exitOK, "", "rollout", "status", id, "--watch")
	mustContain(t, "status", res.stdout, "ID:            "+id+"\n", "State:         completed; 5 of 5 done\n", "\ncanary  1     0        0         1     0       0        0            done\n")
	lines := strings.Split(strings.TrimSuffix(res.stderr, "\n"), "\n")
	want := []string{
		"completed; 5 of 5 done (plan standard, * → 2)",
		"wave canary: done: 1 of 1 done",
		"wave half: done: 3 of 3 done",
		"wave rest: done: 1 of 1 done",
	}
	// Each line is written when it changes, and only then: once a wave is
	// done, its line is written no more.
	for _, w := range want {
		if n := strings.Count(res.stderr, w+"\n"); n != 1 {
			t.Errorf("progress has the line %q %d times, want once:\n%s", w, n, res.stderr)
		}
	}
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1] || strings.ContainsAny(lines[i], "\r\x1b") {
			t.Errorf("progress line %d: %q (after %q)", i, lines[i], lines[i-1])
		}
	}

	var list client.TenantList
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "list", "--plan", "standard", "-o", "json").stdout, &list)
	got := map[string]string{}
	for _, tn := range list.Tenants {
		got[tn.Name] = planString(tn.Plan)
	}
	wantPlans := map[string]string{"t00": "standard@2", "t01": "standard@2", "t02": "standard@2", "t03": "standard@2", "t04": "standard@2",
		"pinned": "standard@1 (pinned)", "current": "standard@2"}
	if diff := cmp.Diff(wantPlans, got); diff != "" {
		t.Errorf("plans after the rollout (-want +got):\n%s", diff)
	}
	mustContain(t, "list", mustRunCLI(t, srv, exitOK, "", "list", "--plan", "standard").stdout, "  standard@2  ", "  standard@1 (pinned)  ")

	// start --watch follows it too; -o json prints the rollout alone.
	mustRunCLI(t, srv, exitOK, "", "plan", "publish", "standard", "--config", "image: example.com/app:3", "-o", "json")
	res = mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "--from", "2", "--watch", "-o", "json")
	if ro := mustRollout(t, res.stdout); ro.State != client.RolloutCompleted || ro.FromVersion != 2 || ro.ToVersion != 3 || ro.Counts[client.MemberDone] != 6 {
		t.Errorf("start --watch: %+v", ro)
	}
	mustContain(t, "progress", res.stderr, "completed; 6 of 6 done (plan standard, 2 → 3)\n")
	res = mustRunCLI(t, srv, exitOK, "", "rollout", "list", "--plan", "standard")
	if n := strings.Count(res.stdout, "  completed  "); n != 2 {
		t.Errorf("rollout list:\n%s", res.stdout)
	}
}

// A version that fails its tenants halts the rollout on its failure
// budget: status --watch ends with exit code 1 naming the failed tenant,
// and so does a watch of a rollout aborted.
func TestRolloutHalts(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustFleet(t, srv, 3, `{"image": "example.com/app:2", "x-mock": {"fail": "terminal"}}`)

	ro := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "--wave", "name=canary,selector=ring=canary", "-o", "json").stdout)
	res := mustRunCLI(t, srv, exitFailure, "", "rollout", "status", ro.ID, "--watch")
	mustContain(t, "stderr", res.stderr, "\nfailed: t00\n",
		"landlord: rollout "+ro.ID+" halted: 1 tenant failed, more than its failure budget (--max-failures 0); resume it with landlord rollout resume "+ro.ID)
	mustContain(t, "stdout", res.stdout, "State:         halted at wave 1 of 2 (canary); 0 of 3 done, 1 failed\n", "\nFailed (1): t00\n")

	res = mustRunCLI(t, srv, exitOK, "", "rollout", "status", ro.ID)
	mustContain(t, "status", res.stdout, "halted", "\nFailed (1): t00\n")
	mustRunCLI(t, srv, exitOK, "", "rollout", "abort", ro.ID, "--rollback")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "status", ro.ID, "--watch", "--timeout", "1m")
	mustContain(t, "stderr", res.stderr, "landlord: rollout "+ro.ID+" was aborted")
	mustContain(t, "stdout", res.stdout, "State:         aborted, its changes rolled back")
}

// pause, resume and abort, each refused in a state that does not allow it;
// a second rollout of the plan is refused while one is active.
func TestRolloutActions(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Controller: true})
	mustFleet(t, srv, 3, v2)
	// The canary bakes for an hour: the rollout stays running.
	ro := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "--wave", "name=canary,selector=ring=canary", "--bake", "1h", "-o", "json").stdout)

	res := mustRunCLI(t, srv, exitTimeout, "", "rollout", "status", ro.ID, "--watch", "--timeout", "500ms")
	mustContain(t, "stderr", res.stderr, "landlord: gave up watching rollout "+ro.ID+" after 500ms: it is running: wave 1 of 2 (canary)")

	res = mustRunCLI(t, srv, exitOK, "", "rollout", "pause", ro.ID)
	mustContain(t, "pause", res.stdout, "State:         paused at wave 1 of 2 (canary)", "Message:       paused by ")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "pause", ro.ID)
	mustContain(t, "stderr", res.stderr, "landlord: pause rollout "+ro.ID+": ", "(409 rollout_state)")
	if got := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "resume", ro.ID, "-o", "json").stdout); got.State != client.RolloutRunning {
		t.Errorf("resumed: %s", got.State)
	}

	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "start", "standard", "-o", "json")
	mustContain(t, "stderr", res.stderr, "(409 rollout_active)", "abort it (landlord rollout abort "+ro.ID+")")
	res = mustRunCLI(t, srv, exitOK, "", "rollout", "list", "--active")
	if lines := strings.Split(strings.TrimSpace(res.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], ro.ID+"  standard  * → 2     running  1/2 canary") {
		t.Errorf("list --active:\n%s", res.stdout)
	}

	res = mustRunCLI(t, srv, exitOK, "", "rollout", "abort", ro.ID, "--rollback", "-o", "yaml")
	mustContain(t, "abort", res.stdout, "rollback: true\n")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "status", ro.ID, "--watch")
	mustContain(t, "stderr", res.stderr, "landlord: rollout "+ro.ID+" was aborted, and 1 tenant rolled back")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "resume", ro.ID)
	mustContain(t, "stderr", res.stderr, "(409 rollout_state)")
	if res := mustRunCLI(t, srv, exitOK, "", "rollout", "list", "--active"); res.stdout != "" {
		t.Errorf("list --active after the abort:\n%s", res.stdout)
	}
	var list client.RolloutList
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "rollout", "list", "--plan", "standard", "-o", "json").stdout, &list)
	if len(list.Rollouts) != 1 || list.Rollouts[0].State != client.RolloutAborted {
		t.Errorf("list --plan standard: %+v", list)
	}
	var tn client.Tenant
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "get", "t00", "-o", "json").stdout, &tn)
	if tn.Plan == nil || tn.Plan.Version != 1 {
		t.Errorf("t00 after the rollback: %+v", tn.Plan)
	}

	res = mustRunCLI(t, srv, exitNotFound, "", "rollout", "status", "nosuch")
	mustContain(t, "stderr", res.stderr, "(404 rollout_not_found)", "landlord rollout list")
	mustRunCLI(t, srv, exitNotFound, "", "rollout", "pause", "nosuch")
}

// Bad rollout flags are usage errors naming the flag, every problem at
// once, before anything is sent.
func TestRolloutFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"not key=value", []string{"--wave", "canary"}, []string{`--wave "canary": "canary" is not KEY=VALUE; the keys are name, selector, count, percent, max-in-flight`}},
		{"unknown key", []string{"--wave", "name=a,size=3"}, []string{`--wave "name=a,size=3": "size" is not a key of a wave`}},
		{"empty", []string{"--wave", ""}, []string{`--wave "": is empty; give KEY=VALUE pairs`}},
		{"empty item", []string{"--wave", "name=a,,count=1"}, []string{`--wave "name=a,,count=1": has an empty item`}},
		{"count", []string{"--wave", "count=0"}, []string{`--wave "count=0": count=0: must be a whole number from 1`}},
		{"percent", []string{"--wave", "percent=150%"}, []string{`--wave "percent=150%": percent=150%: must be a whole number from 1 to 100`}},
		{"count and percent", []string{"--wave", "count=1,percent=5"}, []string{`--wave "count=1,percent=5": give count or percent, not both`}},
		{"max in flight", []string{"--wave", "max-in-flight=x"}, []string{`--wave "max-in-flight=x": max-in-flight=x: must be a whole number from 1`}},
		{"selector", []string{"--wave", "selector=ring"}, []string{`--wave "selector=ring": selector=ring is not selector=LABEL=VALUE, such as selector=ring=canary`}},
		{"a selector label twice", []string{"--wave", "selector=ring=a,selector=ring=b"}, []string{`selector label ring is given twice`}},
		{"a key twice", []string{"--wave", "name=a,name=b"}, []string{`--wave "name=a,name=b": name is given twice`}},
		{"a name twice", []string{"--wave", "name=a", "--wave", "name=a,count=2"}, []string{`--wave "name=a,count=2": name a is the name of wave 1 (--wave "name=a")`}},
		{"every problem", []string{"--wave", "count=x,percent=200", "--wave", "bogus", "--to", "0", "--bake", "-1m"},
			[]string{`--wave "count=x,percent=200": count=x: must be a whole number from 1; percent=200: must be a whole number from 1 to 100; give count or percent, not both`,
				`--wave "bogus": "bogus" is not KEY=VALUE`, "--to 0: must be a version, from 1", "--bake -1m0s: must not be negative"}},
		{"from is to", []string{"--from", "2", "--to", "2"}, []string{"--from 2: is the version the rollout moves to (--to)"}},
		{"max failures", []string{"--max-failures", "-1"}, []string{"--max-failures -1: must be at least 0"}},
		{"deadline", []string{"--deadline", "0s"}, []string{"--deadline 0s: must be positive"}},
		{"a bad duration", []string{"--bake", "10"}, []string{`invalid argument "10" for "--bake" flag`}},
		{"too many waves", slices.Repeat([]string{"--wave", "count=1"}, 101), []string{"--wave is given 101 times; a rollout has at most 100 waves"}},
		{"waves of no percent", []string{"--waves-of", "0"}, []string{"--waves-of 0: must be a percent from 1 to 100"}},
		{"waves of and a wave", []string{"--waves-of", "10", "--wave", "count=1"}, []string{"[wave waves-of] were all set"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, verb := range []string{"plan", "start"} {
				// No server: nothing may be sent.
				args := append([]string{"rollout", verb, "standard", "--addr", "http://127.0.0.1:1"}, tt.args...)
				res := mustRunCLI(t, nil, exitUsage, "", args...)
				mustContain(t, "stderr", res.stderr, tt.want...)
			}
		})
	}
	mustContain(t, "--timeout alone", mustRunCLI(t, nil, exitUsage, "", "rollout", "status", "x", "--timeout", "1m").stderr, "--timeout needs --watch")
	mustContain(t, "help", mustRunCLI(t, nil, exitOK, "", "rollout", "start", "--help").stdout,
		"--wave describes a wave; repeat it for each, in order.", "selector=LABEL=VALUE", "max-in-flight=N")
	mustRunCLI(t, nil, exitUsage, "", "rollout", "bogus")
	mustRunCLI(t, nil, exitUsage, "", "rollout", "abort")
}

func TestParseWaves(t *testing.T) {
	got, err := parseWaves([]string{
		"name=canary,selector=ring=canary,count=1",
		" name = half , percent=50% , max_in_flight=2 ",
		"selector=tier=gold,selector=region=eu,max-in-flight=3",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []client.WaveSpec{
		{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1},
		{Name: "half", Percent: 50, MaxInFlight: 2},
		{Selector: map[string]string{"tier": "gold", "region": "eu"}, MaxInFlight: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waves (-want +got):\n%s", diff)
	}
}

// rollout plan and start with --to-plan: a fleet move, each tenant moved
// onto the other plan; the server's refusal of the target names the flag.
func TestRolloutToPlan(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{})
	mustFleet(t, srv, 2, v2)
	mustPlan(t, srv, "elsewhere", "image: example.com/other:1")
	res := mustRunCLI(t, srv, exitOK, "", "rollout", "plan", "standard", "--to-plan", "elsewhere")
	mustContain(t, "the fleet move's plan", res.stdout, "Rollout of plan standard (mock) moved to plan elsewhere (mock) version 1: 3 tenants", "3 move")
	res = mustRunCLI(t, srv, exitFailure, "", "rollout", "plan", "standard", "--to-plan", "nowhere")
	mustContain(t, "stderr", res.stderr, "(422 invalid_body)", "\n  --to-plan: no plan has this name")
	var fp client.FleetPlan
	mustDecode(t, mustRunCLI(t, srv, exitOK, "", "rollout", "plan", "standard", "--to-plan", "elsewhere", "--waves-of", "40", "-o", "json").stdout, &fp)
	var names []string
	for _, w := range fp.Waves {
		names = append(names, fmt.Sprintf("%s:%d", w.Name, w.Size))
	}
	if !slices.Equal(names, []string{"wave-1:2", "wave-2:1", "wave-3:0"}) {
		t.Errorf("--waves-of 40 of 3 tenants makes waves %v; want wave-1:2 wave-2:1 wave-3:0", names)
	}
	ro := mustRollout(t, mustRunCLI(t, srv, exitOK, "", "rollout", "start", "standard", "--to-plan", "elsewhere", "--max-failures", "1", "-o", "json").stdout)
	if ro.ToPlan != "elsewhere" || ro.ToProvider != "mock" || ro.ToVersion != 1 {
		t.Errorf("the fleet move started: to %s on %s version %d; want elsewhere on mock version 1", ro.ToPlan, ro.ToProvider, ro.ToVersion)
	}
	mustContain(t, "rollout status", mustRunCLI(t, srv, exitOK, "", "rollout", "status", ro.ID).stdout, "plan elsewhere on mock (make-before-break)")
	// A tenant on a plan is moved only onto another plan, which the move names.
	res = mustRunCLI(t, srv, exitFailure, "", "move", "t00", "--config", "image: example.com/app:1")
	mustContain(t, "stderr", res.stderr, "(409 tenant_moving)", "follows plan standard")
}
