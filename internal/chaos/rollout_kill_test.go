package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// The size of a rollout killed mid-wave: enough tenants for a wave to be
// in flight when the kill lands, few enough for CI.
const (
	rolloutKillTenants = 12
	rolloutKillKills   = 3
	// rolloutKillTimeout bounds one database's run.
	rolloutKillTimeout = 3 * time.Minute
)

// rolloutKillConfig runs tenants on the mock provider; a short lease lets
// the process started after a kill drive the rollouts soon (the killed
// one never released its lease).
const rolloutKillConfig = `compute:
  default: mock
  mock: {}
controller:
  lease_ttl: 2s
`

// TestKillMidRollout is issue 21's crash test: a rollout of 12 tenants in
// waves (2, then the rest 3 at a time), each update taking 300 ms on the
// mock, is interrupted by SIGKILL of landlord serve three times mid-wave,
// each time started again on the same database. The rollout must finish
// with every tenant at the new version, ready at the generation that
// carries it, and changed exactly once: one desired-state change in its
// history and one "tenant_changed" event in the rollout's.
func TestKillMidRollout(t *testing.T) {
	onBothStores(t, killMidRollout)
}

// onBothStores runs a kill test on SQLite and on PostgreSQL: landlord serve
// (p) started on a new database, with the test's deadline and a client.
func onBothStores(t *testing.T, run func(ctx context.Context, t *testing.T, p *servetest.Process, c *llclient.Client)) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, store := range []struct {
		name     string
		database func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return pgtest.NewDatabase(t) }},
	} {
		t.Run(store.name, func(t *testing.T) {
			p := servetest.New(t, servetest.Options{Config: rolloutKillConfig, Database: store.database(t)})
			p.Start()
			ctx, cancel := context.WithTimeout(t.Context(), rolloutKillTimeout)
			defer cancel()
			run(ctx, t, p, p.Client())
		})
	}
}

func killMidRollout(ctx context.Context, t *testing.T, p *servetest.Process, c *llclient.Client) {
	mustSlowPlan(ctx, t, c, "standard", "app:1", "app:2")
	ids := readyFleet(ctx, t, c)

	ro, err := c.Rollouts().Start(ctx, llclient.CreateRolloutRequest{Plan: "standard", ToVersion: 2,
		Waves: []llclient.WaveSpec{{Name: "first", Count: 2}, {Name: "rest", MaxInFlight: 3}}}, llclient.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	killMidWaves(ctx, t, p, c, ro.ID)
	changed := changedOnce(ctx, t, c, ro.ID)
	for i, id := range ids {
		tn, err := c.Tenants().Get(ctx, id, llclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tn.Plan == nil || tn.Plan.Version != 2 || tn.Generation != 2 {
			t.Errorf("t%02d: plan %+v at generation %d; want version 2 at generation 2", i, tn.Plan, tn.Generation)
		}
		if changed[id] != 1 {
			t.Errorf("t%02d: %d changed events in the rollout's history, want 1", i, changed[id])
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
			t.Errorf("t%02d: %d desired-state changes in its history, want 1", i, updates)
		}
		// Ready at the generation that carries v2: the controller of the
		// last process converged it, whatever the kills interrupted.
		if _, err := c.Tenants().Wait(ctx, id, llclient.UntilReady, nil); err != nil {
			t.Errorf("t%02d: %v", i, err)
		}
	}
}

// TestKillMidFleetMove is TestKillMidRollout for a fleet move: the 12
// tenants of plan standard move onto plan elsewhere (each move's target
// taking 300 ms to provision and its source 300 ms to destroy, on the
// mock) in the same waves, through three kills of landlord serve mid-wave.
// The fleet move must complete with every tenant ready on plan elsewhere,
// its move over, and moved exactly once: one "tenant_changed" event in the
// rollout's history and one move asked for, switched and done in its own.
func TestKillMidFleetMove(t *testing.T) {
	onBothStores(t, killMidFleetMove)
}

func killMidFleetMove(ctx context.Context, t *testing.T, p *servetest.Process, c *llclient.Client) {
	mustSlowPlan(ctx, t, c, "standard", "app:1")
	mustSlowPlan(ctx, t, c, "elsewhere", "other:1")
	ids := readyFleet(ctx, t, c)

	ro, err := c.Rollouts().Start(ctx, llclient.CreateRolloutRequest{Plan: "standard", ToPlan: "elsewhere",
		Waves: []llclient.WaveSpec{{Name: "first", Count: 2}, {Name: "rest", MaxInFlight: 3}}}, llclient.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	killMidWaves(ctx, t, p, c, ro.ID)
	changed := changedOnce(ctx, t, c, ro.ID)
	for i, id := range ids {
		tn, err := c.Tenants().Get(ctx, id, llclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		moving := len(tn.Placements) > 0 && tn.Placements[0].Move != nil
		if tn.Plan == nil || tn.Plan.Name != "elsewhere" || tn.Status != llclient.StatusReady || moving {
			t.Errorf("t%02d: plan %+v, %s, moving %t; want ready on plan elsewhere, its move over", i, tn.Plan, tn.Status, moving)
		}
		if changed[id] != 1 {
			t.Errorf("t%02d: %d changed events in the rollout's history, want 1", i, changed[id])
		}
		steps := map[string]int{}
		for ev, err := range c.Tenants().AllEvents(ctx, id, llclient.EventOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []string{"asked for", "switched from", "is done"} {
				if ev.Type == "move" && strings.Contains(ev.Message, step) {
					steps[step]++
				}
			}
		}
		if steps["asked for"] != 1 || steps["switched from"] != 1 || steps["is done"] != 1 {
			t.Errorf("t%02d: its history records the move's steps %v; want each once", i, steps)
		}
	}
}

// mustSlowPlan makes a plan on the mock with a version per image, each
// workload taking 300 ms to change.
func mustSlowPlan(ctx context.Context, t *testing.T, c *llclient.Client, name string, images ...string) {
	t.Helper()
	if _, err := c.Plans().Create(ctx, llclient.CreatePlanRequest{Name: name}, llclient.CreatePlanOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, image := range images {
		config := json.RawMessage(fmt.Sprintf(`{"image":%q,"x-mock":{"latency":"300ms"}}`, image))
		if _, err := c.Plans().Publish(ctx, name, llclient.PublishVersionRequest{Config: config}, llclient.PublishOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// readyFleet creates rolloutKillTenants tenants on plan standard's first
// version, t00…, and waits until each is ready; it returns their ids.
func readyFleet(ctx context.Context, t *testing.T, c *llclient.Client) []string {
	t.Helper()
	ids := make([]string, rolloutKillTenants)
	for i := range ids {
		tn, err := c.Tenants().Create(ctx, llclient.CreateTenantRequest{Name: fmt.Sprintf("t%02d", i), ComputeConfig: json.RawMessage(`{}`),
			Plan: &llclient.PlanChoice{Name: "standard"}}, llclient.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = tn.ID
	}
	for _, id := range ids {
		if _, err := c.Tenants().Wait(ctx, id, llclient.UntilReady, nil); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// killMidWaves kills landlord serve (p) rolloutKillKills times while
// rollout id is in its second wave, with tenants changing and others still
// to change, at each step further on, starting it again each time on the
// same database; then waits for the rollout to finish, and fails t unless
// it completed with every tenant done.
func killMidWaves(ctx context.Context, t *testing.T, p *servetest.Process, c *llclient.Client, id string) {
	t.Helper()
	for k := 1; k <= rolloutKillKills; k++ {
		done := 2 + k*(rolloutKillTenants-2)/(rolloutKillKills+1)
		got := awaitRollout(ctx, t, c, id, func(r *llclient.Rollout) bool {
			return r.Wave == 1 && r.Counts[llclient.MemberDone] >= done && r.Counts[llclient.MemberChanging] > 0
		})
		p.Kill()
		t.Logf("kill %d: wave %s, %v", k, got.WaveName, got.Counts)
		p.Start()
	}
	final := awaitRollout(ctx, t, c, id, func(r *llclient.Rollout) bool { return r.State != llclient.RolloutRunning })
	if final.State != llclient.RolloutCompleted || final.Counts[llclient.MemberDone] != rolloutKillTenants {
		t.Fatalf("rollout %s with %v: %s; want completed with %d done", final.State, final.Counts, final.Message, rolloutKillTenants)
	}
}

// changedOnce counts the "tenant_changed" events of rollout id, by tenant.
func changedOnce(ctx context.Context, t *testing.T, c *llclient.Client, id string) map[string]int {
	t.Helper()
	changed := map[string]int{}
	events, err := c.Rollouts().Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Events {
		if ev.Type == "tenant_changed" {
			changed[ev.TenantID]++
		}
	}
	return changed
}

// awaitRollout polls a rollout until cond holds; it fails the test when
// ctx ends first.
func awaitRollout(ctx context.Context, t *testing.T, c *llclient.Client, id string, cond func(*llclient.Rollout) bool) *llclient.Rollout {
	t.Helper()
	var r *llclient.Rollout
	poll.Until(t, "rollout "+id+" as wanted", left(ctx), func() (bool, string) {
		var err error
		r, err = c.Rollouts().Get(ctx, id)
		return err == nil && cond(r), fmt.Sprintf("%+v, %v", r, err)
	})
	return r
}
