package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// rolloutTenants is the size of the fleet rolled out on the Engine.
const rolloutTenants = 10

// TestRolloutOnDocker is issue 21's end-to-end test on the real Docker
// Engine: ten tenants of the demo image follow plan standard v1, whose
// DEMO_MESSAGE the page shows; `landlord rollout plan` prints the fleet
// plan of a rollout to v2 in waves canary (1 tenant, by label), 30% and
// the rest; `landlord rollout start` starts it and `landlord rollout status
// --watch` follows it to completion. At the end every endpoint answers v2,
// and what happened is what the fleet plan said: each tenant changed once,
// in the wave it named, each wave after the one before had finished.
func TestRolloutOnDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("builds landlord and runs tenants on the Engine")
	}
	cli := dockertest.Engine(t)
	bin := filepath.Join(t.TempDir(), "landlord")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	ref := "landlord-test/rollout-demo:" + dockertest.RunID()
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	mustRunCLI(t, nil, exitOK, "", "demo", "image", "--binary", bin, "--tag", ref)

	prefix := dockertest.Prefix("lltest-ro")
	t.Cleanup(func() { removeNamed(cli, prefix) })
	l := servetest.New(t, servetest.Options{Config: "compute:\n  docker:\n    label_prefix: " + prefix + "\n    stop_timeout: 1s\n    address_pool: " + dockertest.AddressPool + "\n"})
	l.Start()
	addr := "http://" + l.Addr()
	run := func(args ...string) string {
		t.Helper()
		return mustRunCLI(t, nil, exitOK, "", append(args, "--addr", addr)...).stdout
	}

	run("plan", "create", "standard", "--description", "the demo page")
	for _, v := range []string{"v1", "v2"} {
		run("plan", "publish", "standard", "--config",
			fmt.Sprintf(`{"image":%q,"ports":[{"container_port":8080}],"env":{"DEMO_MESSAGE":"standard %s"}}`, ref, v))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c := l.Client()
	ids := map[string]string{} // name → id
	for i := range rolloutTenants {
		name := fmt.Sprintf("t%02d", i)
		labels := map[string]string{"ring": "main"}
		if i == 4 { // not the first by id or name: the selector chooses it
			labels["ring"] = "canary"
		}
		tn, err := c.Tenants().Create(ctx, llclient.CreateTenantRequest{Name: name, ComputeConfig: json.RawMessage(fmt.Sprintf(`{"args":[%q]}`, name)),
			Labels: labels, Plan: &llclient.PlanChoice{Name: "standard"}}, llclient.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = tn.ID
	}
	for name, id := range ids {
		if _, err := c.Tenants().Wait(ctx, id, llclient.UntilReady, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mustContain(t, name+"'s page on v1", demoPage(t, addr, name), "landlord demo: tenant "+name, "message:  standard v1")
	}

	waves := []string{"--to", "2", "--wave", "name=canary,selector=ring=canary,count=1", "--wave", "name=thirty,percent=30", "--max-failures", "0"}
	printed := run(append([]string{"rollout", "plan", "standard"}, waves...)...)
	t.Logf("landlord rollout plan:\n%s", printed)
	var plan llclient.FleetPlan
	if err := json.Unmarshal([]byte(run(append([]string{"rollout", "plan", "standard", "-o", "json"}, waves...)...)), &plan); err != nil {
		t.Fatal(err)
	}
	planned := map[string]string{} // tenant → wave
	var sizes []string
	for _, w := range plan.Waves {
		sizes = append(sizes, fmt.Sprintf("%s %d", w.Name, w.Size))
		for _, tn := range w.Tenants {
			planned[tn.Name] = w.Name
			d := plan.DiffOf(tn)
			if tn.Action != llclient.ActionReplace || tn.FromVersion != 1 || tn.ToVersion != 2 || d == nil || len(d.Changes) != 1 ||
				d.Changes[0].From != "standard v1" || d.Changes[0].To != "standard v2" {
				t.Errorf("fleet plan of %s: %+v, diff %+v; want v1 to v2 replacing its container for DEMO_MESSAGE alone", tn.Name, tn, d)
			}
			mustContain(t, "the printed fleet plan", printed, tn.Name)
		}
	}
	if got := strings.Join(sizes, ", "); got != "canary 1, thirty 3, rest 6" || planned["t04"] != "canary" {
		t.Fatalf("fleet plan waves %s with t04 in %q; want canary 1 (t04), thirty 3, rest 6", got, planned["t04"])
	}

	var ro llclient.Rollout
	if err := json.Unmarshal([]byte(run(append([]string{"rollout", "start", "standard", "-o", "json"}, waves...)...)), &ro); err != nil {
		t.Fatal(err)
	}
	watched := run("rollout", "status", ro.ID, "--watch", "--timeout", "4m")
	t.Logf("landlord rollout status --watch:\n%s", watched)
	mustContain(t, "rollout status --watch", watched, "completed")

	// What happened is what the fleet plan said.
	members, err := c.Rollouts().Members(ctx, ro.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(members.Members) != rolloutTenants {
		t.Fatalf("the rollout had %d members, the fleet plan %d", len(members.Members), rolloutTenants)
	}
	var waveEnds, waveStarts []time.Time // by wave index
	for _, m := range members.Members {
		if m.State != llclient.MemberDone || m.WaveName != planned[m.TenantName] || m.ChangedAt == nil || m.FinishedAt == nil {
			t.Errorf("member %s: %s in wave %s; the fleet plan put it in %s", m.TenantName, m.State, m.WaveName, planned[m.TenantName])
			continue
		}
		for len(waveEnds) <= m.Wave {
			waveEnds, waveStarts = append(waveEnds, time.Time{}), append(waveStarts, time.Time{})
		}
		if m.FinishedAt.After(waveEnds[m.Wave]) {
			waveEnds[m.Wave] = *m.FinishedAt
		}
		if waveStarts[m.Wave].IsZero() || m.ChangedAt.Before(waveStarts[m.Wave]) {
			waveStarts[m.Wave] = *m.ChangedAt
		}
	}
	for i := 1; i < len(waveStarts); i++ {
		if waveStarts[i].Before(waveEnds[i-1]) {
			t.Errorf("wave %d began at %s, before wave %d had finished at %s", i, waveStarts[i], i-1, waveEnds[i-1])
		}
	}
	for name, id := range ids {
		tn, err := c.Tenants().Get(ctx, id, llclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tn.Plan == nil || tn.Plan.Version != 2 || tn.Status != llclient.StatusReady || tn.ObservedGeneration != tn.Generation {
			t.Errorf("%s: plan %+v, %s at observed generation %d of %d", name, tn.Plan, tn.Status, tn.ObservedGeneration, tn.Generation)
		}
		updates := 0
		for ev, err := range c.Tenants().AllEvents(ctx, id, llclient.EventOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == "updated" {
				updates++
			}
		}
		if updates != 1 {
			t.Errorf("%s was changed %d times, want once", name, updates)
		}
		mustContain(t, name+"'s page on v2", demoPage(t, addr, name), "landlord demo: tenant "+name, "message:  standard v2")
	}
	if p, err := c.Plans().Get(ctx, "standard"); err != nil || p.CurrentVersion != 2 {
		t.Errorf("plan standard after the rollout: %+v, %v; want current version 2", p, err)
	}
}
