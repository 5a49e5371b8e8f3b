package ui_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/browsertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

type css = chromedp.CSS

// The console in a real browser, on a real landlord serve (the mock
// provider, taking 1.5 s an operation so that statuses can be watched):
// sign in, create a tenant through the generated form, see the API's
// verdict on a field at its input, watch it turn ready without a reload,
// edit it, delete it, follow a rollout to completed without a reload, and
// see a reader get no write controls. With
// LANDLORD_SCREENSHOTS=docs/ui it writes the screenshots docs/ui.md shows.
func TestConsoleInABrowser(t *testing.T) {
	b := browsertest.NewWith(t, browsertest.Config{Width: 1280, Height: 860, Timeout: 90 * time.Second})
	p := servetest.New(t, servetest.Options{
		Config: "compute:\n  mock:\n    latency: 1500ms\n    x-mock: {listen: true}\n",
		Env:    []string{"LANDLORD_ADMIN_TOKEN=" + adminToken, "LANDLORD_READER_TOKEN=" + readerToken},
	})
	p.Start()
	base := "http://" + p.Addr()
	text := func(sel string) string { t.Helper(); return pageText(t, b, sel) }
	eval := func(js string) bool { t.Helper(); return pageTrue(t, b, js) }
	// until waits for a condition in the page, without reloading it.
	until := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(b.Context(), chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			page, _ := chromedp.Run(b.Context(), chromedp.Evaluate[string](`location.href + "\n" + document.querySelector("main").innerText`))
			t.Fatalf("never %s: %v\n%s", js, err, page)
		}
	}
	desktop := func() { b.Do(chromedp.EmulateViewport(1280, 860)) }

	// Sign in.
	b.Do(chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#token")))
	b.Screenshot(1280, 640, "signin.png")
	desktop()
	b.Do(chromedp.SendKeys(css("#token"), adminToken), chromedp.Click(css(".signin button[type=submit]")),
		chromedp.WaitVisible(css(".empty")))

	// The form made from the mock's schema; a port out of range comes back
	// from the API and is shown at its input.
	b.Do(chromedp.Click(css(".empty a.button")), chromedp.WaitVisible(css(`[name="/name"]`)))
	b.Do(chromedp.SendKeys(css(`[name="/name"]`), "acme"))
	b.Do(chromedp.SendKeys(css(`[name="/compute_config/image"]`), "registry.example/shop:1.4"))
	b.Do(chromedp.Click(css(`[id="f.2f.compute_config.2f.ports"] > summary`)),
		chromedp.Click(css(`button[value="add:/compute_config/ports"]`)),
		chromedp.WaitVisible(css(`[name="/compute_config/ports/0/container_port"]`)))
	b.Do(chromedp.SendKeys(css(`[name="/compute_config/ports/0/container_port"]`), "70000"))
	b.Do(chromedp.SendKeys(css(`[name="/compute_config/env#key"]`), "LOG_LEVEL"),
		chromedp.SendKeys(css(`[name="/compute_config/env#value"]`), "info"),
		chromedp.Click(css(".form-actions button.primary")),
		chromedp.WaitVisible(css(`[id="f.2f.compute_config.2f.ports.2f.0.2f.container_port-err"]`)))
	if got := text(`[id="f.2f.compute_config.2f.ports.2f.0.2f.container_port-err"]`); got != "must be at most 65535" {
		t.Errorf("the port's error: %q", got)
	}
	if !eval(`document.querySelector('[name="/compute_config/ports/0/container_port"]').getAttribute('aria-invalid') === 'true'` +
		` && document.querySelector('[name="/name"]').value === 'acme'`) {
		t.Error("the invalid input is not marked, or the form lost what was typed")
	}
	// The 422 of the form's answer is what the browser reports; nothing else.
	if ps := b.Take(); len(ps) != 1 || !strings.Contains(ps[0].Text, "422") {
		t.Errorf("the browser reported %v", ps)
	}
	b.Screenshot(1280, 860, "form-error.png")
	desktop()

	// Fixed, it is created; the page shows it turn ready by itself.
	b.Do(chromedp.Clear(css(`[name="/compute_config/ports/0/container_port"]`)),
		chromedp.SendKeys(css(`[name="/compute_config/ports/0/container_port"]`), "8080"),
		chromedp.Click(css(".form-actions button.primary")), chromedp.WaitVisible(css("#summary")))
	eval(`(window.landed = true)`)
	if first := text("#summary .badge"); first == "ready" {
		t.Errorf("the tenant was ready before the page could watch it")
	}
	until(`document.querySelector('#summary .badge').textContent === 'ready'`)
	until(`document.querySelector('.live-state').textContent === 'Live'`)
	if !eval(`window.landed === true`) {
		t.Error("the page reloaded to show the new status")
	}
	if !eval(`document.querySelectorAll('#history .ev-status').length >= 2`) {
		t.Error("the history did not follow the transitions")
	}
	b.Screenshot(1280, 1100, "tenant.png")
	b.Screenshot(390, 844, "tenant-phone.png")
	desktop()

	// Edit: the form holds the tenant's config; saving changes it.
	b.Do(chromedp.Click(css(`#actions a.button`)), chromedp.WaitVisible(css(`[name="/compute_config/image"]`)))
	if !eval(`document.querySelector('[name="/compute_config/ports/0/container_port"]').value === '8080'`) {
		t.Error("the edit form does not hold the tenant's port")
	}
	b.Do(chromedp.Clear(css(`[name="/compute_config/image"]`)),
		chromedp.SendKeys(css(`[name="/compute_config/image"]`), "registry.example/shop:1.5"),
		chromedp.Click(css(".form-actions button.primary")), chromedp.WaitVisible(css("#summary")))
	eval(`(window.landed = true)`)
	until(`document.querySelector('#summary').textContent.includes('2 of 2 settled')`)
	if !eval(`window.landed === true && document.querySelector('pre.code').textContent.includes('shop:1.5')`) {
		t.Error("the edit is not shown, or the page reloaded")
	}

	// More tenants, for the list.
	for _, name := range []string{"globex", "initech"} {
		b.Do(chromedp.Navigate(base+"/ui/tenants/new"), chromedp.WaitVisible(css(`[name="/name"]`)),
			chromedp.SendKeys(css(`[name="/name"]`), name),
			chromedp.SendKeys(css(`[name="/compute_config/image"]`), "registry.example/shop:1.5"),
			chromedp.SendKeys(css(`[name="/labels#key"]`), "tier"),
			chromedp.SendKeys(css(`[name="/labels#value"]`), "gold"),
			chromedp.Click(css(".form-actions button.primary")), chromedp.WaitVisible(css("#summary")))
	}
	b.Do(chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(css("table.tenants")))
	until(`[...document.querySelectorAll('table.tenants .badge')].every(b => b.textContent === 'ready')`)
	// Endpoint links read as the address they open.
	if !eval(`(() => { const a = [...document.querySelectorAll('td[data-label="Endpoints"] a')];` +
		` return a.length > 0 && a.every(l => l.textContent === l.getAttribute('href')) })()`) {
		t.Error("an endpoint link does not show the address it opens")
	}
	b.Screenshot(1280, 560, "tenants.png")
	b.Screenshot(390, 844, "tenants-phone.png")
	desktop()
	b.Do(chromedp.Navigate(base+"/ui/tenants/new"), chromedp.WaitVisible(css(`[name="/name"]`)))
	b.Screenshot(1280, 860, "form.png")
	desktop()
	b.Do(chromedp.Navigate(base+"/ui/providers"), chromedp.WaitVisible(css(".provider")))
	b.Screenshot(1280, 860, "providers.png")
	desktop()

	// A rollout of a plan's three tenants to its next version, in two
	// waves with a bake: its page follows it to completed without a
	// reload.
	ro := startRollout(t, base)
	b.Do(chromedp.Navigate(base+"/ui/rollouts"), chromedp.WaitVisible(css("table.rollouts")),
		chromedp.Click(css(`table.rollouts a.name`)), chromedp.WaitVisible(css("#rollout-waves")))
	eval(`(window.landed = true)`)
	until(`document.querySelector('.live-state').textContent === 'Live'`)
	until(`document.querySelectorAll('.wave')[1].classList.contains('current')`)
	b.Screenshot(1280, 900, "rollout.png")
	desktop()
	until(`document.querySelector('#rollout-summary .badge').textContent === 'completed'`)
	until(`document.querySelector('.live-state').textContent === 'Finished'`)
	if !eval(`window.landed === true && location.pathname === '/ui/rollouts/` + ro + `'`) {
		t.Error("the page reloaded to show the rollout's progress")
	}
	if !eval(`[...document.querySelectorAll('#rollout-waves progress')].every(p => p.value === p.max)` +
		` && document.querySelector('#rollout-actions form') === null && document.querySelector('#rollout-history').textContent.includes('completed')`) {
		t.Error("the completed rollout's waves are not full, or it offers actions, or its history lacks the completion")
	}
	// The rollout's history names its driver, a tenant's names the
	// controller and the driver, not their replica's identity alone.
	if !eval(`[...document.querySelectorAll('#rollout-history .actor')].some(a => a.textContent.startsWith('rollout driver (replica '))`) {
		t.Error("the rollout's history does not name the rollout driver")
	}
	b.Do(chromedp.Navigate(base+"/ui/tenants/hooli"), chromedp.WaitVisible(css("#history")))
	if !eval(`(() => { const a = [...document.querySelectorAll('#history .actor')].map(a => a.textContent);` +
		` return a.some(t => t.startsWith('controller (replica ')) && a.some(t => t.startsWith('rollout driver (replica ')) })()`) {
		t.Error("a tenant's history does not name the controller and the rollout driver")
	}
	// The list says which plan each tenant follows; the new-tenant form
	// offers the plan.
	b.Do(chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(css("table.tenants")))
	if !eval(`[...document.querySelectorAll('td[data-label="Plan"] a')].filter(a => a.textContent === 'web@2').length === 3`) {
		t.Error("the list does not show the plan of the rollout's three tenants")
	}
	b.Do(chromedp.Navigate(base+"/ui/tenants/new"), chromedp.WaitVisible(css(`[name="/name"]`)))
	if !eval(`document.querySelector('select[name="/plan/name"] option[value="web"]') !== null`) {
		t.Error("the new-tenant form offers no plan")
	}
	b.Do(chromedp.Navigate(base+"/ui/plans/web"), chromedp.WaitVisible(css(".version")))
	b.Screenshot(1280, 860, "plan.png")
	desktop()

	// Delete, with the name typed; the page follows it to deleted.
	b.Do(chromedp.Navigate(base+"/ui/tenants/acme"), chromedp.WaitVisible(css("#confirm")),
		chromedp.SendKeys(css("#confirm"), "acme"), chromedp.Click(css(".danger-zone button")),
		chromedp.WaitNotPresent(css("#confirm")), chromedp.WaitVisible(css("#summary")))
	eval(`(window.landed = true)`)
	until(`document.querySelector('#summary .badge').textContent === 'deleted'`)
	if !eval(`window.landed === true`) {
		t.Error("the page reloaded to show the deletion")
	}

	// A reader sees no write controls.
	b.Do(chromedp.Click(css(".who button")), chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), readerToken), chromedp.Click(css(".signin button[type=submit]")),
		chromedp.WaitVisible(css("table.tenants")))
	if !eval(`document.querySelector('a[href="/ui/tenants/new"]') === null && document.querySelector('.role').textContent === 'reader'`) {
		t.Error("a reader is offered to create tenants")
	}
	b.Do(chromedp.Navigate(base+"/ui/tenants/globex"), chromedp.WaitVisible(css("#summary")))
	if !eval(`document.querySelector('#actions form, #actions a, .danger-zone') === null`) {
		t.Error("a reader is offered to change a tenant")
	}
	b.Do(chromedp.Navigate(base+"/ui/rollouts/"+ro), chromedp.WaitVisible(css("#rollout-waves")))
	if !eval(`document.querySelector('main form') === null`) {
		t.Error("a reader is offered to change a rollout")
	}
}

// startRollout makes plan web with three tenants on its first version,
// ready, publishes a second and starts a rollout to it: hooli alone, a
// bake of 2 seconds, then the rest. It returns the rollout's id.
func startRollout(t *testing.T, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	api, err := client.New(client.Config{Address: base, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = api.Plans().Create(ctx, client.CreatePlanRequest{Name: "web", Description: "The shop's web tier."}, client.CreatePlanOptions{})
	must("create plan web", err)
	_, err = api.Plans().Publish(ctx, "web", client.PublishVersionRequest{Config: json.RawMessage(`{"image":"registry.example/shop:1.5"}`), Message: "the shop"}, client.PublishOptions{})
	must("publish version 1", err)
	names := []string{"hooli", "umbrella", "vandelay"}
	for _, name := range names {
		_, err := api.Tenants().Create(ctx, client.CreateTenantRequest{Name: name, ComputeConfig: json.RawMessage(`{}`), Plan: &client.PlanChoice{Name: "web"}}, client.CreateOptions{})
		must("create "+name, err)
	}
	for _, name := range names {
		_, err := api.Tenants().Wait(ctx, name, client.UntilReady, nil)
		must(name+" ready", err)
	}
	_, err = api.Plans().Publish(ctx, "web", client.PublishVersionRequest{Config: json.RawMessage(`{"image":"registry.example/shop:1.6","env":{"LOG_LEVEL":"info"}}`),
		Message: "shop 1.6, logging at info"}, client.PublishOptions{})
	must("publish version 2", err)
	ro, err := api.Rollouts().Start(ctx, client.CreateRolloutRequest{Plan: "web", Bake: "2s",
		Waves: []client.WaveSpec{{Name: "canary", Count: 1}, {Name: "rest"}}}, client.StartOptions{})
	must("start the rollout", err)
	return ro.ID
}

// pageText is the text of the element sel finds in b's page, trimmed.
func pageText(t *testing.T, b *browsertest.Browser, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.Context(), chromedp.Text(css(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// pageTrue evaluates js, a boolean expression, in b's page.
func pageTrue(t *testing.T, b *browsertest.Browser, js string) bool {
	t.Helper()
	v, err := chromedp.Run(b.Context(), chromedp.Evaluate[bool](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}
