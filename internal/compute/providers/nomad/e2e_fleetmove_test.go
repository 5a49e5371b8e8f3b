package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
)

// planConfig is portableConfig as a plan's layer: without the provider
// (the plan's) and without GREETING, which each tenant sets.
func planConfig(image string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": %q, "ports": [{"name": "http", "container_port": 8080}],
		"health_check": {"http": {"port": 8080, "path": "/healthz"}, "interval": "1s", "timeout": "1s"},
		"resources": {"cpu_millicores": 100, "memory_mib": 32}}`, image))
}

// TestFleetMoveDockerToNomad moves the 10 tenants of plan standard (on the
// docker provider; each running the echo image, a demo workload answering
// HTTP with its environment) onto plan standard-nomad (on nomad) with one
// rollout of three waves, a prober following each tenant as a client
// would. Every tenant ends ready on nomad, following standard-nomad, its
// endpoint answering its own GREETING (its override, carried by the move)
// from its Nomad job, with no container or network left on the Engine;
// each prober saw at most one failed probe. It logs each tenant's move
// timings and availability gap, and the waves' times.
func TestFleetMoveDockerToNomad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	m := startMixed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	plans := m.client.Plans()
	for _, p := range []struct{ name, provider string }{{"standard", "docker"}, {"standard-nomad", "nomad"}} {
		if _, err := plans.Create(ctx, llclient.CreatePlanRequest{Name: p.name, Provider: p.provider}, llclient.CreatePlanOptions{}); err != nil {
			t.Fatalf("create plan %s: %v", p.name, err)
		}
		if _, err := plans.Publish(ctx, p.name, llclient.PublishVersionRequest{Config: planConfig(m.images[0]), Message: "echo"}, llclient.PublishOptions{}); err != nil {
			t.Fatalf("publish plan %s: %v", p.name, err)
		}
	}
	const n = 10
	names := make([]string, n)
	ids := map[string]string{} // by name
	for i := range n {
		names[i] = fmt.Sprintf("demo-%02d", i)
		created, err := m.tenants.Create(ctx, llclient.CreateTenantRequest{Name: names[i], Plan: &llclient.PlanChoice{Name: "standard"},
			ComputeConfig: json.RawMessage(fmt.Sprintf(`{"env": {"GREETING": %q}}`, names[i]))}, llclient.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", names[i], err)
		}
		ids[names[i]] = created.ID
	}
	begin := time.Now()
	for _, name := range names {
		tn := waitTenant(ctx, t, m.tenants, ids[name], llclient.UntilReady)
		if tn.ComputeProvider != "docker" || len(m.containers(t, name)) != 1 {
			t.Fatalf("%s is ready on %q with containers %v; want on docker with one", name, tn.ComputeProvider, m.containers(t, name))
		}
	}
	t.Logf("%d tenants of plan standard ready on docker in %v", n, time.Since(begin).Round(time.Millisecond))

	// The fleet plan: each tenant moves, from docker to nomad.
	req := llclient.CreateRolloutRequest{Plan: "standard", ToPlan: "standard-nomad", MaxFailures: 1,
		Waves: []llclient.WaveSpec{{Name: "canary", Count: 2}, {Name: "half", Percent: 40}}} // and "rest", 4
	fp, err := m.client.Rollouts().Plan(ctx, req)
	if err != nil {
		t.Fatalf("fleet plan: %v", err)
	}
	if fp.ToPlan != "standard-nomad" || fp.ToProvider != "nomad" || fp.Provider != "docker" || fp.Counts.Tenants != n || fp.Counts.Actions[llclient.ActionMove] != n {
		t.Fatalf("the fleet plan moves %d tenants (actions %v) from %s on %s to %s on %s; want all %d moved from docker to standard-nomad on nomad",
			fp.Counts.Tenants, fp.Counts.Actions, fp.Plan, fp.Provider, fp.ToPlan, fp.ToProvider, n)
	}
	if sizes := []int{len(fp.Waves[0].Tenants), len(fp.Waves[1].Tenants), len(fp.Waves[2].Tenants)}; len(fp.Waves) != 3 || !slices.Equal(sizes, []int{2, 4, 4}) {
		t.Fatalf("the fleet plan's waves are %+v; want canary 2, half 4, rest 4", fp.Waves)
	}

	probers := map[string]*prober{}
	for _, name := range names {
		probers[name] = startProber(m.tenants, ids[name])
	}
	stopAll := func() map[string][]look {
		out := map[string][]look{}
		for name, p := range probers {
			out[name] = p.stop()
		}
		probers = nil
		return out
	}
	defer func() {
		if probers != nil {
			stopAll()
		}
	}()
	requested := time.Now()
	ro, err := m.client.Rollouts().Start(ctx, req, llclient.StartOptions{})
	if err != nil {
		t.Fatalf("start the fleet move: %v", err)
	}
	for {
		if ro, err = m.client.Rollouts().Get(ctx, ro.ID); err != nil {
			t.Fatalf("get rollout %s: %v", ro.ID, err)
		}
		if ro.State == "completed" {
			break
		}
		if ro.State != "running" {
			t.Fatalf("the fleet move is %s: %s (failed %v)", ro.State, ro.Message, ro.Failed)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the fleet move did not complete: wave %d (%s), counts %v", ro.Wave, ro.WaveName, ro.Counts)
		case <-time.After(250 * time.Millisecond):
		}
	}
	completed := time.Now()
	looks := stopAll()
	t.Logf("fleet move of %d tenants docker→nomad in 3 waves: start → completed in %.2fs", n, completed.Sub(requested).Seconds())
	events, err := m.client.Rollouts().Events(ctx, ro.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Events {
		if ev.Type == "wave_started" || ev.Type == "completed" {
			t.Logf("  %.2fs %s: %s", ev.Time.Sub(requested).Seconds(), ev.Type, ev.Message)
		}
	}

	for _, name := range names {
		tn, err := m.tenants.Get(ctx, ids[name], llclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tn.Status != llclient.StatusReady || tn.ComputeProvider != "nomad" || tn.Plan == nil || tn.Plan.Name != "standard-nomad" || len(tn.Endpoints) == 0 {
			t.Errorf("%s after the fleet move: %s on %q following %+v with endpoints %v; want ready on nomad following standard-nomad", name, tn.Status, tn.ComputeProvider, tn.Plan, tn.Endpoints)
			continue
		}
		jobID := tn.ResourceIDs["job"]
		if env := envAt(ctx, t, tn.Endpoints[0].Address); env["GREETING"] != name || jobID == "" || env["NOMAD_JOB_ID"] != jobID {
			t.Errorf("%s's endpoint %s answers GREETING=%q from job %q; want %s from nomad job %q", name, tn.Endpoints[0].Address, env["GREETING"], env["NOMAD_JOB_ID"], name, jobID)
		}
		if left := m.containers(t, name); len(left) != 0 {
			t.Errorf("%s's docker containers are left after the fleet move: %v", name, left)
		}
		if left := m.networks(t, name); len(left) != 0 {
			t.Errorf("%s's docker networks are left after the fleet move: %v", name, left)
		}
		evs := moveEvents(ctx, t, m.tenants, ids[name])
		asked, switched, done := eventWith(t, evs, "asked for"), eventWith(t, evs, "switched from docker to nomad"), eventWith(t, evs, "from docker to nomad is done")
		g := gapOf(looks[name], asked.Time, done.Time.Add(time.Second))
		t.Logf("%s: asked=%.2fs switched=+%.2fs done=+%.2fs failed_probes=%d longest_gap_ms=%d probes=%d api_errors=%d",
			name, asked.Time.Sub(requested).Seconds(), switched.Time.Sub(asked.Time).Seconds(), done.Time.Sub(asked.Time).Seconds(),
			g.failed, g.longest.Milliseconds(), g.probes, g.apiErrors)
		for _, f := range g.failures {
			t.Logf("  failed probe of %s at %.3fs of %s (move step %q): %v", name, f.at.Sub(requested).Seconds(), f.address, f.step, f.err)
		}
		if g.failed > 1 {
			t.Errorf("%s: %d probes failed during its move, longest gap %v; at most one may", name, g.failed, g.longest)
		}
		if g.probes == 0 {
			t.Errorf("%s: no probe during its move", name)
		}
	}
	if p, err := plans.Get(ctx, "standard"); err != nil || p.CurrentVersion != 1 {
		t.Errorf("plan standard after the fleet move: %+v, %v; want its current version still 1", p, err)
	}
	if err := plans.Delete(ctx, "standard"); err != nil {
		t.Errorf("delete plan standard, which no tenant follows any more: %v", err)
	}

	for _, name := range names {
		if _, err := m.tenants.Delete(ctx, ids[name], llclient.DeleteOptions{}); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	for _, name := range names {
		waitTenant(ctx, t, m.tenants, ids[name], llclient.UntilDeleted)
	}
	if jobs, _, err := m.agent.Client.Jobs().List(nil); err == nil {
		for _, j := range jobs {
			if strings.HasPrefix(j.Name, "demo-") && j.Status != "dead" {
				t.Errorf("job %s (%s) is left after the tenants' deletion", j.ID, j.Status)
			}
		}
	}
}
