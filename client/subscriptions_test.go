package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// receiver starts a webhook receiver that verifies signatures with secrets
// and answers with answer (nil: 204).
func receiver(t *testing.T, answer func(*webhooktest.Request) int, secrets ...string) (*webhooktest.Receiver, string) {
	t.Helper()
	rc := &webhooktest.Receiver{Secrets: secrets, Answer: answer, Hang: time.Second}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL + "/hooks"
}

// waitDeliveries waits until the subscription has n deliveries in state.
func waitDeliveries(t *testing.T, subs *client.Subscriptions, name, state string, n int) []client.Delivery {
	t.Helper()
	var got []client.Delivery
	poll.Until(t, fmt.Sprintf("%d %s deliveries to %s", n, state, name), 10*time.Second, func() (bool, string) {
		page, err := subs.Deliveries(ctx, name, client.DeliveryListOptions{State: state})
		if err != nil {
			return false, err.Error()
		}
		got = page.Deliveries
		return len(got) >= n, fmt.Sprintf("%+v", got)
	})
	return got
}

// A subscription's life through the client: created with a secret the
// answers never show, found by name and id, changed under If-Match,
// deliveries signed with its secret and logged, a secret rotated (both
// sign meanwhile), events sent again, deleted.
func TestSubscriptions(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Events: true}).Client(t, "")
	subs := c.Subscriptions()
	secret := client.NewSecret()
	rc, url := receiver(t, nil, secret)

	sub, err := subs.Create(ctx, client.CreateSubscriptionRequest{Name: "billing", URL: url, Secret: secret,
		Types: []string{client.EventTenantCreated, client.EventTenantChanged}, Labels: map[string]string{"tier": "gold"}, Description: "opens accounts"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(sub); strings.Contains(string(b), strings.TrimPrefix(secret, client.SecretPrefix)) {
		t.Errorf("the created subscription shows its secret: %s", b)
	}
	if !sub.Enabled || sub.Version == 0 || len(sub.Secrets) != 1 || sub.Secrets[0].ExpiresAt != nil || sub.ID == "" {
		t.Errorf("created %+v", sub)
	}
	if _, err := subs.Create(ctx, client.CreateSubscriptionRequest{Name: "billing", URL: url, Secret: secret}); !client.IsConflict(err) {
		t.Errorf("a second subscription named billing: %v, want a 409", err)
	}
	for _, key := range []string{"billing", sub.ID} {
		if got, err := subs.Get(ctx, key); err != nil || got.ID != sub.ID || got.Description != "opens accounts" {
			t.Errorf("get %s: %+v, %v", key, got, err)
		}
	}
	if list, err := subs.List(ctx); err != nil || len(list.Subscriptions) != 1 || list.Subscriptions[0].Name != "billing" {
		t.Errorf("list: %+v, %v", list, err)
	}

	// Only gold tenants' created and changed events are delivered.
	gold := mustCreate(t, c, "acme", appConfig, map[string]string{"tier": "gold"})
	mustCreate(t, c, "plain", appConfig, nil)
	if _, err := c.Tenants().Patch(ctx, "acme", []byte(`{"labels":{"team":"a"}}`), client.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	delivered := waitDeliveries(t, subs, "billing", client.DeliveryDelivered, 2)
	if len(delivered) != 2 || delivered[0].Type != client.EventTenantChanged || delivered[1].Type != client.EventTenantCreated ||
		delivered[1].Subject != gold.ID || delivered[0].Attempts != 1 || delivered[0].LastStatus != http.StatusNoContent {
		t.Errorf("deliveries, newest first: %+v", delivered)
	}
	for _, r := range rc.Requests() {
		if r.VerifyError != nil {
			t.Errorf("delivery %s does not verify: %v", r.ID, r.VerifyError)
		}
	}
	one, err := subs.Delivery(ctx, "billing", delivered[1].EventID)
	if err != nil || len(one.Log) != 1 || one.Log[0].Status != http.StatusNoContent || one.Log[0].Number != 1 {
		t.Errorf("the created event's delivery: %+v, %v; want one attempt answered 204", one, err)
	}
	if _, err := subs.Delivery(ctx, "billing", "evt_none"); !client.IsNotFound(err) {
		t.Errorf("the delivery of no event: %v, want a 404", err)
	}

	// If-Match: a stale version is refused, the current one changes it.
	if _, err := subs.Update(ctx, "billing", client.UpdateSubscriptionRequest{Description: ptr("stale")}, client.UpdateOptions{IfMatch: sub.Version + 7}); !client.IsPreconditionFailed(err) {
		t.Errorf("an update at a stale version: %v, want a 412", err)
	}
	off, err := subs.Update(ctx, "billing", client.UpdateSubscriptionRequest{Enabled: ptr(false), Types: &[]string{}}, client.UpdateOptions{IfMatch: sub.Version})
	if err != nil || off.Enabled || len(off.Types) != 0 || off.Description != "opens accounts" || off.Version != sub.Version+1 {
		t.Errorf("disabled, every type: %+v, %v", off, err)
	}

	// A rotation: the new secret signs, and the old one beside it until
	// it expires.
	next := client.NewSecret()
	rotated, err := subs.RotateSecret(ctx, "billing", client.RotateSecretRequest{Secret: next, PreviousExpiresIn: "1h"}, client.UpdateOptions{})
	if err != nil || len(rotated.Secrets) != 2 || rotated.Secrets[0].ExpiresAt != nil || rotated.Secrets[1].ExpiresAt == nil {
		t.Fatalf("rotated: %+v, %v; want the new secret and the old one expiring", rotated, err)
	}
	if until := time.Until(*rotated.Secrets[1].ExpiresAt); until < 59*time.Minute || until > time.Hour {
		t.Errorf("the old secret expires in %s, want 1h", until)
	}
	if b, _ := json.Marshal(rotated); strings.Contains(string(b), strings.TrimPrefix(next, client.SecretPrefix)) {
		t.Errorf("the rotated subscription shows its secret: %s", b)
	}
	// A receiver that knows the new secret only.
	moved, movedURL := receiver(t, nil, next)
	if _, err := subs.Update(ctx, "billing", client.UpdateSubscriptionRequest{Enabled: ptr(true), URL: &movedURL}, client.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := subs.Redeliver(ctx, "billing", client.RedeliverRequest{EventID: delivered[1].EventID})
	if err != nil || res.Deliveries != 1 {
		t.Fatalf("redeliver one event: %+v, %v", res, err)
	}
	poll.Until(t, "the event delivered again", 10*time.Second, func() (bool, string) {
		d, err := subs.Delivery(ctx, "billing", delivered[1].EventID)
		if err != nil {
			return false, err.Error()
		}
		return len(d.Log) == 2 && d.State == client.DeliveryDelivered, fmt.Sprintf("%+v", d)
	})
	reqs := moved.Requests()
	if last := reqs[len(reqs)-1]; len(reqs) != 1 || last.ID != delivered[1].EventID || last.VerifyError != nil {
		t.Errorf("the redelivery: %s, verified %v; want %s signed with the new secret", last.ID, last.VerifyError, delivered[1].EventID)
	}
	since := time.Now().Add(-time.Hour)
	if res, err := subs.Redeliver(ctx, "billing", client.RedeliverRequest{Since: &since}); err != nil || res.Deliveries != 2 {
		t.Errorf("redeliver the last hour (acme's created and changed: gold tenants only): %+v, %v; want 2", res, err)
	}

	if err := subs.Delete(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := subs.Get(ctx, "billing"); !client.IsNotFound(err) {
		t.Errorf("get after delete: %v, want a 404", err)
	}
	if err := subs.Delete(ctx, "billing"); !client.IsNotFound(err) {
		t.Errorf("a second delete: %v, want a 404", err)
	}
}

// A receiver that keeps failing: each attempt is logged, the delivery
// given up on as failed, and the subscription disabled with the reason.
func TestDeliveryFailures(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Events: true}).Client(t, "")
	subs := c.Subscriptions()
	secret := client.NewSecret()
	var answered atomic.Int32
	_, url := receiver(t, func(*webhooktest.Request) int { answered.Add(1); return http.StatusInternalServerError }, secret)
	if _, err := subs.Create(ctx, client.CreateSubscriptionRequest{Name: "flaky", URL: url, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "acme", appConfig, nil)
	failed := waitDeliveries(t, subs, "flaky", client.DeliveryFailed, 1)
	if d := failed[0]; d.Type != client.EventTenantCreated || d.LastStatus != http.StatusInternalServerError || d.Attempts < 2 || d.LastError == "" {
		t.Errorf("the failed delivery: %+v", d)
	}
	d, err := subs.Delivery(ctx, "flaky", failed[0].EventID)
	if err != nil || len(d.Log) != d.Attempts || d.Log[0].Status != http.StatusInternalServerError {
		t.Errorf("its log: %+v, %v", d, err)
	}
	poll.Until(t, "the subscription disabled", 10*time.Second, func() (bool, string) {
		s, err := subs.Get(ctx, "flaky")
		if err != nil {
			return false, err.Error()
		}
		return !s.Enabled && s.DisabledReason != "", fmt.Sprintf("%+v", s)
	})
	pages := 0
	var all []string
	for d, err := range subs.AllDeliveries(ctx, "flaky", client.DeliveryListOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		all = append(all, d.EventID)
	}
	if !slices.Contains(all, failed[0].EventID) {
		t.Errorf("AllDeliveries %q lacks %s", all, failed[0].EventID)
	}
	_, err = subs.Deliveries(ctx, "flaky", client.DeliveryListOptions{State: "lost"})
	mustAPIError(t, err, http.StatusBadRequest, client.CodeInvalidParameter)
}

// A create that breaks every rule is refused once, naming each field.
func TestSubscriptionRules(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Events: true}).Client(t, "")
	_, err := c.Subscriptions().Create(ctx, client.CreateSubscriptionRequest{Name: "Bad Name", URL: "http://example.com/hooks",
		Secret: "hunter2", Types: []string{client.EventTenantReady, "landlord.tenant.readied"}})
	e := mustAPIError(t, err, http.StatusUnprocessableEntity, client.CodeInvalidBody)
	var pointers []string
	for _, f := range e.Problem.Errors {
		pointers = append(pointers, f.Pointer)
	}
	if want := []string{"/name", "/secret", "/url", "/types/1"}; !slices.Equal(pointers, want) {
		t.Errorf("pointers %q, want %q: %v", pointers, want, err)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the secret: %v", err)
	}
	if _, err := c.Subscriptions().Get(ctx, ""); err == nil || !strings.Contains(err.Error(), "a subscription id or name is required") {
		t.Errorf("get of no name: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
