package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
)

// goldenCloudEvents are a tenant's events, a rollout's and a plan's.
func goldenCloudEvents(t *testing.T) []client.CloudEvent {
	t.Helper()
	tenantData := func(status, message string) json.RawMessage {
		b, err := json.Marshal(client.TenantEventData{
			Tenant: client.Tenant{ID: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", Name: "acme", Status: status},
			Event:  client.Event{Type: "status", To: status, Message: message},
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ce := func(seq, typ, subject string, at time.Time, data json.RawMessage) client.CloudEvent {
		return client.CloudEvent{SpecVersion: "1.0", ID: "evt_" + seq, Source: "landlord", Type: typ, Subject: subject, Time: at,
			DataContentType: "application/json", Sequence: seq, Data: data}
	}
	return []client.CloudEvent{
		ce("41", client.EventTenantCreated, "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", ago(2*time.Hour), tenantData("requested", "created by admin")),
		ce("42", client.EventTenantReady, "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", ago(2*time.Hour-40*time.Second), tenantData("ready", "workload running at generation 1")),
		ce("43", client.EventPlanVersionPublished, "standard", ago(time.Hour), json.RawMessage(`{"plan":"standard","version":3}`)),
		ce("1042", client.EventRolloutStarted, "0199b1e0-1111-7222-8333-444455556666", ago(30*time.Minute), json.RawMessage(`{"rollout":{"plan":"standard"}}`)),
	}
}

func goldenSubscriptions() []client.Subscription {
	expires := goldenNow.Add(20 * time.Hour)
	return []client.Subscription{
		{
			ID: "0199c0de-0000-7000-8000-000000000001", Name: "billing", URL: "https://billing.example.com/hooks",
			Types: []string{client.EventTenantReady, client.EventTenantDeleted}, Enabled: true, Description: "opens and closes accounts",
			Secrets:    []client.SecretInfo{{CreatedAt: ago(4 * time.Hour)}, {CreatedAt: ago(9 * 24 * time.Hour), ExpiresAt: &expires}},
			Deliveries: &client.DeliveryCount{Pending: 2},
			Version:    3, CreatedAt: ago(9 * 24 * time.Hour), UpdatedAt: ago(4 * time.Hour), CreatedBy: "admin",
		},
		{
			ID: "0199c0de-0000-7000-8000-000000000002", Name: "ops", URL: "https://ops.example.com/landlord",
			Labels: map[string]string{"tier": "gold"}, Enabled: false,
			DisabledReason: "event evt_7 (landlord.tenant.ready of 0199a3c2) was not delivered after 21 attempts over 24h0m0s; last: the receiver answered 503 Service Unavailable. Fix the receiver, enable the subscription, and redeliver what it missed",
			Secrets:        []client.SecretInfo{{CreatedAt: ago(3 * 24 * time.Hour)}},
			Version:        7, CreatedAt: ago(3 * 24 * time.Hour), UpdatedAt: ago(time.Hour),
		},
	}
}

func goldenDeliveries() []client.Delivery {
	return []client.Delivery{
		{EventID: "evt_1042", Type: client.EventTenantReady, Subject: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", Sequence: "1042",
			State: client.DeliveryPending, Attempts: 3, NextAttemptAt: goldenNow.Add(40 * time.Second), LastStatus: 503,
			LastError: "the receiver answered 503 Service Unavailable", CreatedAt: ago(3 * time.Minute), UpdatedAt: ago(20 * time.Second),
			Log: []client.DeliveryAttempt{
				{Number: 1, Time: ago(3 * time.Minute), Status: 503, LatencyMS: 12.34, Error: "the receiver answered 503 Service Unavailable", Response: `{"error":"maintenance"}`},
				{Number: 2, Time: ago(2 * time.Minute), LatencyMS: 10000, Error: "context deadline exceeded"},
				{Number: 3, Time: ago(20 * time.Second), Status: 503, LatencyMS: 0.41, Error: "the receiver answered 503 Service Unavailable"},
			}},
		{EventID: "evt_1041", Type: client.EventTenantCreated, Subject: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10", Sequence: "1041",
			State: client.DeliveryDelivered, Attempts: 1, LastStatus: 204, CreatedAt: ago(4 * time.Minute), UpdatedAt: ago(4 * time.Minute)},
		{EventID: "evt_977", Type: client.EventTenantCreated, Subject: "0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f11", Sequence: "977",
			State: client.DeliveryFailed, Attempts: 21, LastError: "dial tcp 203.0.113.9:443: connect: connection refused",
			CreatedAt: ago(26 * time.Hour), UpdatedAt: ago(2 * time.Hour)},
	}
}

// The tables of the event feed, subscriptions and their deliveries, as a
// file or a pipe gets them (nothing cut).
func TestEventAndSubscriptionTables(t *testing.T) {
	evs := goldenCloudEvents(t)
	subs := goldenSubscriptions()
	ds := goldenDeliveries()
	for _, tt := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"events", func(b *bytes.Buffer) error { return renderCloudEvents(b, evs) }},
		{"events_follow", func(b *bytes.Buffer) error {
			row := newEventRows(b, true)
			for _, e := range evs {
				if err := row(e); err != nil {
					return err
				}
			}
			return nil
		}},
		{"subscriptions_list", func(b *bytes.Buffer) error { return renderSubscriptions(b, subs, goldenNow) }},
		{"subscriptions_get", func(b *bytes.Buffer) error { return renderSubscription(b, subs[0], goldenNow) }},
		{"subscriptions_get_disabled", func(b *bytes.Buffer) error { return renderSubscription(b, subs[1], goldenNow) }},
		{"subscriptions_deliveries", func(b *bytes.Buffer) error { return renderDeliveries(b, ds, goldenNow) }},
		{"subscriptions_delivery", func(b *bytes.Buffer) error { return renderDelivery(b, ds[0], goldenNow) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.name, b.Bytes())
		})
	}
}
