package ui_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// loopbackGuard lets webhooks reach receivers on this machine, as an
// operator's events.allow_networks would.
func loopbackGuard() *events.Guard {
	return events.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")})
}

// subscription reads a subscription from the site's store, secrets and
// all.
func (s *site) subscription(t testing.TB, name string) *events.Subscription {
	t.Helper()
	sub, err := s.store.Subscription(context.Background(), name)
	if err != nil {
		t.Fatalf("subscription %s: %v", name, err)
	}
	return sub
}

// subscribe creates a subscription through the API, as ops.
func (s *site) subscribe(t testing.TB, name, url, extra string) wire.Subscription {
	t.Helper()
	var sub wire.Subscription
	s.mustCall(t, http.StatusCreated, "POST", "/v1/subscriptions",
		`{"name":"`+name+`","url":"`+url+`","secret":"`+events.NewSecret()+`"`+extra+`}`, &sub)
	return sub
}

// dispatch runs a dispatcher of the site's events until the test ends,
// with retries a few milliseconds apart given up after 50 ms.
func (s *site) dispatch(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := events.New(events.Options{Store: s.store, Leases: s.store, Identity: "test", LeaseTTL: 5 * time.Second,
		Encoder: &events.Encoder{Source: "test", Tenant: func(t *tenant.Tenant) wire.Tenant { return wire.Tenant{ID: t.ID, Name: t.Name} }},
		Guard:   loopbackGuard(), Timeout: 2 * time.Second, Initial: 5 * time.Millisecond, MaxWait: 20 * time.Millisecond,
		Horizon: 50 * time.Millisecond, Poll: 5 * time.Millisecond})
	var wg sync.WaitGroup
	wg.Go(func() { d.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// receiver is a webhook receiver that answers 500 with a message while
// down, else 204.
type receiver struct {
	*httptest.Server
	down atomic.Bool
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		if r.down.Load() {
			http.Error(w, "down for maintenance <b>until noon</b>", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

var shownSecret = regexp.MustCompile(`<pre class="code secret" id="new-secret">([^<]*)</pre>`)

// secretOn returns the secret a page shows, "" when none.
func secretOn(body string) string {
	if m := shownSecret.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

// An admin subscribes a webhook through the form: the console makes its
// secret, which the next page shows once and the API stores; the list
// shows it. A reader sees both pages without a control, and an action
// sent anyway is refused by the API.
func TestSubscriptionPagesByRole(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	admin := s.browser(t)
	admin.signIn(adminToken)
	form := admin.get("/ui/subscriptions/new")
	if form.status != 200 {
		t.Fatalf("the form: %d\n%s", form.status, form.body)
	}
	// Every event type is offered, as a checkbox.
	for _, typ := range client.EventTypes() {
		if !strings.Contains(form.body, `type="checkbox" id="f.2f.types-`) || !strings.Contains(form.body, `name="/types" value="`+typ+`"`) {
			t.Errorf("the form has no checkbox of %s", typ)
		}
	}
	p := admin.post("/ui/subscriptions/new", url.Values{"csrf": {admin.csrf("/ui/subscriptions/new")}, "_action": {"save"},
		"/name": {"hooks"}, "/url": {"https://hooks.example.com/landlord"}, "/types": {"landlord.tenant.ready"},
		"/labels#key": {"tier"}, "/labels#value": {"gold"}, "/description": {"The CRM's onboarding"}})
	if p.status != http.StatusSeeOther || p.location != "/ui/subscriptions/hooks" {
		t.Fatalf("create: %d %s\n%s", p.status, p.location, p.body)
	}
	if strings.Contains(p.location, "whsec_") || strings.Contains(p.body, "whsec_") {
		t.Error("the form's answer carries the secret in the clear")
	}
	page := admin.get("/ui/subscriptions/hooks")
	secret := secretOn(page.body)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 {
		t.Fatalf("the page shows the secret %q (%v), want whsec_ and 32 bytes in base64:\n%s", secret, err, page.body)
	}
	if !strings.Contains(page.body, "it will not be shown again") || page.header.Get("Cache-Control") != "no-store" {
		t.Error("the secret is not said to be shown once, or the page may be kept")
	}
	stored := s.subscription(t, "hooks")
	if len(stored.Secrets) != 1 || stored.Secrets[0].Value != secret {
		t.Errorf("the stored secret is not the one shown")
	}
	if stored.CreatedBy != "ops" || stored.Labels["tier"] != "gold" || len(stored.Types) != 1 || stored.Types[0] != events.TenantReady ||
		stored.Description != "The CRM's onboarding" {
		t.Errorf("stored %+v", stored)
	}
	if again := admin.get("/ui/subscriptions/hooks"); again.status != 200 || strings.Contains(again.body, secret) || secretOn(again.body) != "" {
		t.Error("the secret is shown a second time")
	}
	list := admin.get("/ui/subscriptions")
	row := regexp.MustCompile(`(?s)<tr id="s-` + stored.ID + `">.*?</tr>`).FindString(list.body)
	for _, want := range []string{`href="/ui/subscriptions/hooks"`, "https://hooks.example.com/landlord", `<span class="chip">landlord.tenant.ready</span>`,
		`<span class="chip">tier=gold</span>`, `<span class="badge ok">enabled</span>`} {
		if !strings.Contains(row, want) {
			t.Errorf("the list's row lacks %s:\n%s", want, row)
		}
	}
	for _, control := range []string{`href="/ui/subscriptions/new"`, "/ui/subscriptions/hooks/disable", "/ui/subscriptions/hooks/rotate", "/ui/subscriptions/hooks/delete"} {
		if !strings.Contains(list.body+page.body, control) {
			t.Errorf("an admin lacks the control %s", control)
		}
	}

	reader := s.browser(t)
	reader.signIn(readerToken)
	list, page = reader.get("/ui/subscriptions"), reader.get("/ui/subscriptions/hooks")
	if list.status != 200 || page.status != 200 || !strings.Contains(list.body, "hooks.example.com") || !strings.Contains(page.body, "tier=gold") {
		t.Fatalf("a reader's pages: %d %d", list.status, page.status)
	}
	for _, control := range []string{"New subscription", "/disable", "/enable", "/rotate", "/delete", "/redeliver", `method="post" action="/ui/subscriptions`} {
		if strings.Contains(list.body+page.body, control) {
			t.Errorf("a reader sees the write control %q", control)
		}
	}
	csrf := reader.csrf("/ui/")
	version := fmt.Sprint(stored.Version)
	for _, action := range []struct {
		path string
		form url.Values
	}{
		{"/ui/subscriptions/hooks/disable", url.Values{"version": {version}}},
		{"/ui/subscriptions/hooks/rotate", url.Values{"version": {version}}},
		{"/ui/subscriptions/hooks/delete", url.Values{"confirm": {"hooks"}}},
		{"/ui/subscriptions/hooks/redeliver", url.Values{"event_id": {"evt_1"}}},
		{"/ui/subscriptions/new", url.Values{"_action": {"save"}, "/name": {"other"}, "/url": {"https://hooks.example.com/"}}},
	} {
		action.form.Set("csrf", csrf)
		if p := reader.post(action.path, action.form); p.status != http.StatusForbidden || !strings.Contains(p.body, "may only read") {
			t.Errorf("a reader's POST %s: %d", action.path, p.status)
		}
	}
	if after := s.subscription(t, "hooks"); after.Version != stored.Version || len(after.Secrets) != 1 {
		t.Errorf("a reader's actions changed the subscription: version %d, %d secrets", after.Version, len(after.Secrets))
	}
	if _, err := s.store.Subscription(context.Background(), "other"); err == nil {
		t.Error("a reader created a subscription")
	}
}

// The API's verdicts on a subscription are shown at their fields, what was
// typed kept; a row of labels more is a row more; a taken name is shown
// at the name. Nothing refused is stored.
func TestSubscriptionFormShowsTheAPIsProblems(t *testing.T) {
	s := newSite(t, siteOptions{})
	b := s.browser(t)
	csrf := b.csrf("/ui/subscriptions/new")
	form := url.Values{"csrf": {csrf}, "_action": {"save"}, "/name": {"Hooks!"}, "/url": {"http://hooks.example.com/x"},
		"/labels#key": {"bad key"}, "/labels#value": {"x"}, "/description": {"kept"}}
	p := b.post("/ui/subscriptions/new", form)
	if p.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad subscription: %d\n%s", p.status, p.body)
	}
	for _, want := range []string{`id="f.2f.name-err"`, `id="f.2f.url-err"`, `id="f.2f.labels-err"`, "http is for loopback receivers only",
		`value="Hooks!"`, `value="http://hooks.example.com/x"`, `value="bad key"`, `value="kept"`, "3 problems, shown at their fields"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the refused form lacks %s", want)
		}
	}
	if strings.Contains(p.body, "whsec_") {
		t.Error("the refused form shows the secret it made")
	}
	more := b.post("/ui/subscriptions/new", with(form, "_action", "more:/labels"))
	if more.status != 200 || strings.Count(more.body, `name="/labels#key"`) != 2 {
		t.Errorf("a row more: %d, %d rows", more.status, strings.Count(more.body, `name="/labels#key"`))
	}
	if subs, _ := s.store.Subscriptions(context.Background()); len(subs) != 0 {
		t.Fatalf("a refused subscription was stored: %+v", subs[0])
	}
	s.subscribe(t, "hooks", "https://hooks.example.com/a", "")
	taken := b.post("/ui/subscriptions/new", url.Values{"csrf": {csrf}, "_action": {"save"}, "/name": {"hooks"}, "/url": {"https://hooks.example.com/b"}})
	if taken.status != http.StatusConflict || !strings.Contains(taken.body, `<ul class="errors" id="f.2f.name-err"><li>is taken</li></ul>`) {
		t.Errorf("a taken name: %d\n%s", taken.status, taken.body)
	}
	if p := b.post("/ui/subscriptions/new", with(form, "_action", "bogus")); p.status != http.StatusBadRequest {
		t.Errorf("an unknown button: %d", p.status)
	}
}

// Disable and enable are sent at the version the page showed: a stale one
// is refused, saying so. Rotating makes a new secret, shown once, the
// previous one kept signing for the time chosen. Deleting needs the name
// typed.
func TestSubscriptionActions(t *testing.T) {
	s := newSite(t, siteOptions{})
	s.subscribe(t, "hooks", "https://hooks.example.com/a", "")
	b := s.browser(t)
	csrf := b.csrf("/ui/subscriptions/hooks")
	if p := b.post("/ui/subscriptions/hooks/disable", url.Values{"csrf": {csrf}, "version": {"1"}}); p.status != http.StatusSeeOther {
		t.Fatalf("disable: %d %s", p.status, p.body)
	}
	if sub := s.subscription(t, "hooks"); sub.Enabled || sub.Version != 2 {
		t.Errorf("disabled: enabled %v, version %d", sub.Enabled, sub.Version)
	}
	page := b.get("/ui/subscriptions/hooks")
	if !strings.Contains(page.body, `<span class="badge bad">disabled</span>`) || !strings.Contains(page.body, "/ui/subscriptions/hooks/enable") {
		t.Error("the disabled subscription's page does not say so, or offers no Enable")
	}
	p := b.post("/ui/subscriptions/hooks/enable", url.Values{"csrf": {csrf}, "version": {"1"}})
	if p.status != http.StatusPreconditionFailed || !strings.Contains(p.body, "changed after this page showed it") {
		t.Errorf("enable at a stale version: %d", p.status)
	}
	if p := b.post("/ui/subscriptions/hooks/enable", url.Values{"csrf": {csrf}}); p.status != http.StatusBadRequest {
		t.Errorf("enable without a version: %d", p.status)
	}
	if p := b.post("/ui/subscriptions/hooks/enable", url.Values{"csrf": {csrf}, "version": {"2"}}); p.status != http.StatusSeeOther {
		t.Errorf("enable: %d %s", p.status, p.body)
	}

	first := s.subscription(t, "hooks").Secrets[0].Value
	if p := b.post("/ui/subscriptions/hooks/rotate", url.Values{"csrf": {csrf}, "version": {"3"}, "previous": {"1h"}}); p.status != http.StatusSeeOther {
		t.Fatalf("rotate: %d %s", p.status, p.body)
	}
	page = b.get("/ui/subscriptions/hooks")
	secret := secretOn(page.body)
	sub := s.subscription(t, "hooks")
	if secret == "" || len(sub.Secrets) != 2 || sub.Secrets[0].Value != secret || sub.Secrets[1].Value != first || sub.Secrets[1].ExpiresAt == nil {
		t.Fatalf("after rotating, the page shows %q and the subscription has %+v", secret, sub.Secrets)
	}
	if until := time.Until(*sub.Secrets[1].ExpiresAt); until < 50*time.Minute || until > time.Hour {
		t.Errorf("the previous secret signs for %s more, want 1h", until)
	}
	if !strings.Contains(page.body, "The new signing secret") || !strings.Contains(page.body, `<span class="badge warn">previous</span> signing until`) {
		t.Error("the page does not say the secret is new and the previous one still signs")
	}
	if strings.Contains(page.body, first) || strings.Contains(b.get("/ui/subscriptions/hooks").body, secret) {
		t.Error("a secret is shown again")
	}
	if p := b.post("/ui/subscriptions/hooks/rotate", url.Values{"csrf": {csrf}, "version": {"4"}, "previous": {"9999h"}}); p.status != http.StatusBadRequest {
		t.Errorf("a keep that is not a choice: %d", p.status)
	}

	if p := b.post("/ui/subscriptions/hooks/delete", url.Values{"csrf": {csrf}, "confirm": {"hook"}}); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, `id="confirm-err"`) {
		t.Errorf("delete with a wrong name: %d", p.status)
	}
	s.subscription(t, "hooks")
	if p := b.post("/ui/subscriptions/hooks/delete", url.Values{"csrf": {csrf}, "confirm": {"hooks"}}); p.status != http.StatusSeeOther || p.location != "/ui/subscriptions" {
		t.Errorf("delete: %d %s", p.status, p.location)
	}
	if _, err := s.store.Subscription(context.Background(), "hooks"); err == nil {
		t.Error("the subscription was not deleted")
	}
	if p := b.get("/ui/subscriptions/hooks"); p.status != http.StatusNotFound {
		t.Errorf("a deleted subscription's page: %d", p.status)
	}
}

// A secret waiting to be shown is shown on its subscription's page only,
// to the session that made it, once.
func TestNewSecretIsShownOnceToItsSession(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	s.subscribe(t, "other", "https://hooks.example.com/o", "")
	a := s.browser(t)
	a.signIn(adminToken)
	p := a.post("/ui/subscriptions/new", url.Values{"csrf": {a.csrf("/ui/subscriptions/new")}, "_action": {"save"},
		"/name": {"hooks"}, "/url": {"https://hooks.example.com/h"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create: %d", p.status)
	}
	if secretOn(a.get("/ui/subscriptions/other").body) != "" {
		t.Error("another subscription's page shows the secret")
	}
	// The cookie, copied into another session of the same user, shows
	// nothing there.
	other := s.browser(t)
	other.signIn(adminToken)
	u, _ := url.Parse(s.URL + "/ui/subscriptions/hooks")
	for _, ck := range a.http.Jar.Cookies(u) {
		if ck.Name == "landlord_new_secret" {
			other.http.Jar.SetCookies(u, []*http.Cookie{ck})
		}
	}
	if secretOn(other.get("/ui/subscriptions/hooks").body) != "" {
		t.Error("another session is shown the secret")
	}
	if secretOn(a.get("/ui/subscriptions/hooks").body) == "" {
		t.Error("the session that made it is not shown the secret")
	}
}

// The delivery log: a receiver that keeps failing gets its deliveries
// given up and its subscription disabled with the reason, which the page
// shows with each delivery's attempts, status, error and subject; a
// delivery's page lists its attempts with the receiver's answer.
// Redeliver makes it pending again, and once the subscription is enabled
// it is delivered. The log filters by state and pages.
func TestDeliveryLog(t *testing.T) {
	s := newSite(t, siteOptions{tokens: tokens})
	rc := newReceiver(t)
	rc.down.Store(true)
	s.subscribe(t, "hooks", rc.URL+"/landlord", "")
	s.dispatch(t)
	id := s.createTenant(t, `{"name":"acme","compute_config":{"image":"a"}}`)
	poll.Until(t, "the delivery is given up", 20*time.Second, func() (bool, string) {
		sub := s.subscription(t, "hooks")
		return !sub.Enabled, sub.DisabledReason
	})
	b := s.browser(t)
	b.signIn(adminToken)
	page := b.get("/ui/subscriptions/hooks")
	reason := html.EscapeString(s.subscription(t, "hooks").DisabledReason)
	if page.status != 200 || reason == "" || !strings.Contains(page.body, reason) {
		t.Fatalf("the page does not say why the subscription was disabled (%q): %d\n%s", reason, page.status, page.body)
	}
	row := regexp.MustCompile(`(?s)<tr id="d-evt_[^"]+">.*?</tr>`).FindString(page.body)
	event := regexp.MustCompile(`evt_[0-9a-f]+`).FindString(row)
	for _, want := range []string{`<code>landlord.tenant.created</code>`, `href="/ui/tenants/` + id + `"`, `<span class="badge bad">failed</span>`,
		"500 Internal Server Error", `<td data-label="Attempts">5</td>`, `name="event_id" value="` + event + `"`, ">Redeliver</button>"} {
		if !strings.Contains(row, want) {
			t.Errorf("the delivery's row lacks %s:\n%s", want, row)
		}
	}
	if p := b.get("/ui/subscriptions/hooks?state=delivered"); strings.Contains(p.body, `<tr id="d-`+event) || !strings.Contains(p.body, "No delivery is delivered") {
		t.Error("the log filtered to delivered shows the failed delivery")
	}
	if p := b.get("/ui/subscriptions/hooks?state=lost"); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="state-err"`) {
		t.Errorf("a state that is none: %d", p.status)
	}
	detail := b.get("/ui/subscriptions/hooks/deliveries/" + event)
	if detail.status != 200 || strings.Count(detail.body, `class="event attempt-bad"`) != 5 ||
		!strings.Contains(detail.body, html.EscapeString("down for maintenance <b>until noon</b>")) || !strings.Contains(detail.body, " ms</span>") {
		t.Errorf("the delivery's page: %d\n%s", detail.status, detail.body)
	}
	if m := inline.FindString(detail.body); m != "" {
		t.Errorf("the delivery's page has %q inline", m)
	}

	// Sent again: pending, and delivered once the subscription is enabled.
	csrf := b.csrf("/ui/subscriptions/hooks")
	p := b.post("/ui/subscriptions/hooks/redeliver", url.Values{"csrf": {csrf}, "event_id": {event}, "back": {"failed"}})
	if p.status != http.StatusSeeOther || p.location != "/ui/subscriptions/hooks?state=failed" {
		t.Fatalf("redeliver: %d %s %s", p.status, p.location, p.body)
	}
	if d, _, err := s.store.Delivery(context.Background(), s.subscription(t, "hooks").ID, event); err != nil || d.State != events.Pending {
		t.Fatalf("after redeliver the delivery is %+v (%v)", d, err)
	}
	rc.down.Store(false)
	version := fmt.Sprint(s.subscription(t, "hooks").Version)
	if p := b.post("/ui/subscriptions/hooks/enable", url.Values{"csrf": {csrf}, "version": {version}}); p.status != http.StatusSeeOther {
		t.Fatalf("enable: %d %s", p.status, p.body)
	}
	poll.Until(t, "the delivery is delivered", 20*time.Second, func() (bool, string) {
		d, _, err := s.store.Delivery(context.Background(), s.subscription(t, "hooks").ID, event)
		return err == nil && d.State == events.Delivered, fmt.Sprintf("%+v %v", d, err)
	})
	detail = b.get("/ui/subscriptions/hooks/deliveries/" + event)
	if !strings.Contains(detail.body, `<span class="badge ok">delivered</span>`) || !strings.Contains(detail.body, `<span class="badge ok">204 No Content</span>`) ||
		!strings.Contains(detail.body, `value="delivery"`) {
		t.Errorf("the delivered delivery's page:\n%s", detail.body)
	}
	if p := b.post("/ui/subscriptions/hooks/redeliver", url.Values{"csrf": {csrf}, "event_id": {event}, "back": {"delivery"}}); p.status != http.StatusSeeOther ||
		p.location != "/ui/subscriptions/hooks/deliveries/"+event {
		t.Errorf("redeliver from its page: %d %s", p.status, p.location)
	}
	if p := b.post("/ui/subscriptions/hooks/redeliver", url.Values{"csrf": {csrf}, "event_id": {"evt_nope"}}); p.status != http.StatusNotFound {
		t.Errorf("redeliver an event there is not: %d", p.status)
	}

	// More than a page: the newest first, then the rest.
	for i := range 50 {
		s.createTenant(t, fmt.Sprintf(`{"name":"t%d","compute_config":{"image":"a"}}`, i))
	}
	poll.Until(t, "51 deliveries delivered", 20*time.Second, func() (bool, string) {
		page, err := s.store.Deliveries(context.Background(), s.subscription(t, "hooks").ID, events.DeliveryListOptions{State: events.Delivered, PageSize: 100})
		return err == nil && len(page.Deliveries) == 51, fmt.Sprint(len(page.Deliveries), err)
	})
	first := b.get("/ui/subscriptions/hooks")
	next := regexp.MustCompile(`<a class="next" rel="next" href="([^"]+)">`).FindStringSubmatch(first.body)
	if n := strings.Count(first.body, `<tr id="d-evt_`); n != 50 || next == nil {
		t.Fatalf("the first page has %d deliveries and next %v", n, next)
	}
	if strings.Contains(first.body, `<tr id="d-`+event) {
		t.Error("the first page, newest first, holds the oldest delivery")
	}
	second := b.get(html.UnescapeString(next[1]))
	if n := strings.Count(second.body, `<tr id="d-evt_`); n != 1 || !strings.Contains(second.body, `<tr id="d-`+event) || !strings.Contains(second.body, ">First page</a>") {
		t.Errorf("the second page has %d deliveries, the first event: %v", n, strings.Contains(second.body, event))
	}
}
