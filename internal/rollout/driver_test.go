package rollout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/compute/providers/mock"
	"github.com/jaxxstorm/landlord/internal/controller"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/rollout"
	"github.com/jaxxstorm/landlord/internal/store/postgres"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var ctx = context.Background()

// store is what the driver and the controller need of one database.
type store interface {
	tenant.Store
	fleet.Store
}

// stores runs a test on SQLite and on PostgreSQL, each store on the
// test's clock (the one the driver reads), so that the times it records on
// members (when a tenant was changed) agree with the driver's.
func stores(t *testing.T, test func(t *testing.T, s store, c *clock)) {
	t.Run("sqlite", func(t *testing.T) {
		c := newClock()
		s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "landlord.db"), sqlite.Options{Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s, c)
	})
	t.Run("postgres", func(t *testing.T) {
		c := newClock()
		s, err := postgres.Open(ctx, pgtest.NewDatabase(t), postgres.Options{Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		test(t, s, c)
	})
}

// clock is a settable clock that runs: it reads the time since it was set
// plus the time it was set to, so that the controller's waits and the
// stores' records still move on.
type clock struct {
	mu       sync.Mutex
	at, when time.Time
}

func newClock() *clock {
	return &clock{at: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), when: time.Now()}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at.Add(time.Since(c.when))
}

func (c *clock) set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.when = at, time.Now()
}

// env is a store with the controller running over the mock provider, and a
// clock for the rollout driver.
type env struct {
	s        store
	clock    *clock
	platform *mock.Platform
	mock     *mock.Provider
	// stopController stops the controller: tenants then keep the status
	// it last observed.
	stopController func()
	// ticks counts the drivers' ticks (awaitTicks).
	ticks atomic.Int64
}

func newEnv(t *testing.T, s store, c *clock) *env {
	e := &env{s: s, clock: c, platform: mock.NewPlatform()}
	p, err := mock.New(mock.Options{Block: json.RawMessage(`{}`), Platform: e.platform})
	if err != nil {
		t.Fatal(err)
	}
	e.mock = p
	reg := compute.NewRegistry()
	if err := reg.Register(p); err != nil {
		t.Fatal(err)
	}
	m, err := compute.NewManager(reg, compute.ManagerOptions{DefaultProvider: mock.Name})
	if err != nil {
		t.Fatal(err)
	}
	ctrl := controller.New(s, m, controller.Options{BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		PollInterval: 10 * time.Millisecond, Resync: time.Hour, Sweep: time.Hour, MaxRetries: 1, Plans: s})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = ctrl.Run(runCtx) }()
	var once sync.Once
	e.stopController = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(e.stopController)
	// A test that failed says where its rollouts stood (before the
	// controller stops and the store closes: cleanups run last first).
	t.Cleanup(func() {
		if t.Failed() {
			e.logRollouts(t)
		}
	})
	return e
}

// drive runs a driver until the test ends.
func (e *env) drive(t *testing.T, identity string) (stop func()) {
	return e.driveWith(t, rollout.Options{Interval: 5 * time.Millisecond, Identity: identity})
}

// driveWith runs a driver with opts, on the test's clock, store and log,
// until the test ends.
func (e *env) driveWith(t *testing.T, opts rollout.Options) (stop func()) {
	opts.Now, opts.Leases, opts.Logger = e.clock.now, e.s.(tenant.LeaseStore), slog.New(slog.NewTextHandler(logWriter{t}, nil))
	d := rollout.New(e.s, tickCounter{e.s, &e.ticks}, opts)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); d.Run(runCtx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// tickCounter is a driver's store that counts its ticks in ticks: each
// begins by listing the rollouts to step (Driver.Tick).
type tickCounter struct {
	fleet.Store
	ticks *atomic.Int64
}

func (c tickCounter) ListRollouts(ctx context.Context, opts fleet.RolloutListOptions) ([]*fleet.Rollout, error) {
	if opts.Unsettled {
		c.ticks.Add(1)
	}
	return c.Store.ListRollouts(ctx, opts)
}

// logWriter logs a driver's lines in the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// plan makes plan standard with a version per image.
func (e *env) plan(t *testing.T, images ...string) {
	if _, err := e.s.CreatePlan(ctx, &fleet.Plan{Name: "standard", Provider: mock.Name}, "test"); err != nil {
		t.Fatal(err)
	}
	for _, img := range images {
		if _, err := e.s.PublishVersion(ctx, "standard", json.RawMessage(fmt.Sprintf(`{"image":%q}`, img)), "", "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// tenants creates n tenants on standard v1 (overrides by index) and waits
// for them to be ready.
func (e *env) tenants(t *testing.T, n int, override func(i int, t *tenant.Tenant)) []*tenant.Tenant {
	var out []*tenant.Tenant
	for i := range n {
		tn := &tenant.Tenant{Name: fmt.Sprintf("t%02d", i), Provider: mock.Name, ComputeConfig: json.RawMessage(`{}`),
			Plan: &tenant.PlanRef{Name: "standard", Version: 1}}
		if override != nil {
			override(i, tn)
		}
		created, err := e.s.Create(ctx, tn, "test")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, created)
	}
	for _, tn := range out {
		e.await(t, "tenant "+tn.Name+" ready", func() bool { return e.get(t, tn.ID).Status == tenant.StatusReady })
	}
	return out
}

func (e *env) get(t *testing.T, id string) *tenant.Tenant {
	tn, err := e.s.Get(ctx, id, tenant.GetOptions{IncludeDeleted: true})
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// start starts a rollout of standard to version to, as the API does.
func (e *env) start(t *testing.T, spec fleet.Spec) *fleet.Rollout {
	page, err := e.s.List(ctx, tenant.ListOptions{Plan: spec.Plan, PageSize: tenant.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	waves, members := fleet.Assign(spec, fleet.Select(spec, page.Tenants).Candidates)
	r, err := e.s.CreateRollout(ctx, &fleet.Rollout{Spec: spec, Waves: waves, CreatedBy: "test"}, members)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (e *env) rollout(t *testing.T, id string) *fleet.Rollout {
	r, err := e.s.GetRollout(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// await polls cond until it holds; the timeout only bounds a hung test.
func (e *env) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, what, 60*time.Second, func() (bool, string) { return cond(), "" })
}

// awaitTicks waits until the drivers have ticked n more times, each
// stepping every rollout not settled: the (n+1)th tick has begun, so the
// nth has finished.
func (e *env) awaitTicks(t *testing.T, n int64) {
	t.Helper()
	from := e.ticks.Load()
	e.await(t, fmt.Sprintf("%d more ticks of the driver", n), func() bool { return e.ticks.Load() > from+n })
}

// logRollouts logs where every rollout and its members stand.
func (e *env) logRollouts(t *testing.T) {
	for _, r := range must(e.s.ListRollouts(ctx, fleet.RolloutListOptions{})) {
		t.Logf("rollout %s: %s, wave %d, bake from %v: %s", r.ID, r.State, r.Wave, r.BakeFrom, r.Message)
		for _, m := range must(e.s.Members(ctx, r.ID)) {
			t.Logf("  member %s: %s at generation %d: %s", m.TenantName, m.State, m.Generation, m.Message)
		}
	}
}

// image is the image the mock runs for a tenant.
func (e *env) image(t *testing.T, id string) string {
	st, err := e.mock.GetStatus(ctx, id)
	if err != nil {
		t.Fatalf("workload of %s: %v", id, err)
	}
	return st.Containers[0].Image
}

// updates counts the tenant's "updated" events.
func (e *env) updates(t *testing.T, id string) int {
	page, err := e.s.ListEvents(ctx, id, tenant.EventListOptions{PageSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range page.Events {
		if ev.Type == tenant.EventUpdated {
			n++
		}
	}
	return n
}

func TestRolloutCompletesInWaves(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		tenants := e.tenants(t, 10, func(i int, tn *tenant.Tenant) {
			if i == 0 {
				tn.Labels = map[string]string{"ring": "canary"}
			}
		})
		e.drive(t, "driver-1")
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, Waves: []fleet.Wave{
			{Name: "canary", Selector: map[string]string{"ring": "canary"}, Count: 1}, {Name: "early", Percent: 30},
		}})
		e.await(t, "the rollout to complete", func() bool { return e.rollout(t, r.ID).State == fleet.StateCompleted })
		for _, tn := range tenants {
			if got := e.get(t, tn.ID); got.Plan.Version != 2 || got.Status != tenant.StatusReady || got.ObservedGeneration != 2 {
				t.Errorf("%s: plan %s, %s at observed generation %d; want v2, ready at 2", tn.Name, got.Plan, got.Status, got.ObservedGeneration)
			}
			if img := e.image(t, tn.ID); img != "app:2" {
				t.Errorf("%s runs %s, want app:2", tn.Name, img)
			}
			if n := e.updates(t, tn.ID); n != 1 {
				t.Errorf("%s was changed %d times, want once", tn.Name, n)
			}
		}
		p, err := s.GetPlan(ctx, "standard")
		if err != nil || p.Current != 2 {
			t.Errorf("plan current version %d (%v), want 2", p.Current, err)
		}
		evs, err := s.ListRolloutEvents(ctx, r.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var waves []string
		for _, ev := range evs {
			if ev.Type == fleet.EventWaveStarted {
				waves = append(waves, strings.SplitN(ev.Message, ":", 2)[0])
			}
		}
		if got := strings.Join(waves, ", "); got != "wave early, wave rest" {
			t.Errorf("waves started: %s", got)
		}
	})
}

func TestFailureBudgetHaltsAndAbortRollsBack(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		failing := map[int]bool{3: true, 11: true}
		tenants := e.tenants(t, 20, func(i int, tn *tenant.Tenant) {
			if failing[i] {
				tn.ComputeConfig = json.RawMessage(`{"x-mock":{"fail":"terminal","operations":["update"]}}`)
			}
		})
		e.drive(t, "driver-1")
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, MaxFailures: 1, Waves: []fleet.Wave{{Name: "all", MaxInFlight: 5}}})
		e.await(t, "the rollout to halt", func() bool { return e.rollout(t, r.ID).State == fleet.StateHalted })
		halted := e.rollout(t, r.ID)
		if !strings.Contains(halted.Message, "t03, t11") {
			t.Errorf("halt message %q does not name t03 and t11", halted.Message)
		}
		// Abort with rollback: every tenant the rollout changed goes back
		// to v1 and runs app:1 again.
		halted.State, halted.Rollback = fleet.StateAborting, true
		if _, err := s.UpdateRollout(ctx, halted); err != nil {
			t.Fatal(err)
		}
		e.await(t, "the rollout to abort", func() bool { return e.rollout(t, r.ID).State == fleet.StateAborted })
		for i, tn := range tenants {
			e.await(t, tn.Name+" back on v1", func() bool {
				got := e.get(t, tn.ID)
				return got.Plan.Version == 1 && got.ObservedGeneration == got.Generation && (got.Status == tenant.StatusReady || failing[i])
			})
			if !failing[i] {
				if img := e.image(t, tn.ID); img != "app:1" {
					t.Errorf("%s runs %s after the rollback, want app:1", tn.Name, img)
				}
			}
		}
	})
}

func TestPinsAndWindows(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		// t01 is pinned; t02 may change on Saturdays from 02:00 UTC only;
		// the clock says Wednesday.
		tenants := e.tenants(t, 3, func(i int, tn *tenant.Tenant) {
			switch i {
			case 1:
				tn.Plan.Pinned = true
			case 2:
				tn.MaintenanceWindow = &tenant.Window{Days: []string{"sat"}, Start: "02:00", End: "04:00"}
			}
		})
		e.drive(t, "driver-1")
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2})
		e.await(t, "t00 done", func() bool { return e.get(t, tenants[0].ID).ObservedGeneration == 2 })
		// Many steps later, t02 still waits for its window.
		e.awaitTicks(t, 20)
		if got := e.get(t, tenants[2].ID); got.Plan.Version != 1 || e.rollout(t, r.ID).State != fleet.StateRunning {
			t.Fatalf("t02 at v%d outside its window, rollout %s", got.Plan.Version, e.rollout(t, r.ID).State)
		}
		e.clock.set(time.Date(2026, 11, 28, 2, 30, 0, 0, time.UTC))
		e.await(t, "the rollout to complete", func() bool { return e.rollout(t, r.ID).State == fleet.StateCompleted })
		if got := e.get(t, tenants[2].ID); got.Plan.Version != 2 {
			t.Errorf("t02 at v%d after its window opened", got.Plan.Version)
		}
		if got := e.get(t, tenants[1].ID); got.Plan.Version != 1 || got.Generation != 1 {
			t.Errorf("pinned t01 changed: v%d, generation %d", got.Plan.Version, got.Generation)
		}
	})
}

// TestChangesWakeTheDriver steps a rollout whose driver ticks once an
// hour: after its first step, only the tenants' changes can move it on.
func TestChangesWakeTheDriver(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		tenants := e.tenants(t, 4, nil)
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, Waves: []fleet.Wave{{Name: "one", Count: 1}, {Name: "two", MaxInFlight: 1}}})
		e.driveWith(t, rollout.Options{Interval: time.Hour, Identity: "driver-1", Changes: s.(tenant.ChangeFeed)})
		e.await(t, "the rollout to complete", func() bool { return e.rollout(t, r.ID).State == fleet.StateCompleted })
		for _, tn := range tenants {
			if got := e.get(t, tn.ID); got.Plan.Version != 2 || got.ObservedGeneration != 2 {
				t.Errorf("%s: plan %s at observed generation %d", tn.Name, got.Plan, got.ObservedGeneration)
			}
		}
	})
}

// TestStaleStatusNeverDone stops the controller before a rollout, so that
// its tenants stay ready at the generation it last observed: however
// often the driver steps, none counts as done, and once the deadline
// passes (on the injected clock) each fails and the rollout halts.
func TestStaleStatusNeverDone(t *testing.T) {
	stores(t, func(t *testing.T, s store, c *clock) {
		e := newEnv(t, s, c)
		e.plan(t, "app:1", "app:2")
		tenants := e.tenants(t, 2, nil)
		e.stopController()
		r := e.start(t, fleet.Spec{Plan: "standard", To: 2, Deadline: 10 * time.Minute})
		e.drive(t, "driver-1")
		e.await(t, "both tenants changed", func() bool {
			return fleet.Count(must(s.Members(ctx, r.ID)), -1)[fleet.MemberChanging] == 2
		})
		e.awaitTicks(t, 20) // many steps of the rollout
		for _, tn := range tenants {
			if got := e.get(t, tn.ID); got.Status != tenant.StatusReady || got.ObservedGeneration != 1 || got.Generation != 2 {
				t.Fatalf("%s: %s at observed generation %d of %d; want ready at 1 of 2", tn.Name, got.Status, got.ObservedGeneration, got.Generation)
			}
		}
		if counts := fleet.Count(must(s.Members(ctx, r.ID)), -1); counts[fleet.MemberChanging] != 2 || e.rollout(t, r.ID).State != fleet.StateRunning {
			t.Fatalf("members %v, rollout %s: a status of the old generation counted", counts, e.rollout(t, r.ID).State)
		}
		e.clock.set(e.clock.now().Add(11 * time.Minute))
		e.await(t, "the rollout to halt", func() bool { return e.rollout(t, r.ID).State == fleet.StateHalted })
		if msg := e.rollout(t, r.ID).Message; !strings.Contains(msg, "t00, t01") {
			t.Errorf("halt message %q does not name t00 and t01", msg)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
