package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dockerclient "github.com/moby/moby/client"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/internal/store/postgres/pgtest"
)

// The move kill tests kill `landlord serve` with SIGKILL at each step of a
// move (see tenant.Move) of a tenant on the Docker Engine, whose containers
// outlive the process, and check what the Engine holds right after: the
// source alone, both, or the target alone, never neither, and the workload
// that serves running. Started again on the same database, landlord must
// finish the move (or, cancelled, leave the source alone), each step once.
// The move is one "to another place on the same provider", docker to
// docker: the target is a workload of its own (its own id, and a name with
// a suffix of the move's), which is what one real provider allows.

// moveKillBase names what the move kill tests create on the Engine: each
// test's docker provider has the label prefix moveKillBase-<run id>-<n>,
// which starts its containers' and networks' names too (see TestMain).
const moveKillBase = "lltest-move"

// moveKillTimeout bounds one test on one database: the tenant created,
// moved through a kill and a restart, and checked.
const moveKillTimeout = 2 * time.Minute

// moveKillConfig runs tenants on the Engine, under the label prefix and
// with the address pool filled in. A short lease lets the process started
// after a kill take the tenant over soon (the killed one never released
// its lease); a short poll interval has the controller probe a target
// that does not answer yet every 200 ms rather than every 2 s; and a short
// stop timeout bounds the destroys.
const moveKillConfig = `compute:
  default: docker
  docker:
    label_prefix: %s
    stop_timeout: 1s
    address_pool: %s
controller:
  lease_ttl: 2s
  poll_interval: 200ms
`

// moveKillRuns numbers the tests' label prefixes.
var moveKillRuns atomic.Int64

// Layouts: which of a move's two workloads the Engine holds.
const (
	sourceAlone = "the source alone"
	bothOfThem  = "both"
	targetAlone = "the target alone"
	neither     = "neither"
)

// The steps of a move, as the API shows them (wire.Move.Step).
const (
	stepProvisioning     = "provisioning"
	stepAwaitingApproval = "awaiting_approval"
	stepDestroyingSource = "destroying_source"
	stepCancelling       = "cancelling"
)

// The move events of a tenant's history, told apart by their messages
// (see tenant.applyMove, applyMoveStep and finishMove).
const (
	evAsked     = "asked"
	evHeld      = "held"
	evApproved  = "approved"
	evCancelled = "cancelled"
	evSwitched  = "switched"
	evDone      = "done"
	evUndone    = "undone"
)

// TestKillMoveProvisioning kills landlord serve right after it accepted a
// move (no hold), while the target is being provisioned: the source must
// run, alone or beside a target begun; after a restart the move finishes.
func TestKillMoveProvisioning(t *testing.T) {
	onStores(t, func(t *testing.T, store, database string) {
		r := newMoveRun(t, store, database)
		if step := r.move(false); step != stepProvisioning {
			t.Fatalf("the move was accepted at step %q, want %s", step, stepProvisioning)
		}
		r.kill()
		r.checkKilled(sourceAlone, bothOfThem)
		r.restart()
		r.checkMoved(r.waitMoveEnded(), evAsked, evSwitched, evDone)
		r.logTimings(stepProvisioning)
	})
}

// TestKillMoveAwaitingApproval kills landlord serve while a move holds for
// an approval: both workloads run. After a restart the move still holds
// (it does not switch unapproved), and once approved it finishes.
func TestKillMoveAwaitingApproval(t *testing.T) {
	onStores(t, func(t *testing.T, store, database string) {
		r := newMoveRun(t, store, database)
		r.move(true)
		r.waitStep(stepAwaitingApproval)
		r.kill()
		r.checkKilled(bothOfThem)
		if !r.atKill.source.runs() || !r.atKill.target.runs() {
			t.Errorf("killed awaiting approval, the Engine has source %s and target %s; want both running", r.atKill.source, r.atKill.target)
		}
		r.restart()
		if tn, pl := r.get(); pl.Move == nil || pl.Move.Step != stepAwaitingApproval || pl.Move.Approved {
			t.Fatalf("after the restart, the move is %s; want it still awaiting an approval", describeMove(tn, pl))
		}
		r.approve()
		r.checkMoved(r.waitMoveEnded(), evAsked, evHeld, evApproved, evSwitched, evDone)
		r.logTimings(stepAwaitingApproval)
	})
}

// TestKillMoveApproved kills landlord serve the moment it accepted the
// approval of a held move: before the switch, or during it, as the race
// goes. The target runs, beside the source or alone; after a restart the
// move finishes, switched once.
func TestKillMoveApproved(t *testing.T) {
	onStores(t, func(t *testing.T, store, database string) {
		r := newMoveRun(t, store, database)
		r.move(true)
		r.waitStep(stepAwaitingApproval)
		r.approve()
		r.kill()
		r.checkKilled(bothOfThem, targetAlone)
		r.restart()
		r.checkMoved(r.waitMoveEnded(), evAsked, evHeld, evApproved, evSwitched, evDone)
		r.logTimings("approved")
	})
}

// TestKillMoveDestroyingSource kills landlord serve after the switch,
// while the source is destroyed: the target runs, with what is left of the
// source or alone; after a restart the source is gone and the move done,
// once. The step lasts as long as the source's destroy on the Engine (a
// few hundred milliseconds); the test polls for it right after the
// approval, and says so when it saw the move done instead.
func TestKillMoveDestroyingSource(t *testing.T) {
	onStores(t, func(t *testing.T, store, database string) {
		r := newMoveRun(t, store, database)
		r.move(true)
		r.waitStep(stepAwaitingApproval)
		r.approve()
		var seen string
		poll.Until(t, "the switch", left(r.ctx), func() (bool, string) {
			tn, pl := r.get()
			switch m := pl.Move; {
			case m == nil:
				seen = "done"
				return true, ""
			case m.Step == stepDestroyingSource:
				seen = m.Step
				return true, ""
			default:
				return false, describeMove(tn, pl)
			}
		})
		r.kill()
		if seen == stepDestroyingSource {
			r.checkKilled(bothOfThem, targetAlone)
		} else {
			t.Logf("%s: the step destroying_source passed between two polls: killed with the move done", store)
			r.checkKilled(targetAlone)
		}
		r.restart()
		r.checkMoved(r.waitMoveEnded(), evAsked, evHeld, evApproved, evSwitched, evDone)
		r.logTimings(stepDestroyingSource)
	})
}

// TestKillMoveCancelled cancels a move that holds for an approval and
// kills landlord serve at once, while the target is destroyed: the source
// runs, beside what is left of the target or alone. After a restart the
// target is gone and the source serves alone, as before the move.
func TestKillMoveCancelled(t *testing.T) {
	onStores(t, func(t *testing.T, store, database string) {
		r := newMoveRun(t, store, database)
		r.move(true)
		r.waitStep(stepAwaitingApproval)
		tn, err := r.c.Tenants().CancelMove(r.ctx, r.id, "", llclient.UpdateOptions{})
		if err != nil {
			t.Fatalf("cancel the move: %v", err)
		}
		if pl := placementOf(t, tn); pl.Move == nil || pl.Move.Step != stepCancelling {
			t.Fatalf("cancelled, the move is %s; want %s", describeMove(tn, pl), stepCancelling)
		}
		r.kill()
		r.checkKilled(sourceAlone, bothOfThem)
		r.restart()
		r.checkCancelled(r.waitMoveEnded())
		r.logTimings(stepCancelling)
	})
}

// onStores runs test on SQLite and on PostgreSQL, as subtests. It skips
// t, before PostgreSQL is started, when no Engine answers (and fails it
// instead when LANDLORD_REQUIRE_DOCKER=1).
func onStores(t *testing.T, test func(t *testing.T, store, database string)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds landlord and runs tenants on the Docker Engine")
	}
	dockertest.Engine(t)
	t.Run("sqlite", func(t *testing.T) { test(t, "sqlite", "") })
	t.Run("postgres", func(t *testing.T) { test(t, "postgres", pgtest.NewDatabase(t)) })
}

// moveRun is one test's landlord serve, the tenant it moves, and what the
// test saw of the move.
type moveRun struct {
	t      *testing.T
	ctx    context.Context
	store  string
	p      *servetest.Process
	c      *llclient.Client
	engine *dockerclient.Client
	prefix string // the docker provider's label prefix, this run's own
	images [2]string

	id string // the tenant's
	// source and target are the workload ids; sourceAddr is the source's
	// endpoint, targetAddr the target's once seen.
	source, target         string
	sourceAddr, targetAddr string
	killed                 time.Time
	downtime               time.Duration
	atKill                 engineState
	events                 []moveEvent // the move's, as checkHistory read them
}

// newMoveRun starts landlord serve on database (a PostgreSQL URL, or ""
// for SQLite) with a docker provider of its own label prefix, and creates
// the tenant acme of the echo image, ready. It skips t when no Engine
// answers, unless LANDLORD_REQUIRE_DOCKER=1.
func newMoveRun(t *testing.T, store, database string) *moveRun {
	t.Helper()
	engine := dockertest.Engine(t)
	images := dockertest.EchoImage(t)
	prefix := fmt.Sprintf("%s-%d", dockertest.Prefix(moveKillBase), moveKillRuns.Add(1))
	// Registered before the process's cleanup, so run after it stops.
	t.Cleanup(func() { removeUnder(engine, prefix) })
	p := servetest.New(t, servetest.Options{Config: fmt.Sprintf(moveKillConfig, prefix, dockertest.AddressPoolOf("198.19.128.0/17")), Database: database})
	p.Start()
	ctx, cancel := context.WithTimeout(t.Context(), moveKillTimeout)
	t.Cleanup(cancel)
	r := &moveRun{t: t, ctx: ctx, store: store, p: p, c: p.Client(), engine: engine, prefix: prefix, images: images}

	config := fmt.Sprintf(`{"image":%q,"ports":[{"container_port":8080}]}`, images[0])
	tn, err := r.c.Tenants().Create(ctx, llclient.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(config)}, llclient.CreateOptions{})
	if err != nil {
		t.Fatalf("create acme: %v", err)
	}
	r.id = tn.ID
	if tn, err = r.c.Tenants().Wait(ctx, r.id, llclient.UntilReady, nil); err != nil {
		t.Fatalf("acme never became ready: %v", err)
	}
	if len(tn.Endpoints) != 1 {
		t.Fatalf("acme is ready with endpoints %+v, want one", tn.Endpoints)
	}
	r.sourceAddr = tn.Endpoints[0].Address
	return r
}

// move asks for the move of acme's placement to another place on the
// Engine, of the echo image's other tag, holding for an approval if hold;
// it returns the step the move was accepted at.
func (r *moveRun) move(hold bool) string {
	r.t.Helper()
	config := fmt.Sprintf(`{"compute_provider":"docker","image":%q,"ports":[{"container_port":8080}]}`, r.images[1])
	tn, err := r.c.Tenants().Move(r.ctx, r.id, llclient.MoveRequest{ComputeConfig: json.RawMessage(config), Hold: hold}, llclient.UpdateOptions{})
	if err != nil {
		r.t.Fatalf("move acme: %v", err)
	}
	if len(tn.Placements) != 1 || tn.Placements[0].Move == nil {
		r.t.Fatalf("the move was accepted with placements %+v; want acme's one placement moving", tn.Placements)
	}
	pl := tn.Placements[0]
	r.source, r.target = pl.WorkloadID, pl.Move.Other.WorkloadID
	if r.source != r.id || r.target == "" || r.target == r.source {
		r.t.Fatalf("the move's workloads: source %q, target %q; want the tenant's own (%s) and another", r.source, r.target, r.id)
	}
	return pl.Move.Step
}

// get returns acme as the API shows it now, and its one placement.
func (r *moveRun) get() (*llclient.Tenant, llclient.Placement) {
	r.t.Helper()
	tn, err := r.c.Tenants().Get(r.ctx, r.id, llclient.GetOptions{})
	if err != nil {
		r.t.Fatalf("get acme: %v", err)
	}
	return tn, placementOf(r.t, tn)
}

// placementOf returns tn's one placement. A tenant of one placement on
// its own workload, not moving, is shown without placements: acme before
// its move, and again after a cancelled one; its placement is then the
// tenant itself.
func placementOf(t *testing.T, tn *llclient.Tenant) llclient.Placement {
	t.Helper()
	switch len(tn.Placements) {
	case 0:
		return llclient.Placement{Name: "default", ComputeProvider: tn.ComputeProvider, ComputeConfig: tn.ComputeConfig,
			WorkloadID: tn.ID, WorkloadName: tn.Name, Status: tn.Status, StatusMessage: tn.StatusMessage,
			ObservedGeneration: tn.ObservedGeneration, Endpoints: tn.Endpoints}
	case 1:
		return tn.Placements[0]
	}
	t.Fatalf("acme has placements %+v; want one", tn.Placements)
	return llclient.Placement{}
}

// waitStep waits until the API shows the move at step; it remembers the
// target's endpoint once the target runs.
func (r *moveRun) waitStep(step string) {
	r.t.Helper()
	poll.Until(r.t, "the move at "+step, left(r.ctx), func() (bool, string) {
		tn, pl := r.get()
		m := pl.Move
		if m == nil {
			return false, describeMove(tn, pl)
		}
		if len(m.Other.Endpoints) > 0 {
			r.targetAddr = m.Other.Endpoints[0].Address
		}
		return m.Step == step, describeMove(tn, pl)
	})
}

// approve approves the held move's switch.
func (r *moveRun) approve() {
	r.t.Helper()
	if _, err := r.c.Tenants().ApproveMove(r.ctx, r.id, "", llclient.UpdateOptions{}); err != nil {
		r.t.Fatalf("approve the move: %v", err)
	}
}

// kill kills landlord serve and records what the Engine holds right after.
func (r *moveRun) kill() {
	r.t.Helper()
	r.p.Kill()
	r.killed = time.Now()
	r.atKill = r.onEngine()
}

// restart starts landlord serve again on the same database.
func (r *moveRun) restart() {
	r.t.Helper()
	r.p.Start()
	r.downtime = time.Since(r.killed)
}

// checkKilled checks the Engine as kill found it: never neither of the
// move's workloads, and one of layouts, what the step killed at allows.
// Which workload had to run (serve) at the kill is checked by checkMoved
// and checkCancelled, once the history says whether the switch came
// before it.
func (r *moveRun) checkKilled(layouts ...string) {
	r.t.Helper()
	got := r.atKill.layout()
	r.t.Logf("%s: killed; the Engine has %s: source %s, target %s", r.store, got, r.atKill.source, r.atKill.target)
	if got == neither {
		r.t.Fatalf("killed during the move, the Engine has neither the source nor the target: the tenant is lost")
	}
	if !slices.Contains(layouts, got) {
		r.t.Errorf("killed during the move, the Engine has %s (source %s, target %s); want %s",
			got, r.atKill.source, r.atKill.target, strings.Join(layouts, " or "))
	}
}

// waitMoveEnded waits until acme's move is over and acme ready, and
// returns its placement; it fails the test when the move or acme fails.
func (r *moveRun) waitMoveEnded() llclient.Placement {
	r.t.Helper()
	var pl llclient.Placement
	poll.Until(r.t, "the move over and acme ready after the restart", left(r.ctx), func() (bool, string) {
		var tn *llclient.Tenant
		tn, pl = r.get()
		if tn.Status == llclient.StatusFailed || (pl.Move != nil && pl.Move.Other.Status == llclient.StatusFailed) {
			r.t.Fatalf("after the restart: %s", describeMove(tn, pl))
		}
		return pl.Move == nil && tn.Status == llclient.StatusReady && tn.ObservedGeneration == tn.Generation, describeMove(tn, pl)
	})
	return pl
}

// checkMoved checks a finished move: the placement on the target, ready
// and answering, the Engine holding the target's containers alone, and
// acme's history holding the move's events want, in order, each once.
func (r *moveRun) checkMoved(pl llclient.Placement, want ...string) {
	r.t.Helper()
	if pl.WorkloadID != r.target || pl.Status != llclient.StatusReady || pl.ComputeProvider != "docker" ||
		!strings.Contains(string(pl.ComputeConfig), r.images[1]) {
		r.t.Errorf("after the move, the placement is workload %s (%s) with config %s; want the target %s, ready, of %s",
			pl.WorkloadID, pl.Status, pl.ComputeConfig, r.target, r.images[1])
	}
	r.checkEngineHolds(r.target, r.source)
	r.checkAnswers(pl)
	r.checkHistory(want...)
	r.checkServedAtKill()
}

// checkCancelled checks a cancelled move undone: the placement on the
// source as before the move, ready and answering at its old address, the
// Engine holding the source's containers alone, and acme's history holding
// the move asked for, held, cancelled and undone, each once.
func (r *moveRun) checkCancelled(pl llclient.Placement) {
	r.t.Helper()
	if pl.WorkloadID != r.source || pl.Status != llclient.StatusReady || !strings.Contains(string(pl.ComputeConfig), r.images[0]) {
		r.t.Errorf("after the cancelled move, the placement is workload %s (%s) with config %s; want the source %s, ready, of %s",
			pl.WorkloadID, pl.Status, pl.ComputeConfig, r.source, r.images[0])
	}
	r.checkEngineHolds(r.source, r.target)
	if len(pl.Endpoints) != 1 || pl.Endpoints[0].Address != r.sourceAddr {
		r.t.Errorf("after the cancelled move, the endpoints are %+v; want the source's, %s", pl.Endpoints, r.sourceAddr)
	}
	r.checkAnswers(pl)
	r.checkHistory(evAsked, evHeld, evCancelled, evUndone)
	r.checkServedAtKill()
}

// checkEngineHolds checks that the Engine holds the containers of workload
// keep, all running, and nothing else of this test's tenants: no
// container or network of gone.
func (r *moveRun) checkEngineHolds(keep, gone string) {
	r.t.Helper()
	key := r.prefix + ".tenant_id"
	cs, err := r.engine.ContainerList(r.ctx, dockerclient.ContainerListOptions{All: true, Filters: dockerclient.Filters{}.Add("label", key)})
	if err != nil {
		r.t.Fatalf("list the containers: %v", err)
	}
	kept := 0
	for _, c := range cs.Items {
		switch {
		case c.Labels[key] != keep:
			r.t.Errorf("the Engine holds container %s of workload %s (%s); want %s's alone", c.Names, c.Labels[key], c.State, keep)
		case c.State != "running":
			r.t.Errorf("container %s of %s is %s, want running", c.Names, keep, c.State)
		default:
			kept++
		}
	}
	if kept == 0 {
		r.t.Errorf("the Engine holds no container of workload %s", keep)
	}
	ns, err := r.engine.NetworkList(r.ctx, dockerclient.NetworkListOptions{Filters: dockerclient.Filters{}.Add("label", key+"="+gone)})
	if err != nil {
		r.t.Fatalf("list the networks: %v", err)
	}
	for _, n := range ns.Items {
		r.t.Errorf("the Engine still holds network %s of workload %s", n.Name, gone)
	}
}

// checkAnswers checks that the placement's one endpoint answers.
func (r *moveRun) checkAnswers(pl llclient.Placement) {
	r.t.Helper()
	if len(pl.Endpoints) != 1 {
		r.t.Errorf("the placement has endpoints %+v, want one", pl.Endpoints)
		return
	}
	addr := pl.Endpoints[0].Address
	poll.Eventually(r.t, "the placement's endpoint "+addr+" answering", 10*time.Second, func() (bool, string) {
		err := answers(r.ctx, addr)
		return err == nil, fmt.Sprint(err)
	})
}

// moveEvent is a move event of acme's history: its kind (evAsked…) and
// when it was recorded.
type moveEvent struct {
	kind string
	at   time.Time
}

// checkHistory checks that acme's history holds the move events want, in
// order, and no other (a step repeated after the restart among them); it
// keeps them for checkServedAtKill and logTimings.
func (r *moveRun) checkHistory(want ...string) {
	r.t.Helper()
	var kinds, messages []string
	for ev, err := range r.c.Tenants().AllEvents(r.ctx, r.id, llclient.EventOptions{}) {
		if err != nil {
			r.t.Fatalf("list acme's events: %v", err)
		}
		if ev.Type != "move" {
			continue
		}
		k := moveEventKind(ev.Message)
		r.events = append(r.events, moveEvent{kind: k, at: ev.Time})
		kinds = append(kinds, k)
		messages = append(messages, ev.Time.Format(time.RFC3339Nano)+" "+ev.Message)
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		r.t.Errorf("acme's move events (-want +got):\n%s\n%s", diff, strings.Join(messages, "\n"))
	}
}

// checkServedAtKill checks that the workload that served when landlord
// was killed ran then: the target if the history has the switch before
// the kill, else the source.
func (r *moveRun) checkServedAtKill() {
	r.t.Helper()
	serving, state := "source", r.atKill.source
	for _, ev := range r.events {
		if ev.kind == evSwitched && ev.at.Before(r.killed) {
			serving, state = "target", r.atKill.target
		}
	}
	if !state.runs() {
		r.t.Errorf("when landlord was killed the %s served, but the Engine had it %s", serving, state)
	}
}

// logTimings logs how long the move's steps took, by the times of its
// events in acme's history, in a form to grep: "move timing: store=…
// step=… phase=… seconds=…". Phases target_ready (running and answering:
// held for an approval, or for a move without a hold its switch, which
// follows at once), switched, source_destroyed and target_destroyed (of a
// cancelled move) are counted from the move's request, and include the
// kill and, for a held move, the test's approval. Phase downtime is the
// kill to landlord answering again; resumed is the kill to the first step
// of the move after it (the new process goes on once the killed one's 2 s
// lease has lapsed).
func (r *moveRun) logTimings(step string) {
	r.t.Helper()
	var asked, resumed time.Time
	phases := map[string]time.Time{}
	for _, ev := range r.events {
		switch ev.kind {
		case evAsked:
			asked = ev.at
		case evHeld:
			phases["target_ready"] = ev.at
		case evSwitched:
			phases["switched"] = ev.at
			if _, ok := phases["target_ready"]; !ok {
				phases["target_ready"] = ev.at
			}
		case evDone:
			phases["source_destroyed"] = ev.at
		case evUndone:
			phases["target_destroyed"] = ev.at
		}
		if ev.kind != evApproved && ev.at.After(r.killed) && resumed.IsZero() {
			resumed = ev.at
		}
	}
	logf := func(phase string, d time.Duration) {
		r.t.Logf("move timing: store=%s step=%s phase=%s seconds=%.3f", r.store, step, phase, d.Seconds())
	}
	for _, phase := range []string{"target_ready", "switched", "source_destroyed", "target_destroyed"} {
		if at, ok := phases[phase]; ok {
			logf(phase, at.Sub(asked))
		}
	}
	logf("downtime", r.downtime)
	logf("resumed", resumed.Sub(r.killed))
}

// moveEventKind tells a move event's kind by its message.
func moveEventKind(msg string) string {
	for _, k := range []struct{ kind, says string }{
		{evUndone, "is undone"},
		{evDone, "is done"},
		{evSwitched, " switched from "},
		{evAsked, " asked for"},
		{evHeld, "holds for an approval"},
		{evApproved, " approved"},
		{evCancelled, " cancelled"},
	} {
		if strings.Contains(msg, k.says) {
			return k.kind
		}
	}
	return "other: " + msg
}

// engineState is what the Engine holds of a move's two workloads.
type engineState struct{ source, target workloadState }

// workloadState is what the Engine holds of one workload: its containers,
// how many run, its networks (a network alone is a provision begun, or a
// destroy nearly done, and does not make the workload exist), and whether
// its endpoint answered (when known).
type workloadState struct {
	containers, running, networks int
	answered                      string // "", "answers" or why not
}

func (w workloadState) exists() bool { return w.containers > 0 }

// runs reports whether the workload's containers all run.
func (w workloadState) runs() bool { return w.containers > 0 && w.running == w.containers }

func (w workloadState) String() string {
	s := fmt.Sprintf("%d containers, %d running, %d networks", w.containers, w.running, w.networks)
	if w.answered != "" {
		s += ", endpoint " + w.answered
	}
	return s
}

// layout is which of the two workloads s holds.
func (s engineState) layout() string {
	switch {
	case s.source.exists() && s.target.exists():
		return bothOfThem
	case s.source.exists():
		return sourceAlone
	case s.target.exists():
		return targetAlone
	}
	return neither
}

// onEngine returns what the Engine holds now of the move's workloads, by
// their containers' and networks' tenant_id labels, and whether their
// endpoints answer.
func (r *moveRun) onEngine() engineState {
	r.t.Helper()
	key := r.prefix + ".tenant_id"
	of := func(id, addr string) workloadState {
		cs, err := r.engine.ContainerList(r.ctx, dockerclient.ContainerListOptions{All: true, Filters: dockerclient.Filters{}.Add("label", key+"="+id)})
		if err != nil {
			r.t.Fatalf("list the containers of %s: %v", id, err)
		}
		var w workloadState
		for _, c := range cs.Items {
			w.containers++
			if c.State == "running" {
				w.running++
			}
		}
		ns, err := r.engine.NetworkList(r.ctx, dockerclient.NetworkListOptions{Filters: dockerclient.Filters{}.Add("label", key+"="+id)})
		if err != nil {
			r.t.Fatalf("list the networks of %s: %v", id, err)
		}
		w.networks = len(ns.Items)
		if addr != "" {
			w.answered = "answers"
			if err := answers(r.ctx, addr); err != nil {
				w.answered = err.Error()
			}
		}
		return w
	}
	return engineState{source: of(r.source, r.sourceAddr), target: of(r.target, r.targetAddr)}
}

// answers asks the echo server at addr for /healthz.
func answers(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /healthz: %s", res.Status)
	}
	return nil
}

// removeUnder removes the containers and networks whose names start with
// prefix: a test's tenants, whatever it left.
func removeUnder(engine *dockerclient.Client, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := dockerclient.Filters{}.Add("name", prefix+"-")
	if cs, err := engine.ContainerList(ctx, dockerclient.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range cs.Items {
			_, _ = engine.ContainerRemove(ctx, c.ID, dockerclient.ContainerRemoveOptions{Force: true})
		}
	}
	if ns, err := engine.NetworkList(ctx, dockerclient.NetworkListOptions{Filters: f}); err == nil {
		for _, n := range ns.Items {
			_, _ = engine.NetworkRemove(ctx, n.ID, dockerclient.NetworkRemoveOptions{})
		}
	}
}

// describeMove says where acme, its placement pl and its move are, for
// failure messages.
func describeMove(tn *llclient.Tenant, pl llclient.Placement) string {
	s := fmt.Sprintf("acme %s (%s)", tn.Status, tn.StatusMessage)
	s += fmt.Sprintf(", placement on %s %s", pl.WorkloadID, pl.Status)
	if m := pl.Move; m != nil {
		s += fmt.Sprintf(", move %s (hold %t, approved %t), other %s %s: %s", m.Step, m.Hold, m.Approved, m.Other.WorkloadID, m.Other.Status, m.Other.StatusMessage)
	} else {
		s += ", no move"
	}
	return s
}
