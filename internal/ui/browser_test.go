package ui_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jaxxstorm/landlord/internal/browsertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

type css = chromedp.CSS

// The console in a real browser, on a real landlord serve (the mock
// provider, taking 1.5 s an operation so that statuses can be watched):
// sign in, create a tenant through the generated form, see the API's
// verdict on a field at its input, watch it turn ready without a reload,
// edit it, delete it, and see a reader get no write controls. With
// LANDLORD_SCREENSHOTS=docs/ui it writes the screenshots docs/ui.md shows.
func TestConsoleInABrowser(t *testing.T) {
	b := browsertest.NewWith(t, browsertest.Config{Width: 1280, Height: 860, Timeout: 90 * time.Second})
	p := servetest.New(t, servetest.Options{
		Config: "compute:\n  mock:\n    latency: 1500ms\n    x-mock: {listen: true}\n",
		Env:    []string{"LANDLORD_ADMIN_TOKEN=" + adminToken, "LANDLORD_READER_TOKEN=" + readerToken},
	})
	p.Start()
	base := "http://" + p.Addr()
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(b.Context(), chromedp.Text(css(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	eval := func(js string) bool {
		t.Helper()
		v, err := chromedp.Run(b.Context(), chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
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
	b.Screenshot(1280, 560, "tenants.png")
	b.Screenshot(390, 844, "tenants-phone.png")
	desktop()
	b.Do(chromedp.Navigate(base+"/ui/tenants/new"), chromedp.WaitVisible(css(`[name="/name"]`)))
	b.Screenshot(1280, 860, "form.png")
	desktop()
	b.Do(chromedp.Navigate(base+"/ui/providers"), chromedp.WaitVisible(css(".provider")))
	b.Screenshot(1280, 860, "providers.png")
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
}
