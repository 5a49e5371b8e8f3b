package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/browsertest"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// verifyingReceiver records the events delivered to it whose signatures
// verify with its secret, as the Standard Webhooks reference does
// (webhooktest.Verify), and refuses the others.
type verifyingReceiver struct {
	mu       sync.Mutex
	secret   string
	received []string // the verified events' types
}

func (rc *verifyingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.secret == "" || webhooktest.Verify(rc.secret, r.Header, body, time.Now()) != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ce client.CloudEvent
	_ = json.Unmarshal(body, &ce)
	rc.received = append(rc.received, ce.Type)
	w.WriteHeader(http.StatusNoContent)
}

func (rc *verifyingReceiver) setSecret(s string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret = s
}

func (rc *verifyingReceiver) got() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.received...)
}

// Webhook subscriptions in a real browser, on a real landlord serve: an
// admin subscribes a receiver through the form (the API's verdict on a
// URL shown at its input), sees the secret once, and it is the secret the
// deliveries are signed with; the list shows the subscription; the
// delivery log shows a delivery and its attempt; a reader gets no
// controls. With LANDLORD_SCREENSHOTS=docs/ui it writes the
// subscriptions' screenshots.
func TestSubscriptionsInABrowser(t *testing.T) {
	b := browsertest.NewWith(t, browsertest.Config{Width: 1280, Height: 860, Timeout: 90 * time.Second})
	rc := &verifyingReceiver{}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)
	p := servetest.New(t, servetest.Options{
		Config: "compute:\n  mock: {}\nevents:\n  allow_networks: [127.0.0.0/8]\n  poll: 100ms\n",
		Env:    []string{"LANDLORD_ADMIN_TOKEN=" + adminToken, "LANDLORD_READER_TOKEN=" + readerToken},
	})
	p.Start()
	base := "http://" + p.Addr()
	text := func(sel string) string { t.Helper(); return pageText(t, b, sel) }
	eval := func(js string) bool { t.Helper(); return pageTrue(t, b, js) }
	desktop := func() { b.Do(chromedp.EmulateViewport(1280, 860)) }

	b.Do(chromedp.Navigate(base+"/ui/subscriptions"), chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), adminToken), chromedp.Click(css(".signin button[type=submit]")),
		chromedp.WaitVisible(css(".empty")))
	if !eval(`location.pathname === '/ui/subscriptions' && document.querySelector('nav a[aria-current="page"]').textContent === 'Subscriptions'`) {
		t.Error("signing in did not return to the subscriptions, or the nav does not mark them")
	}

	// The form; a URL landlord will not post to comes back at its input.
	b.Do(chromedp.Click(css(".empty a.button")), chromedp.WaitVisible(css(`[name="/name"]`)),
		chromedp.SendKeys(css(`[name="/name"]`), "crm"),
		chromedp.SendKeys(css(`[name="/url"]`), "http://crm.example.com/landlord"),
		chromedp.Click(css(`input[value="landlord.tenant.created"]`)),
		chromedp.Click(css(`input[value="landlord.tenant.ready"]`)),
		chromedp.SendKeys(css(`[name="/labels#key"]`), "tier"),
		chromedp.SendKeys(css(`[name="/labels#value"]`), "gold"),
		chromedp.SendKeys(css(`[name="/description"]`), "The CRM's onboarding flow"),
		chromedp.Click(css(".form-actions button.primary")),
		chromedp.WaitVisible(css(`[id="f.2f.url-err"]`)))
	if got := text(`[id="f.2f.url-err"]`); !strings.Contains(got, "https") {
		t.Errorf("the URL's error: %q", got)
	}
	if !eval(`document.querySelector('[name="/url"]').getAttribute('aria-invalid') === 'true'` +
		` && document.querySelector('input[value="landlord.tenant.ready"]').checked && document.querySelector('[name="/labels#value"]').value === 'gold'`) {
		t.Error("the invalid input is not marked, or the form lost what was chosen")
	}
	if ps := b.Take(); len(ps) != 1 || !strings.Contains(ps[0].Text, "422") {
		t.Errorf("the browser reported %v", ps)
	}
	b.Screenshot(1280, 1100, "subscription-form.png")
	desktop()

	// Fixed, it is made; its page shows the secret once.
	b.Do(chromedp.Clear(css(`[name="/url"]`)), chromedp.SendKeys(css(`[name="/url"]`), hook.URL+"/landlord"),
		chromedp.Click(css(".form-actions button.primary")), chromedp.WaitVisible(css("#new-secret")))
	secret := text("#new-secret")
	if !strings.HasPrefix(secret, client.SecretPrefix) || len(secret) != len(client.NewSecret()) || !strings.Contains(text(".secret-once"), "will not be shown again") {
		t.Fatalf("the page shows the secret %q", secret)
	}
	b.Screenshot(1280, 860, "subscription-secret.png")
	desktop()
	rc.setSecret(secret)
	b.Do(chromedp.Reload(), chromedp.WaitVisible(css("#subscription-summary")))
	if !eval(`document.querySelector('#new-secret') === null && !document.body.textContent.includes('` + secret + `')`) {
		t.Error("the secret is shown again after a reload")
	}

	// The list shows it.
	b.Do(chromedp.Click(css(`nav a[href="/ui/subscriptions"]`)), chromedp.WaitVisible(css("table.subscriptions")))
	if row := text("table.subscriptions tbody tr"); !strings.Contains(row, "crm") || !strings.Contains(row, hook.URL) ||
		!strings.Contains(row, "landlord.tenant.ready") || !strings.Contains(row, "tier=gold") || !strings.Contains(row, "enabled") {
		t.Errorf("the list's row: %q", row)
	}
	b.Screenshot(1280, 400, "subscriptions.png")
	desktop()

	// A tenant of the label's: its creation is delivered, signed with the
	// secret shown, and the log shows it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api, err := client.New(client.Config{Address: base, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: json.RawMessage(`{"image":"a"}`),
		Labels: map[string]string{"tier": "gold"}}, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the receiver verifies the tenant's creation, signed with the secret shown", 30*time.Second, func() (bool, string) {
		got := rc.got()
		return len(got) > 0 && got[0] == client.EventTenantCreated, strings.Join(got, " ")
	})
	b.Do(chromedp.Click(css("table.subscriptions a.name")), chromedp.WaitVisible(css("table.deliveries")))
	// Newest first: its readiness, then its creation.
	if row := text("table.deliveries tbody tr:last-child"); !strings.Contains(row, client.EventTenantCreated) || !strings.Contains(row, "delivered") ||
		!strings.Contains(row, "204 No Content") {
		t.Errorf("the log's row: %q", row)
	}
	b.Screenshot(1280, 1000, "subscription.png")
	desktop()
	b.Do(chromedp.Click(css(`table.deliveries tbody tr:last-child td[data-label="Event"] a`)), chromedp.WaitVisible(css("#attempts")))
	if got := text("#attempts .attempts"); !strings.Contains(got, "Attempt 1") || !strings.Contains(got, "204 No Content") || !strings.Contains(got, " ms") {
		t.Errorf("the delivery's attempts: %q", got)
	}
	b.Screenshot(1280, 700, "delivery.png")
	desktop()
	b.Do(chromedp.Click(css(`#delivery-summary td a, #delivery-summary dd a`)), chromedp.WaitVisible(css("#summary")))
	if !eval(`document.querySelector('h1').textContent === 'acme'`) {
		t.Error("the delivery's subject does not lead to the tenant")
	}

	// A reader sees the subscription and its log, and no control.
	b.Do(chromedp.Click(css(".who button")), chromedp.WaitVisible(css("#token")),
		chromedp.SendKeys(css("#token"), readerToken), chromedp.Click(css(".signin button[type=submit]")),
		chromedp.WaitVisible(css("table.tenants")))
	b.Do(chromedp.Navigate(base+"/ui/subscriptions"), chromedp.WaitVisible(css("table.subscriptions")))
	if !eval(`document.querySelector('a[href="/ui/subscriptions/new"]') === null`) {
		t.Error("a reader is offered to subscribe")
	}
	b.Do(chromedp.Navigate(base+"/ui/subscriptions/crm"), chromedp.WaitVisible(css("table.deliveries")))
	if !eval(`document.querySelector('main form[method="post"]') === null && document.querySelector('#new-secret') === null`) {
		t.Error("a reader is offered to change a subscription")
	}
}
