package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// goldenFleetPlan is a rollout of plan standard to version 3 over a canary
// and the rest: changes with and without values, a tenant whose config
// does not change, one out of its window, a pinned tenant and current ones.
func goldenFleetPlan() client.FleetPlan {
	opens := goldenNow.Add(14 * time.Hour)
	image := client.ConfigChange{Field: "containers/app/image", From: "ghcr.io/example/app:1.4", To: "ghcr.io/example/app:1.5"}
	return client.FleetPlan{
		Plan: "standard", Provider: "docker", ToVersion: 3,
		Waves: []client.FleetPlanWave{
			{Name: "canary", Size: 1, Tenants: []client.FleetPlanTenant{
				{Name: "acme", FromVersion: 2, ToVersion: 3, Wave: "canary", Action: client.ActionReplace, WindowOpen: true, Diff: "d1"},
			}},
			{Name: "thirty", Size: 2, Tenants: []client.FleetPlanTenant{
				{Name: "globex-corporation", FromVersion: 1, ToVersion: 3, Wave: "thirty", Action: client.ActionReplace, WindowOpen: true, Diff: "d2"},
				{Name: "initech", FromVersion: 2, ToVersion: 3, Wave: "thirty", Action: client.ActionNone, WindowOpen: false, WindowOpensAt: &opens},
			}},
			{Name: "rest", Size: 0, Tenants: []client.FleetPlanTenant{}},
		},
		Diffs: []client.FleetPlanDiff{
			{ID: "d1", Tenants: 1, Changes: []client.ConfigChange{image, {Field: "containers/app/env/LOG_LEVEL", To: "info"}, {Field: "secrets/DB_PASSWORD"}}},
			{ID: "d2", Tenants: 1, Changes: []client.ConfigChange{image, {Field: "containers/sidecar", From: "envoy:1.30"}}},
		},
		Pinned:  []client.PlanTenant{{Name: "hooli", Version: 1}},
		Current: []client.PlanTenant{{Name: "umbrella", Version: 3}, {Name: "wayne", Version: 3}},
		Counts: client.FleetPlanCounts{Waves: map[string]int{"canary": 1, "thirty": 2, "rest": 0}, Tenants: 3, Pinned: 1, Current: 2, OutOfWindow: 1,
			Actions: map[string]int{client.ActionReplace: 2, client.ActionNone: 1}},
	}
}

// goldenRollout is a rollout halted in its second wave: one tenant failed,
// one waits for its window.
func goldenRollout() client.Rollout {
	bakeFrom := ago(3 * time.Minute)
	opens := goldenNow.Add(5 * time.Hour)
	return client.Rollout{
		ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f20", Plan: "standard", FromVersion: 2, ToVersion: 3, State: client.RolloutHalted,
		Wave: 1, WaveName: "thirty",
		Waves: []client.RolloutWave{
			{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1, Size: 1, Counts: map[string]int{client.MemberDone: 1}},
			{Name: "thirty", Percent: 30, Size: 3, Counts: map[string]int{client.MemberDone: 1, client.MemberFailed: 1, client.MemberPending: 1}},
			{Name: "rest", Size: 6, Counts: map[string]int{client.MemberPending: 5, client.MemberSkipped: 1}},
		},
		Bake: "10m0s", Deadline: "15m0s", MaxFailures: 0, BakeFrom: &bakeFrom,
		Counts:  map[string]int{client.MemberDone: 2, client.MemberFailed: 1, client.MemberPending: 6, client.MemberSkipped: 1},
		Failed:  []string{"globex-corporation"},
		Waiting: []client.WaitingTenant{{TenantName: "initech", OpensAt: &opens}},
		Message: "halted: 1 tenant failed, more than the failure budget of 0: globex-corporation; resume to go on, or abort",
		Version: 9, CreatedBy: "admin", CreatedAt: ago(25 * time.Minute), UpdatedAt: ago(time.Minute),
	}
}

func TestRenderFleetGolden(t *testing.T) {
	running := goldenRollout()
	running.ID = "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f22"
	running.State, running.Message, running.Failed, running.Waiting = client.RolloutRunning, "", nil, nil
	running.Waves[1].Counts = map[string]int{client.MemberDone: 3}
	running.Counts = map[string]int{client.MemberDone: 4, client.MemberPending: 5, client.MemberSkipped: 1}
	finished := ago(time.Minute)
	completed := client.Rollout{
		ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f21", Plan: "premium", ToVersion: 7, State: client.RolloutCompleted, Wave: 1,
		Waves: []client.RolloutWave{{Name: "rest", Size: 4, Counts: map[string]int{client.MemberDone: 4}}},
		Bake:  "0s", Deadline: "1h30m0s", Counts: map[string]int{client.MemberDone: 4},
		CreatedAt: ago(3 * 24 * time.Hour), UpdatedAt: finished, FinishedAt: &finished,
	}
	plan := client.Plan{Name: "standard", Provider: "docker", Description: "the standard tier", LatestVersion: 3, CurrentVersion: 2,
		CreatedBy: "admin", CreatedAt: ago(30 * 24 * time.Hour)}
	versions := []client.PlanVersion{
		{Plan: "standard", Version: 1, Config: json.RawMessage(`{"image":"ghcr.io/example/app:1.3"}`), Message: "first", CreatedBy: "admin", CreatedAt: ago(30 * 24 * time.Hour)},
		{Plan: "standard", Version: 2, Config: json.RawMessage(`{"image":"ghcr.io/example/app:1.4","env":{"MODE":"prod"}}`), CreatedBy: "ci", CreatedAt: ago(4 * 24 * time.Hour)},
		{Plan: "standard", Version: 3, Config: json.RawMessage(`{"image":"ghcr.io/example/app:1.5","env":{"MODE":"prod"}}`), Message: "app 1.5, with its new cache", CreatedBy: "ci", CreatedAt: ago(time.Hour)},
	}
	from := goldenFleetPlan()
	from.FromVersion = 2
	for _, tt := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"rollout_plan", func(b *bytes.Buffer) error { return renderFleetPlan(b, goldenFleetPlan(), goldenNow) }},
		{"rollout_plan_from", func(b *bytes.Buffer) error { return renderFleetPlan(b, from, goldenNow) }},
		{"rollout_status_halted", func(b *bytes.Buffer) error { return renderRollout(b, goldenRollout(), goldenNow) }},
		{"rollout_status_baking", func(b *bytes.Buffer) error { return renderRollout(b, running, goldenNow) }},
		{"rollout_status_completed", func(b *bytes.Buffer) error { return renderRollout(b, completed, goldenNow) }},
		{"rollout_list", func(b *bytes.Buffer) error {
			return renderRollouts(b, []client.Rollout{goldenRollout(), running, completed}, goldenNow)
		}},
		{"plan_get", func(b *bytes.Buffer) error { return renderPlan(b, plan, versions, goldenNow) }},
		{"plan_list", func(b *bytes.Buffer) error {
			return renderPlans(b, []client.Plan{plan, {Name: "premium", Provider: "kubernetes", CreatedAt: ago(time.Hour)}}, goldenNow)
		}},
		{"plan_versions", func(b *bytes.Buffer) error { return renderVersions(b, versions, 2, goldenNow) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name, b.Bytes())
		})
	}
}

// The progress of a watched rollout on a terminal is a block of lines
// redrawn in place: however often it is redrawn, and however long its
// lines, the screen shows one block, each line within the width.
func TestRolloutProgressOnTerminal(t *testing.T) {
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return goldenNow }
	for _, width := range []int{80, 40, 160} {
		var out bytes.Buffer
		p := newRolloutProgress(&out, true, width)
		ro := goldenRollout()
		ro.State, ro.Failed = client.RolloutRunning, nil
		p.show(ro)
		for range 3 {
			p.mu.Lock()
			p.redraw() // as the ticker does every second
			p.mu.Unlock()
		}
		ro.Failed = []string{"globex-corporation"} // a line more
		p.show(ro)
		ro.Failed = nil // a line less
		ro.Waves[2].Counts = map[string]int{client.MemberPending: 6}
		p.show(ro)
		p.stop()
		s := newScreen(width)
		s.write(out.String())
		lines := s.lines()
		if len(lines) != 4 {
			t.Fatalf("width %d: %d lines on the screen, want the block of 4:\n%s", width, len(lines), strings.Join(lines, "\n"))
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > width-1 {
				t.Errorf("width %d: %q takes %d columns", width, l, n)
			}
		}
		if !regexp.MustCompile(`^\[\d+s\] running: wave 2 of 3 \(thirty\)`).MatchString(lines[0]) || !strings.HasPrefix(lines[1], "wave canary: done") ||
			!strings.HasPrefix(lines[3], "wave rest: next") {
			t.Errorf("width %d: the block:\n%s", width, strings.Join(lines, "\n"))
		}
	}
}

// Without a terminal, a line is written when it changes and only then.
func TestRolloutProgressWithoutTerminal(t *testing.T) {
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return goldenNow }
	var out bytes.Buffer
	p := newRolloutProgress(&out, false, 0)
	ro := goldenRollout()
	ro.State, ro.Failed, ro.Waiting = client.RolloutRunning, nil, nil
	if !p.show(ro) {
		t.Error("the first show changed nothing")
	}
	ro.Version++ // nothing shown changed
	if p.show(ro) {
		t.Error("a show of the same lines changed something")
	}
	ro.Waves[1].Counts = map[string]int{client.MemberDone: 2, client.MemberFailed: 1}
	ro.Counts[client.MemberDone], ro.Counts[client.MemberPending] = 3, 5
	ro.Failed = []string{"globex-corporation"}
	p.show(ro)
	p.stop()
	want := `running: wave 2 of 3 (thirty); 2 of 10 done, 1 failed (plan standard, 2 → 3)
wave canary: done: 1 of 1 done
wave thirty: baking until 2026-03-14T12:07:00Z: 1 of 3 done, 1 pending, 1 failed
wave rest: next: 0 of 6 done, 5 pending, 1 skipped
running: wave 2 of 3 (thirty); 3 of 10 done, 1 failed (plan standard, 2 → 3)
wave thirty: baking until 2026-03-14T12:07:00Z: 2 of 3 done, 1 failed
failed: globex-corporation
`
	if out.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", out.String(), want)
	}
}

// A diff of many changes is shown at its first tenant, and the others
// refer to it; one the server did not list all of says how many it left
// out.
func TestRenderFleetPlanSharedDiffs(t *testing.T) {
	many := make([]client.ConfigChange, 5)
	for i := range many {
		many[i] = client.ConfigChange{Field: fmt.Sprintf("containers/app/env/K%d", i), To: "v"}
	}
	tenant := func(name, diff string) client.FleetPlanTenant {
		return client.FleetPlanTenant{Name: name, FromVersion: 1, ToVersion: 2, Wave: "rest", Action: client.ActionReplace, WindowOpen: true, Diff: diff}
	}
	fp := client.FleetPlan{Plan: "standard", Provider: "docker", ToVersion: 2,
		Waves: []client.FleetPlanWave{{Name: "rest", Size: 4, Tenants: []client.FleetPlanTenant{
			tenant("t00", "d1"), tenant("t01", "d1"), tenant("t02", "d2"), tenant("t03", "d3")}}},
		Diffs: []client.FleetPlanDiff{
			{ID: "d1", Tenants: 2, Changes: many, ChangesOmitted: 95},
			{ID: "d2", Tenants: 1, Changes: many[:1]},
			{ID: "d3", Tenants: 1, Changes: []client.ConfigChange{}, ChangesOmitted: 7},
		},
		Counts: client.FleetPlanCounts{Tenants: 4, Actions: map[string]int{client.ActionReplace: 4}},
	}
	var b bytes.Buffer
	if err := renderFleetPlan(&b, fp, goldenNow); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"t00  1 → 2  replace  containers/app/env/K0: (none) → v\n",
		"and 95 more, not listed\n",
		"t01  1 → 2  replace  the 100 changes shown at t00\n",
		"t02  1 → 2  replace  containers/app/env/K0: (none) → v\n",
		"t03  1 → 2  replace  7 changes, not listed: the fleet plan's changes were too long to list them all\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "K4"); n != 1 {
		t.Errorf("the changes of d1 are shown %d times, want once:\n%s", n, out)
	}
}
