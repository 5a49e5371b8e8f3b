package api_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/store/sqlite"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// fleetOf makes n tenants on plan standard v1 (t00…, the first labelled
// ring=canary), a pinned one and one already on v2, with v2 published.
func fleetOf(t *testing.T, ts *testServer, n int) {
	t.Helper()
	ts.plan(t, "standard", `{"image":"example.com/app:1","env":{"TIER":"standard"}}`)
	for i := range n {
		labels := `{}`
		if i == 0 {
			labels = `{"ring":"canary"}`
		}
		res := ts.do(t, "POST", "/v1/tenants", "application/json",
			fmt.Sprintf(`{"name":"t%02d","compute_config":{"env":{"OWN":"%d"}},"labels":%s,"plan":{"name":"standard"}}`, i, i, labels))
		if res.status != http.StatusCreated {
			t.Fatalf("create t%02d: %d %s", i, res.status, res.body)
		}
	}
	ts.publish(t, "standard", `{"image":"example.com/app:2","env":{"TIER":"standard"}}`)
	for _, body := range []string{
		`{"name":"pinned","compute_config":{},"plan":{"name":"standard","version":1,"pinned":true}}`,
		`{"name":"current","compute_config":{},"plan":{"name":"standard","version":2}}`,
	} {
		if res := ts.do(t, "POST", "/v1/tenants", "application/json", body); res.status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
	}
}

const threeWaves = `{"plan":"standard","waves":[{"name":"canary","selector":{"ring":"canary"},"count":1},{"name":"thirty","percent":30},{"name":"rest"}],"bake":"10m","max_failures":1}`

func TestFleetPlan(t *testing.T) {
	ts := newServer(t)
	fleetOf(t, ts, 10)
	ts.closeWindow(t, "t05")

	res := ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", threeWaves)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	var fp wire.FleetPlan
	mustDecode(t, res, &fp)
	var sizes []int
	for _, w := range fp.Waves {
		sizes = append(sizes, w.Size)
		if len(w.Tenants) != w.Size {
			t.Errorf("wave %s: size %d, %d tenants", w.Name, w.Size, len(w.Tenants))
		}
	}
	if !slices.Equal(sizes, []int{1, 3, 6}) || fp.Waves[0].Tenants[0].Name != "t00" || fp.ToVersion != 2 {
		t.Fatalf("waves %v (canary %+v), want 1/3/6 with t00 first, to version 2", sizes, fp.Waves[0].Tenants)
	}
	c := fp.Counts
	if c.Tenants != 10 || c.Pinned != 1 || c.Current != 1 || c.OutOfWindow != 1 || c.Waves["thirty"] != 3 || c.Actions["update in place"] != 10 {
		t.Errorf("counts %+v", c)
	}
	if len(fp.Pinned) != 1 || fp.Pinned[0].Name != "pinned" || len(fp.Current) != 1 || fp.Current[0].Name != "current" {
		t.Errorf("pinned %+v, current %+v", fp.Pinned, fp.Current)
	}
	for _, w := range fp.Waves {
		for _, pt := range w.Tenants {
			if pt.FromVersion != 1 || pt.ToVersion != 2 || pt.Wave != w.Name || pt.Action != "update in place" {
				t.Errorf("%s: %+v", pt.Name, pt)
			}
			if d := fp.DiffOf(pt); d == nil || !slices.ContainsFunc(d.Changes, func(ch wire.ConfigChange) bool {
				return strings.HasSuffix(ch.Field, "/image") && ch.From == "example.com/app:1" && ch.To == "example.com/app:2"
			}) {
				t.Errorf("%s: diff %q (%+v) does not name the image", pt.Name, pt.Diff, fp.DiffOf(pt))
			}
			if (pt.Name == "t05") == pt.WindowOpen || (pt.Name == "t05") != (pt.WindowOpensAt != nil) {
				t.Errorf("%s: window open %v, opens at %v", pt.Name, pt.WindowOpen, pt.WindowOpensAt)
			}
		}
	}
	// Every tenant changes alike: one diff, of all ten.
	if len(fp.Diffs) != 1 || fp.Diffs[0].Tenants != 10 {
		t.Errorf("diffs %+v, want one of 10 tenants", fp.Diffs)
	}
	var list wire.RolloutList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts", "", ""), &list)
	if len(list.Rollouts) != 0 {
		t.Errorf("a dry run started a rollout: %+v", list.Rollouts)
	}

	// Started: 201, and a second is a 409.
	res = ts.do(t, "POST", "/v1/rollouts", "application/json", threeWaves)
	if res.status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.status, res.body)
	}
	var ro wire.Rollout
	mustDecode(t, res, &ro)
	if res.header.Get("Location") != "/v1/rollouts/"+ro.ID || res.header.Get("ETag") != fmt.Sprintf(`"%d"`, ro.Version) {
		t.Errorf("Location %q, ETag %q", res.header.Get("Location"), res.header.Get("ETag"))
	}
	if ro.State != "running" || ro.WaveName != "canary" || len(ro.Waves) != 3 || ro.Waves[1].Size != 3 || ro.Bake != "10m0s" || ro.Deadline != "15m0s" ||
		ro.MaxFailures != 1 || ro.Counts["pending"] != 10 || ro.Waves[0].Counts["pending"] != 1 {
		t.Errorf("rollout %+v", ro)
	}
	p := expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", threeWaves), 409, wire.CodeRolloutActive)
	if !strings.Contains(p.Detail, ro.ID) {
		t.Errorf("the 409 does not name the active rollout: %s", p.Detail)
	}
	var members wire.RolloutMemberList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID+"/members", "", ""), &members)
	if len(members.Members) != 10 || members.Members[0].TenantName != "t00" || members.Members[0].WaveName != "canary" || members.Members[0].State != "pending" {
		t.Errorf("members %+v", members.Members)
	}
	var events wire.RolloutEventList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID+"/events", "", ""), &events)
	if len(events.Events) == 0 || events.Events[0].Type != "started" {
		t.Errorf("events %+v", events.Events)
	}
	mustDecode(t, ts.do(t, "GET", fmt.Sprintf("/v1/rollouts/%s/events?after=%d", ro.ID, events.Events[len(events.Events)-1].Seq), "", ""), &events)
	if len(events.Events) != 0 {
		t.Errorf("events after the last: %+v", events.Events)
	}
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts?plan=standard&active=true", "", ""), &list)
	if len(list.Rollouts) != 1 || list.Rollouts[0].ID != ro.ID {
		t.Errorf("active rollouts: %+v", list.Rollouts)
	}
	expectProblem(t, ts.do(t, "GET", "/v1/rollouts/nope", "", ""), 404, wire.CodeRolloutNotFound)
	expectProblem(t, ts.do(t, "GET", "/v1/rollouts?active=maybe", "", ""), 400, wire.CodeInvalidParameter, "active")
	expectProblem(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID+"/events?after=-1", "", ""), 400, wire.CodeInvalidParameter, "after")
}

func TestRolloutActions(t *testing.T) {
	ts := newServer(t, roleTokens...)
	fleetOf(t, ts, 3)
	ro := ts.startRollout(t, `{"plan":"standard"}`)
	act := func(action, body string, headers ...string) response {
		t.Helper()
		return ts.do(t, "POST", "/v1/rollouts/"+ro.ID+"/"+action, "application/json", body, headers...)
	}
	state := func(res response) string {
		t.Helper()
		if res.status != 200 {
			t.Fatalf("%d %s", res.status, res.body)
		}
		var out wire.Rollout
		mustDecode(t, res, &out)
		return out.State
	}
	reader := *ts
	reader.token = readerToken
	expectProblem(t, reader.do(t, "POST", "/v1/rollouts/"+ro.ID+"/pause", "", ""), 403, wire.CodeForbidden)
	expectProblem(t, act("resume", ""), 409, wire.CodeRolloutState)
	expectProblem(t, act("pause", "", "If-Match", `"99"`), 412, wire.CodePreconditionFailed)
	if got := state(act("pause", "", "If-Match", fmt.Sprintf(`"%d"`, ro.Version))); got != "paused" {
		t.Errorf("pause: %s", got)
	}
	p := expectProblem(t, act("pause", ""), 409, wire.CodeRolloutState)
	if !strings.Contains(p.Detail, "paused") || !strings.Contains(p.Detail, "running") {
		t.Errorf("an illegal pause does not say which states allow it: %s", p.Detail)
	}
	if got := state(act("resume", "")); got != "running" {
		t.Errorf("resume: %s", got)
	}
	expectProblem(t, act("abort", `{"rollback":"yes"}`), 400, wire.CodeInvalidBody, "/rollback")
	expectProblem(t, act("abort", `{"rollbak":true}`), 400, wire.CodeInvalidBody, "/rollbak")
	// An abort with rollback leaves the rollback to the driver, which reads
	// the members again (here none was changed, but the driver may have
	// changed one since this request read them).
	res := act("abort", `{"rollback":true}`)
	if got := state(res); got != "aborting" {
		t.Errorf("abort: %s", got)
	}
	expectProblem(t, act("abort", ""), 409, wire.CodeRolloutState)
	expectProblem(t, act("resume", ""), 409, wire.CodeRolloutState)
	var events wire.RolloutEventList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+ro.ID+"/events", "", ""), &events)
	var types []string
	for _, e := range events.Events {
		types = append(types, e.Type+"/"+e.Actor)
	}
	if want := []string{"paused/ops", "resumed/ops", "aborted/ops"}; !slices.Equal(types[len(types)-3:], want) {
		t.Errorf("events %v, want them to end %v", types, want)
	}
	// The plan is taken until the driver has finished the abort.
	expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", `{"plan":"standard"}`), 409, wire.CodeRolloutActive)
	// An abort without a body (no rollback) ends a rollout at once.
	ts.plan(t, "other", `{"image":"example.com/app:1"}`)
	ts.publish(t, "other", `{"image":"example.com/app:2"}`)
	other := ts.startRollout(t, `{"plan":"other"}`)
	if res := ts.do(t, "POST", "/v1/rollouts/"+other.ID+"/abort", "", ""); res.status != 200 || state(res) != "aborted" {
		t.Errorf("abort without a body: %d %s", res.status, res.body)
	}
	ts.startRollout(t, `{"plan":"other"}`)
}

// A plan version that no longer validates with a tenant's overrides is
// refused before anything starts, naming the tenant.
func TestRolloutRefusesBrokenTenants(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"relies","compute_config":{},"plan":{"name":"standard"}}`)
	ts.do(t, "POST", "/v1/tenants", "application/json", `{"name":"owns","compute_config":{"image":"own:1"},"plan":{"name":"standard"}}`)
	ts.publish(t, "standard", `{"env":{"A":"1"}}`) // no image: relies has none of its own
	for _, path := range []string{"/v1/rollouts", "/v1/rollouts?dry_run=true"} {
		p := expectProblem(t, ts.do(t, "POST", path, "application/json", `{"plan":"standard"}`), 422, wire.CodePlanBreaksTenants, "/to_version")
		if !strings.Contains(p.Detail, "relies") || strings.Contains(p.Detail, "owns") || !strings.Contains(p.Errors[0].Message, "relies") ||
			!strings.Contains(p.Errors[0].Message, "image") {
			t.Errorf("%s: the problem does not name relies and its problem alone: %s %+v", path, p.Detail, p.Errors)
		}
	}
	var list wire.RolloutList
	mustDecode(t, ts.do(t, "GET", "/v1/rollouts", "", ""), &list)
	if len(list.Rollouts) != 0 {
		t.Errorf("a refused rollout started: %+v", list.Rollouts)
	}
}

func TestRolloutBadBodies(t *testing.T) {
	ts := newServer(t)
	ts.plan(t, "standard", `{"image":"example.com/app:1"}`)
	ts.plan(t, "elsewhere", `{"image":"example.com/app:1"}`)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
		want       []string
	}{
		{"unknown field", `{"plan":"standard","bogus":1}`, 400, wire.CodeInvalidBody, []string{"/bogus"}},
		{"unknown wave field", `{"plan":"standard","waves":[{"name":"a","size":1}]}`, 400, wire.CodeInvalidBody, []string{"/waves/0/size"}},
		{"waves not a list", `{"plan":"standard","waves":"canary"}`, 400, wire.CodeInvalidBody, []string{"/waves"}},
		{"a count of the wrong type", `{"plan":"standard","waves":[{"count":"1"}]}`, 400, wire.CodeInvalidBody, []string{"/waves/0/count"}},
		{"bad durations", `{"plan":"standard","bake":"10 minutes","deadline":"soon"}`, 422, wire.CodeInvalidBody, []string{"/bake", "/deadline"}},
		{"a negative duration", `{"plan":"standard","bake":"-1m"}`, 422, wire.CodeInvalidBody, []string{"/bake"}},
		{"bad waves", `{"plan":"standard","waves":[{"name":"a","percent":150},{"name":"a","count":1,"percent":1}]}`, 422, wire.CodeInvalidBody, []string{"/waves/0/percent", "/waves/1/name", "/waves/1/percent"}},
		{"a bad selector key", `{"plan":"standard","waves":[{"selector":{"Bad Key!":"x","a/b~":"y"}}]}`, 422, wire.CodeInvalidBody, []string{"/waves/0/selector/Bad Key!", "/waves/0/selector/a~1b~0"}},
		{"rest with a selector", `{"plan":"standard","waves":[{"name":"canary","count":1},{"name":"rest","selector":{"ring":"late"}}]}`, 422, wire.CodeInvalidBody, []string{"/waves/1/name"}},
		{"rest with a count", `{"plan":"standard","waves":[{"name":"rest","count":1}]}`, 422, wire.CodeInvalidBody, []string{"/waves/0/name"}},
		{"no such version", `{"plan":"standard","to_version":9}`, 422, wire.CodeInvalidBody, []string{"/to_version"}},
		{"from the target", `{"plan":"standard","from_version":1,"to_version":1}`, 422, wire.CodeInvalidBody, []string{"/from_version"}},
		{"no such plan", `{"plan":"gold"}`, 422, wire.CodeInvalidBody, []string{"/plan"}},
		{"no plan", `{}`, 422, wire.CodeInvalidBody, []string{"/plan"}},
		{"not an object", `[]`, 400, wire.CodeInvalidBody, nil},
		{"bad failures", `{"plan":"standard","max_failures":-1}`, 422, wire.CodeInvalidBody, []string{"/max_failures"}},
		{"a move to no such plan", `{"plan":"standard","to_plan":"gold"}`, 422, wire.CodeInvalidBody, []string{"/to_plan"}},
		{"a move to the plan itself", `{"plan":"standard","to_plan":"standard"}`, 422, wire.CodeInvalidBody, []string{"/to_plan"}},
		{"a move to a bad plan name", `{"plan":"standard","to_plan":"Not A Name"}`, 422, wire.CodeInvalidBody, []string{"/to_plan"}},
		{"a move to no such version", `{"plan":"standard","to_plan":"elsewhere","to_version":2}`, 422, wire.CodeInvalidBody, []string{"/to_version"}},
		{"a move from no such version", `{"plan":"standard","to_plan":"elsewhere","from_version":3}`, 422, wire.CodeInvalidBody, []string{"/from_version"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expectProblem(t, ts.do(t, "POST", "/v1/rollouts", "application/json", tt.body), tt.status, tt.code, tt.want...)
		})
	}
}

// Without a fleet store, plans and rollouts answer 501, as does a tenant
// that names a plan; tenants without one are served as ever.
func TestWithoutFleet(t *testing.T) {
	ts := newServerOn(t, openSQLite(t, filepath.Join(t.TempDir(), "landlord.db"), new(atomic.Int64)), nil)
	for _, req := range [][3]string{
		{"GET", "/v1/plans", ""}, {"POST", "/v1/plans", `{"name":"standard"}`}, {"GET", "/v1/rollouts/x", ""},
		{"POST", "/v1/tenants", `{"name":"acme","compute_config":{},"plan":{"name":"standard"}}`},
	} {
		expectProblem(t, ts.do(t, req[0], req[1], "application/json", req[2]), http.StatusNotImplemented, wire.CodeFleetUnavailable)
	}
	ts.create(t, "plain", `{"image":"a"}`)
}

// countingStore counts the reads of tenants that requests make.
type countingStore struct {
	*sqlite.Store
	gets, lists atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, idOrName string, opts tenant.GetOptions) (*tenant.Tenant, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, idOrName, opts)
}

func (s *countingStore) List(ctx context.Context, opts tenant.ListOptions) (*tenant.Page, error) {
	s.lists.Add(1)
	return s.Store.List(ctx, opts)
}

// TestWaitingReadsTenantsOnce: the tenants waiting for their windows are
// found with a page of the plan's followers, not a read of each (5,000
// pending tenants were 5,000 reads, ~0.75 s, for every GET on PostgreSQL),
// and a start reads none beyond the followers it takes; a few pending
// tenants are read one by one. A tenant that left the plan does not wait:
// the driver skips it.
func TestWaitingReadsTenantsOnce(t *testing.T) {
	store := &countingStore{Store: openSQLite(t, filepath.Join(t.TempDir(), "landlord.db"), new(atomic.Int64))}
	ts := fleetServerOn(t, store, nil)
	now := time.Now().UTC()
	closed := fmt.Sprintf(`{"start":%q,"end":%q}`, now.Add(2*time.Hour).Format("15:04"), now.Add(3*time.Hour).Format("15:04"))
	// start makes n tenants of plan (plan-00…), every third one with its
	// window open, publishes v2 and starts a rollout of it, in one wave;
	// it returns the rollout and the names of those that wait.
	start := func(plan string, n int) (wire.Rollout, []string) {
		t.Helper()
		ts.plan(t, plan, `{"image":"example.com/app:1"}`)
		var want []string
		for i := range n {
			name, window := fmt.Sprintf("%s-%02d", plan, i), closed
			if i%3 == 0 {
				window = "null"
			} else {
				want = append(want, name)
			}
			res := ts.do(t, "POST", "/v1/tenants", "application/json",
				fmt.Sprintf(`{"name":%q,"compute_config":{"image":"own:1"},"plan":{"name":%q},"maintenance_window":%s}`, name, plan, window))
			if res.status != http.StatusCreated {
				t.Fatalf("create %s: %d %s", name, res.status, res.body)
			}
		}
		ts.publish(t, plan, `{"image":"example.com/app:2"}`)
		store.gets.Store(0)
		ro := ts.startRollout(t, fmt.Sprintf(`{"plan":%q}`, plan))
		if got := store.gets.Load(); got != 0 {
			t.Errorf("plan %s: the start read %d tenants one by one, want none", plan, got)
		}
		return ro, want
	}
	names := func(ws []wire.WaitingTenant) []string {
		var out []string
		for _, w := range ws {
			if w.OpensAt == nil {
				t.Errorf("%s waits without opens_at", w.TenantName)
			}
			out = append(out, w.TenantName)
		}
		slices.Sort(out)
		return out
	}

	big, bigWaiting := start("big", 40)
	small, smallWaiting := start("small", 3)
	for _, tt := range []struct {
		name        string
		ro          wire.Rollout
		want        []string
		gets, lists int64
	}{
		{"40 pending", big, bigWaiting, 0, 1},
		{"3 pending", small, smallWaiting, 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(tt.ro.Waiting); !slices.Equal(got, tt.want) {
				t.Errorf("the start: waiting %v, want %v", got, tt.want)
			}
			store.gets.Store(0)
			store.lists.Store(0)
			var got wire.Rollout
			mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+tt.ro.ID, "", ""), &got)
			if !slices.Equal(names(got.Waiting), tt.want) {
				t.Errorf("GET: waiting %v, want %v", names(got.Waiting), tt.want)
			}
			if gets, lists := store.gets.Load(), store.lists.Load(); gets != tt.gets || lists != tt.lists {
				t.Errorf("GET read %d tenants and %d pages, want %d and %d", gets, lists, tt.gets, tt.lists)
			}
		})
	}

	// A tenant that left the plan waits for nothing.
	for _, name := range []string{"big-01", "small-01"} {
		if res := ts.do(t, "PATCH", "/v1/tenants/"+name, "application/merge-patch+json", `{"plan":null}`); res.status != http.StatusOK {
			t.Fatalf("leave the plan: %d %s", res.status, res.body)
		}
	}
	for _, tt := range []struct {
		ro   wire.Rollout
		want []string
	}{{big, slices.DeleteFunc(slices.Clone(bigWaiting), func(n string) bool { return n == "big-01" })}, {small, []string{"small-02"}}} {
		var got wire.Rollout
		mustDecode(t, ts.do(t, "GET", "/v1/rollouts/"+tt.ro.ID, "", ""), &got)
		if !slices.Equal(names(got.Waiting), tt.want) {
			t.Errorf("rollout of %s, a tenant off the plan: waiting %v, want %v", tt.ro.Plan, names(got.Waiting), tt.want)
		}
	}
}

// A fleet move's plan (to_plan): every tenant of the plan, at any version,
// moves onto the other plan on its provider, each carrying its own
// overrides; pinned tenants are left alone. Started, it shows its target,
// and a tenant following the plan cannot be moved onto a plan by hand
// without naming one.
func TestFleetMovePlan(t *testing.T) {
	ts := newServer(t)
	fleetOf(t, ts, 4)
	ts.plan(t, "elsewhere", `{"image":"example.com/other:1"}`)
	body := `{"plan":"standard","to_plan":"elsewhere","waves":[{"name":"canary","count":1}],"max_failures":1}`
	res := ts.do(t, "POST", "/v1/rollouts?dry_run=true", "application/json", body)
	if res.status != http.StatusOK {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	var fp wire.FleetPlan
	mustDecode(t, res, &fp)
	if fp.Plan != "standard" || fp.ToPlan != "elsewhere" || fp.ToProvider != "mock" || fp.ToVersion != 1 {
		t.Errorf("the fleet move's plan: %s → %s on %s version %d; want standard → elsewhere on mock version 1", fp.Plan, fp.ToPlan, fp.ToProvider, fp.ToVersion)
	}
	// Four tenants on v1 and one on v2 move; the pinned one stays.
	if c := fp.Counts; c.Tenants != 5 || c.Pinned != 1 || c.Current != 0 || c.Actions[wire.ActionMove] != 5 {
		t.Errorf("the fleet move's counts: %+v; want 5 tenants moved, 1 pinned, none current", c)
	}
	for _, w := range fp.Waves {
		for _, pt := range w.Tenants {
			d := fp.DiffOf(pt)
			if pt.Action != wire.ActionMove || d == nil || !slices.ContainsFunc(d.Changes, func(ch wire.ConfigChange) bool {
				return strings.HasSuffix(ch.Field, "/image") && ch.To == "example.com/other:1"
			}) {
				t.Errorf("%s in the fleet move's plan: %+v, diff %+v; want moved, its image changing to the other plan's", pt.Name, pt, d)
			}
		}
	}
	ro := ts.startRollout(t, body)
	if ro.ToPlan != "elsewhere" || ro.ToProvider != "mock" || ro.Counts["pending"] != 5 {
		t.Errorf("the fleet move started: %+v; want to elsewhere on mock, 5 pending", ro)
	}
	p := expectProblem(t, ts.do(t, "DELETE", "/v1/plans/elsewhere", "", ""), 409, wire.CodePlanInUse)
	if !strings.Contains(p.Detail, "moved onto") {
		t.Errorf("the refusal to delete a fleet move's target plan says %q; want it to say tenants are moved onto it", p.Detail)
	}
	p = expectProblem(t, ts.do(t, "POST", "/v1/tenants/current/move", "application/json", `{"compute_config":{"compute_provider":"mock","image":"example.com/app:1"}}`), 409, wire.CodeTenantMoving)
	if !strings.Contains(p.Detail, "follows plan standard") {
		t.Errorf("a move of a tenant on a plan without a plan for its target says %q", p.Detail)
	}
	expectProblem(t, ts.do(t, "POST", "/v1/tenants/current/move", "application/json", `{"plan":{"name":"gold"}}`), 422, wire.CodeInvalidPlan, "/plan/name")
	expectProblem(t, ts.do(t, "POST", "/v1/tenants/current/move", "application/json", `{"plan":{"name":"elsewhere","pinned":true}}`), 422, wire.CodeInvalidPlan, "/plan/pinned")
}
