package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jaxxstorm/landlord/internal/seal"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// Encoder writes records as CloudEvents 1.0 in the structured JSON format
// (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md):
// the same bytes for a record every time, so that every delivery of an
// event, and every read of the feed, carries the same body.
type Encoder struct {
	// Source is the CloudEvents source of every event (events.source).
	Source string
	// Tenant renders a tenant as the API shows it, secrets redacted.
	Tenant func(*tenant.Tenant) wire.Tenant
}

// ContentType is the media type of a structured CloudEvent in JSON.
const ContentType = "application/cloudevents+json"

// Encode returns r as a CloudEvent.
func (e *Encoder) Encode(r *Record) ([]byte, error) {
	ce := wire.CloudEvent{
		SpecVersion: "1.0", ID: r.ID, Source: e.Source, Type: string(r.Type), Subject: r.Subject,
		Time: r.Time, DataContentType: "application/json", Sequence: FormatPosition(r.Position),
	}
	switch {
	case r.Tenant != nil && r.History != nil:
		h := r.History
		data, err := json.Marshal(wire.TenantEventData{
			Tenant: e.Tenant(r.Tenant),
			Event: wire.Event{Time: r.Time, Placement: h.Placement, Type: string(h.Type), From: string(h.From), To: string(h.To),
				Generation: h.Generation, Message: h.Message, Actor: h.Actor},
			Changed: h.Changed,
		})
		if err != nil {
			return nil, fmt.Errorf("events: encode event %s: %w", r.ID, err)
		}
		ce.Data = data
	default:
		ce.Data = r.Data
	}
	out, err := json.Marshal(ce)
	if err != nil {
		return nil, fmt.Errorf("events: encode event %s: %w", r.ID, err)
	}
	return out, nil
}

// Keyring seals and opens subscriptions' secrets (seal.Keyring does).
type Keyring interface {
	Primary() string
	Seal(plaintext, context []byte) (string, error)
	Open(s string, context []byte) ([]byte, error)
}

// secretContext binds a sealed secret to its subscription: a value copied
// to another does not open.
func secretContext(subscription string) []byte { return []byte("subscription:" + subscription) }

// SealSecret returns a subscription's secret as it is to be stored: sealed
// with the primary key, or as it is when no key seals secrets (as tenants'
// secrets are; docs/storage.md).
func SealSecret(k Keyring, subscription, secret string) (string, error) {
	if k == nil || k.Primary() == "" {
		return secret, nil
	}
	return k.Seal([]byte(secret), secretContext(subscription))
}

// OpenSecret returns the secret a stored value holds.
func OpenSecret(k Keyring, subscription, stored string) (string, error) {
	if !seal.IsSealed(stored) {
		return stored, nil
	}
	if k == nil {
		return "", fmt.Errorf("events: the secret of subscription %s is sealed and no key is configured", subscription)
	}
	plain, err := k.Open(stored, secretContext(subscription))
	if err != nil {
		return "", fmt.Errorf("events: open the secret of subscription %s: %w", subscription, err)
	}
	return string(plain), nil
}

// Keys returns the HMAC keys a delivery at now is signed with: those of the
// subscription's secrets that have not expired, newest first.
func Keys(k Keyring, s *Subscription, now time.Time) ([][]byte, error) {
	var keys [][]byte
	for _, sec := range s.Secrets {
		if sec.ExpiresAt != nil && !now.Before(*sec.ExpiresAt) {
			continue
		}
		plain, err := OpenSecret(k, s.ID, sec.Value)
		if err != nil {
			return nil, err
		}
		key, err := SecretKey(plain)
		if err != nil {
			return nil, fmt.Errorf("events: subscription %s: %w", s.ID, err)
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("events: subscription %s has no secret that has not expired; rotate in a new one", s.ID)
	}
	return keys, nil
}
