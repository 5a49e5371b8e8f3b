package ui_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/rollout"
)

// call calls the API as ops and returns the answer's status and body.
func (s *site) call(t testing.TB, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// mustCall calls the API as ops and decodes its answer into out, failing
// the test on a status other than want.
func (s *site) mustCall(t testing.TB, want int, method, path, body string, out any) {
	t.Helper()
	status, b := s.call(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: %d %s", method, path, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// fleet makes plan web (version 1), the tenants of configs on it, t0, t1,
// … (each config the tenant's own compute_config), and publishes version
// 2.
func (s *site) fleet(t testing.TB, configs ...string) {
	t.Helper()
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans", `{"name":"web","description":"The shop's web tier."}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans/web/versions", `{"config":{"image":"example.com/shop:1"},"message":"first"}`, nil)
	for i, config := range configs {
		s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants", fmt.Sprintf(`{"name":"t%d","compute_config":%s,"plan":{"name":"web"}}`, i, config), nil)
	}
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans/web/versions", `{"config":{"image":"example.com/shop:2"},"message":"the new shop"}`, nil)
}

// twoWaves moves web to version 2: t0 alone, then the rest.
const twoWaves = `{"plan":"web","waves":[{"name":"canary","count":1},{"name":"rest"}]}`

// startRollout starts a rollout and returns it.
func (s *site) startRollout(t testing.TB, body string) client.Rollout {
	t.Helper()
	var ro client.Rollout
	s.mustCall(t, http.StatusCreated, "POST", "/v1/rollouts", body, &ro)
	return ro
}

func (s *site) rollout(t testing.TB, id string) client.Rollout {
	t.Helper()
	var ro client.Rollout
	s.mustCall(t, http.StatusOK, "GET", "/v1/rollouts/"+id, "", &ro)
	return ro
}

// driveRollouts runs the controller and the rollouts' driver until the
// test ends.
func (s *site) driveRollouts(t *testing.T) {
	s.runController(t)
	ctx, cancel := context.WithCancel(context.Background())
	d := rollout.New(s.store, s.store, rollout.Options{Interval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitRollout waits for a rollout to reach state.
func (s *site) waitRollout(t *testing.T, id, state string) client.Rollout {
	t.Helper()
	var ro client.Rollout
	defer func() {
		if ro.State != state { // the wait failed: show what the rollout is stuck on
			_, members := s.call(t, "GET", "/v1/rollouts/"+id+"/members", "")
			_, tenants := s.call(t, "GET", "/v1/tenants", "")
			t.Logf("members %s\ntenants %s", members, tenants)
		}
	}()
	poll.Until(t, "the rollout is "+state, 30*time.Second, func() (bool, string) {
		ro = s.rollout(t, id)
		return ro.State == state, fmt.Sprintf("%s (%s)", ro.State, ro.Message)
	})
	return ro
}

// waitTenant waits for a tenant to meet done.
func (s *site) waitTenant(t *testing.T, name string, done func(client.Tenant) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api, _ := client.New(client.Config{Address: s.URL, Token: adminToken})
	if _, err := api.Tenants().Wait(ctx, name, done, nil); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// A reader sees a rollout and its waves but no buttons, and is refused an
// action anyway; an admin gets the buttons of the rollout's state.
func TestRolloutPagesByRole(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.fleet(t, `{}`, `{}`, `{}`)
	ro := s.startRollout(t, twoWaves)

	reader := s.browser(t)
	reader.signIn(readerToken)
	list := reader.get("/ui/rollouts")
	for _, want := range []string{`href="/ui/rollouts/` + ro.ID + `"`, ">web</a>", "any → 2", `<span class="badge busy">running</span>`, "canary <span class=\"muted\">(1 of 2)</span>", "0 of 3", `href="/ui/rollouts" aria-current="page"`} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	page := reader.get("/ui/rollouts/" + ro.ID)
	if page.status != 200 {
		t.Fatalf("the rollout: %d", page.status)
	}
	for _, want := range []string{
		`<li class="wave current" aria-current="step">`, "<strong>canary</strong>", "<strong>rest</strong>",
		`<progress max="2" value="0" aria-label="Wave rest: 0 of 2 finished"></progress>`, `<span class="badge gone">2 pending</span>`,
		`data-live="/ui/live?rollout=` + ro.ID + `&amp;view=rollout"`, "<strong>started</strong>",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the rollout's page lacks %s", want)
		}
	}
	if strings.Contains(page.body, `action="/ui/rollouts/`) {
		t.Error("a reader is offered to change the rollout")
	}
	p := reader.post("/ui/rollouts/"+ro.ID+"/pause", url.Values{"csrf": {reader.csrf("/ui/")}, "version": {fmt.Sprint(ro.Version)}})
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "may only read") {
		t.Errorf("a reader's pause: %d", p.status)
	}
	if got := s.rollout(t, ro.ID); got.State != client.RolloutRunning {
		t.Errorf("a reader's pause made the rollout %s", got.State)
	}

	admin := s.browser(t)
	admin.signIn(adminToken)
	page = admin.get("/ui/rollouts/" + ro.ID)
	for _, want := range []string{`action="/ui/rollouts/` + ro.ID + `/pause"`, `action="/ui/rollouts/` + ro.ID + `/abort"`,
		`name="rollback" value="true"`, fmt.Sprintf(`name="version" value="%d"`, ro.Version), ">Abort and roll back</button>"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("an admin lacks %s", want)
		}
	}
	if strings.Contains(page.body, "/resume") {
		t.Error("a running rollout offers to resume")
	}
}

func TestUnknownRolloutsAndPlans(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`)
	ro := s.startRollout(t, twoWaves)
	b := s.browser(t)
	for path, want := range map[string]string{"/ui/rollouts/nope": "there is no rollout", "/ui/plans/nope": "there is no plan"} {
		if p := b.get(path); p.status != http.StatusNotFound || !strings.Contains(p.body, want) {
			t.Errorf("%s: %d", path, p.status)
		}
	}
	csrf := b.csrf("/ui/rollouts/" + ro.ID)
	for _, path := range []string{"/ui/rollouts/nope/pause", "/ui/rollouts/" + ro.ID + "/launch"} {
		if p := b.post(path, url.Values{"csrf": {csrf}, "version": {"1"}}); p.status != http.StatusNotFound {
			t.Errorf("%s: %d", path, p.status)
		}
	}
}

// The buttons act with If-Match the version shown: a rollout that changed
// since, or whose state does not allow it, is shown again with why.
func TestRolloutActions(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`, `{}`)
	ro := s.startRollout(t, twoWaves)
	b := s.browser(t)
	path := "/ui/rollouts/" + ro.ID
	csrf := b.csrf(path)
	act := func(action string, version int64, extra ...string) page {
		t.Helper()
		form := url.Values{"csrf": {csrf}, "version": {fmt.Sprint(version)}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		return b.post(path+"/"+action, form)
	}

	if p := act("pause", ro.Version); p.status != http.StatusSeeOther || p.location != path {
		t.Fatalf("pause: %d %s\n%s", p.status, p.location, p.body)
	}
	paused := s.rollout(t, ro.ID)
	if paused.State != client.RolloutPaused {
		t.Fatalf("after pause the rollout is %s", paused.State)
	}
	page := b.get(path)
	if !strings.Contains(page.body, path+`/resume"`) || strings.Contains(page.body, path+`/pause"`) || !strings.Contains(page.body, "paused by anonymous") {
		t.Error("a paused rollout's page does not offer to resume, or offers to pause, or lacks its message")
	}

	// The version the page showed is gone: nothing is done, and the page
	// says so.
	p := act("resume", ro.Version)
	if p.status != http.StatusPreconditionFailed || !strings.Contains(p.body, "changed after this page showed it (it is now paused)") || !strings.Contains(p.body, `role="alert"`) {
		t.Errorf("a stale resume: %d\n%s", p.status, p.body)
	}
	// The state does not allow it: the API's reason is shown.
	p = act("pause", paused.Version)
	if p.status != http.StatusConflict || !strings.Contains(p.body, "The rollout could not be paused: ") || !strings.Contains(p.body, "only a running rollout can be paused") {
		t.Errorf("pausing a paused rollout: %d\n%s", p.status, p.body)
	}
	if got := s.rollout(t, ro.ID); got.State != client.RolloutPaused || got.Version != paused.Version {
		t.Errorf("refused actions changed the rollout: %s, version %d", got.State, got.Version)
	}
	if p := b.post(path+"/resume", url.Values{"csrf": {csrf}}); p.status != http.StatusBadRequest {
		t.Errorf("an action without a version: %d", p.status)
	}

	if p := act("resume", paused.Version); p.status != http.StatusSeeOther {
		t.Fatalf("resume: %d\n%s", p.status, p.body)
	}
	running := s.rollout(t, ro.ID)
	if p := act("abort", running.Version, "rollback", "true"); p.status != http.StatusSeeOther {
		t.Fatalf("abort: %d\n%s", p.status, p.body)
	}
	// The rollout driver (not run here) finishes an abort with rollback:
	// until it does, the rollout is aborting, live, and offers nothing.
	aborting := s.rollout(t, ro.ID)
	if aborting.State != client.RolloutAborting || !aborting.Rollback {
		t.Errorf("after abort and roll back: %s, rollback %v", aborting.State, aborting.Rollback)
	}
	page = b.get(path)
	if strings.Contains(page.body, `action="/ui/rollouts/`) || !strings.Contains(page.body, "data-live") || !strings.Contains(page.body, "<strong>aborted</strong>") {
		t.Error("an aborting rollout's page offers actions, or is not live, or lacks its event")
	}
}

// A rollout's page names the tenants that failed, linking to them, and
// those waiting for their maintenance windows, with when they open.
func TestRolloutFailedAndWaiting(t *testing.T) {
	s := newSite(t, siteOptions{})
	// t1 fails its update; t2's window opens in two hours.
	s.fleet(t, `{}`, `{"x-mock":{"fail":"terminal","operations":["update"]}}`, `{}`)
	opens := time.Now().UTC().Add(2 * time.Hour)
	s.mustCall(t, http.StatusOK, "PATCH", "/v1/tenants/t2", fmt.Sprintf(`{"maintenance_window":{"start":%q,"end":%q}}`,
		opens.Format("15:04"), opens.Add(time.Hour).Format("15:04")), nil)
	var t1 client.Tenant
	s.mustCall(t, http.StatusOK, "GET", "/v1/tenants/t1", "", &t1)
	s.driveRollouts(t)
	// Provisioned first, so that t1's move is an update, which fails.
	for _, name := range []string{"t0", "t1", "t2"} {
		s.waitTenant(t, name, client.UntilReady)
	}
	ro := s.startRollout(t, `{"plan":"web","waves":[{"name":"all"}]}`)
	s.waitRollout(t, ro.ID, client.RolloutHalted)

	page := s.browser(t).get("/ui/rollouts/" + ro.ID)
	for _, want := range []string{
		"<h3>Failed tenants</h3>", `<a href="/ui/tenants/` + t1.ID + `">t1</a>`, `<span class="badge bad">halted</span>`,
		"<h3>Waiting for their maintenance windows</h3>", `">t2</a> <span class="muted">opens <time`,
		"<strong>tenant_failed</strong>", `action="/ui/rollouts/` + ro.ID + `/resume"`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if list := s.browser(t).get("/ui/rollouts"); !strings.Contains(list.body, `<td data-label="Failed"><span class="badge bad">1</span></td>`) {
		t.Error("the list does not count the failed tenant")
	}
}

// A rollout's stream sends its parts as the driver moves it, and says
// when it has finished.
func TestRolloutLive(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`, `{}`, `{}`)
	ro := s.startRollout(t, twoWaves)
	b := s.browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/ui/live?view=rollout&rollout="+ro.ID, nil)
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, ct)
	}
	var states []string
	finished := false
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if sc.Text() == "event: finished" {
			finished = true
			break
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var u struct {
			ID, Status string
			Fragments  map[string]string
		}
		if err := json.Unmarshal([]byte(data), &u); err != nil || u.ID != ro.ID {
			t.Fatalf("event %s: %v", data, err)
		}
		if len(states) == 0 {
			s.driveRollouts(t) // once the rollout as it was is seen
		}
		if len(states) == 0 || states[len(states)-1] != u.Status {
			states = append(states, u.Status)
		}
		for id, html := range u.Fragments {
			if !strings.Contains(html, `id="`+id+`"`) {
				t.Errorf("fragment %s: %s", id, html)
			}
		}
		if u.Status == client.RolloutCompleted && !strings.Contains(u.Fragments["rollout-summary"], "<dd>3 of 3</dd>") {
			t.Errorf("the completed rollout's summary: %s", u.Fragments["rollout-summary"])
		}
	}
	if !finished || len(states) < 2 || states[0] != client.RolloutRunning || states[len(states)-1] != client.RolloutCompleted {
		t.Errorf("states streamed %v, finished %v (%v)", states, finished, sc.Err())
	}

	// A finished rollout's stream says so at once.
	p := b.get("/ui/live?view=rollout&rollout=" + ro.ID)
	if !strings.HasSuffix(p.body, "event: finished\ndata: {}\n\n") {
		t.Errorf("the stream of a finished rollout: %q", p.body)
	}
	if p := b.get("/ui/live?view=rollout"); p.status != http.StatusBadRequest {
		t.Errorf("a stream without a rollout: %d", p.status)
	}
}

// The plans' pages list the plans with their versions and tenants, and a
// plan's versions with their configs.
func TestPlanPages(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t, `{}`, `{}`)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants", `{"name":"old","compute_config":{},"plan":{"name":"web","version":1,"pinned":true}}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants", `{"name":"loner","compute_config":{"image":"a"}}`, nil)
	b := s.browser(t)
	list := b.get("/ui/plans")
	for _, want := range []string{`<a class="name" href="/ui/plans/web">web</a>`, `<td data-label="Current version">1</td>`,
		`<td data-label="Latest version">2</td>`, `<a href="/ui/?plan=web">3</a>`, "The shop&#39;s web tier."} {
		if !strings.Contains(list.body, want) {
			t.Errorf("the list lacks %s", want)
		}
	}
	page := b.get("/ui/plans/web")
	for _, want := range []string{"Version 2", "the new shop", "&#34;image&#34;: &#34;example.com/shop:2&#34;", "&#34;image&#34;: &#34;example.com/shop:1&#34;",
		`Version 1 <span class="badge ok">current</span>`, "3 tenants on it", "0 tenants on it"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the plan's page lacks %s", want)
		}
	}
	if strings.Index(page.body, "Version 2") > strings.Index(page.body, "Version 1") {
		t.Error("the versions are not newest first")
	}
	if strings.Contains(page.body, "<form") && strings.Contains(page.body, `method="post" action="/ui/plans`) {
		t.Error("the plan's page offers to change it")
	}
	// The tenants it links to are the plan's.
	tenants := b.get("/ui/?plan=web")
	if !strings.Contains(tenants.body, ">t0</a>") || !strings.Contains(tenants.body, ">old</a>") || strings.Contains(tenants.body, ">loner</a>") {
		t.Error("the list of the plan's tenants is not theirs")
	}
	// A version's config is shown as it is because it holds no secret:
	// the API refuses one.
	status, body := s.call(t, "POST", "/v1/plans/web/versions", `{"config":{"image":"a","secrets":{"K":"hunter2"}}}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "writeOnly") {
		t.Errorf("a secret in a plan's version: %d %s", status, body)
	}
}

// A tenant's page shows its plan and its maintenance window.
func TestTenantShowsPlanAndWindow(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.fleet(t)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants", `{"name":"acme","compute_config":{},"plan":{"name":"web","version":1,"pinned":true},`+
		`"maintenance_window":{"days":["sat","sun"],"start":"02:00","end":"04:00","time_zone":"Europe/Berlin"}}`, nil)
	p := s.browser(t).get("/ui/tenants/acme")
	for _, want := range []string{`<dt>Plan</dt><dd><a href="/ui/plans/web">web@1</a> <span class="badge warn">pinned</span>`,
		"<dt>Maintenance window</dt><dd>sat, sun 02:00–04:00 Europe/Berlin</dd>", "merged over version 1 of plan"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the tenant's page lacks %s", want)
		}
	}
}

// A fleet move's pages say what it moves where, and what its abort does;
// driven by the controller and the rollouts' driver, it moves every
// tenant of plan web onto plan web-eu.
func TestFleetMovePages(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.fleet(t, `{}`, `{}`)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans", `{"name":"web-eu"}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans/web-eu/versions", `{"config":{"image":"example.com/shop-eu:1"}}`, nil)
	ro := s.startRollout(t, `{"plan":"web","to_plan":"web-eu","waves":[{"name":"canary","count":1},{"name":"rest"}]}`)

	admin := s.browser(t)
	admin.signIn(adminToken)
	if list := admin.get("/ui/rollouts"); !strings.Contains(list.body, "any → web-eu 1") {
		t.Errorf("the rollouts list does not show the fleet move's target (any → web-eu 1)")
	}
	page := admin.get("/ui/rollouts/" + ro.ID)
	for _, want := range []string{`Move of <a href="/ui/plans/web">web</a> to <a href="/ui/plans/web-eu">web-eu</a> on mock, version 1`, "cancels the moves that have not switched"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the fleet move's page lacks %s", want)
		}
	}

	s.driveRollouts(t)
	s.waitRollout(t, ro.ID, "completed")
	var moved client.TenantList
	s.mustCall(t, http.StatusOK, "GET", "/v1/tenants?plan=web-eu", "", &moved)
	if len(moved.Tenants) != 2 {
		_, members := s.call(t, "GET", "/v1/rollouts/"+ro.ID+"/members", "")
		_, events := s.call(t, "GET", "/v1/rollouts/"+ro.ID+"/events", "")
		_, tenants := s.call(t, "GET", "/v1/tenants", "")
		t.Fatalf("%d tenants follow web-eu after the fleet move; want 2\nmembers %s\nevents %s\ntenants %s", len(moved.Tenants), members, events, tenants)
	}
	for _, tn := range moved.Tenants {
		if tn.Status != client.StatusReady || len(tn.Placements) != 1 || tn.Placements[0].Move != nil {
			t.Errorf("%s after the fleet move: %s, placements %+v; want ready, its move over", tn.Name, tn.Status, tn.Placements)
		}
	}
}

// A rollout of a plan whose version holds a fragment per placement, over a
// tenant of two placements that follow it: the controller provisions each
// placement with its own layer of the plan. Version 2 makes placement us
// (only) fail its update, through its fragment, and the rollout halts on
// that tenant's failure, placement eu being updated.
func TestRolloutOfPlacementFragments(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans", `{"name":"regional"}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans/regional/versions", `{"config":{"image":"example.com/shop:1"}}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/tenants",
		`{"name":"acme","plan":{"name":"regional"},"placements":[{"name":"eu","compute_config":{}},{"name":"us","compute_config":{}}]}`, nil)
	s.mustCall(t, http.StatusCreated, "POST", "/v1/plans/regional/versions",
		`{"config":{"image":"example.com/shop:2","placements":{"us":{"x-mock":{"fail":"terminal","operations":["update"]}}}}}`, nil)
	s.driveRollouts(t)
	s.waitTenant(t, "acme", client.UntilReady)
	ro := s.startRollout(t, `{"plan":"regional","max_failures":0}`)
	ro = s.waitRollout(t, ro.ID, "halted")
	if !slices.Equal(ro.Failed, []string{"acme"}) {
		t.Errorf("the halted rollout's failed tenants: %v; want acme", ro.Failed)
	}
	var tn client.Tenant
	s.mustCall(t, http.StatusOK, "GET", "/v1/tenants/acme", "", &tn)
	states := map[string]string{}
	for _, p := range tn.Placements {
		states[p.Name] = fmt.Sprintf("%s@%d", p.Status, p.ObservedGeneration)
	}
	if states["eu"] != "ready@2" || states["us"] != "failed@2" {
		t.Errorf("after the rollout acme's placements are %v; want eu ready and us failed at generation 2 (us's fragment fails its update)", states)
	}
}
