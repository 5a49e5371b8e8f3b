package client

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"iter"
	"net/url"
	"strconv"
)

// Subscriptions is the webhook subscriptions resource of the API: where
// landlord posts its events, signed by the Standard Webhooks scheme, and
// each subscription's delivery log. Methods taking idOrName accept a
// subscription's id or its name.
type Subscriptions struct {
	c *Client
}

// Subscriptions is the webhook subscriptions resource.
func (c *Client) Subscriptions() *Subscriptions { return &Subscriptions{c: c} }

// SecretPrefix begins a webhook secret as the Standard Webhooks scheme
// writes it: whsec_, then the standard base64 of the key.
const SecretPrefix = "whsec_"

// NewSecret returns a new webhook signing secret: SecretPrefix and the
// base64 of 32 random bytes, the form CreateSubscriptionRequest.Secret and
// RotateSecretRequest.Secret take. The API never shows a secret: keep it
// where the receiver verifies signatures with it.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand's Read never fails
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// errEventIDRequired: Delivery was asked for no event.
var errEventIDRequired = errors.New("client: an event id is required")

// DeliveryListOptions filter and page a subscription's delivery log.
type DeliveryListOptions struct {
	// State keeps the deliveries in this state (DeliveryPending,
	// DeliveryDelivered or DeliveryFailed); "" keeps every one.
	State string
	// PageSize is how many deliveries a page holds at most (1–500); 0
	// means the server's default (50).
	PageSize int
	// PageToken is the NextPageToken of the previous page.
	PageToken string
}

// Create subscribes a webhook to events. Every problem with the request
// (a name taken is a 409 *Error; a URL landlord will not post to, a
// secret that is not SecretPrefix and the base64 of 24 to 64 bytes, an
// unknown event type, a bad label selector) is a 422 *Error with a
// pointer per field. The answer never holds the secret.
func (s *Subscriptions) Create(ctx context.Context, req CreateSubscriptionRequest) (*Subscription, error) {
	var out Subscription
	if err := s.c.do(ctx, request{method: "POST", path: "/v1/subscriptions", body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists every subscription.
func (s *Subscriptions) List(ctx context.Context) (*SubscriptionList, error) {
	var out SubscriptionList
	if err := s.c.do(ctx, request{method: "GET", path: "/v1/subscriptions"}, &out); err != nil {
		return nil, err
	}
	if out.Subscriptions == nil {
		out.Subscriptions = []Subscription{}
	}
	return &out, nil
}

// Get returns a subscription; an unknown one is a 404 *Error.
func (s *Subscriptions) Get(ctx context.Context, idOrName string) (*Subscription, error) {
	path, err := subscriptionPath(idOrName)
	if err != nil {
		return nil, err
	}
	var out Subscription
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes a subscription: its URL, types, labels, description, or
// whether it is enabled (enabling one that landlord disabled clears its
// DisabledReason); what req leaves nil is kept. With opts.IfMatch, a
// subscription changed since that version is a 412 *Error. opts.DryRun is
// refused: a subscription's update has no dry run.
func (s *Subscriptions) Update(ctx context.Context, idOrName string, req UpdateSubscriptionRequest, opts UpdateOptions) (*Subscription, error) {
	if err := noDryRun(opts, "subscriptions"); err != nil {
		return nil, err
	}
	path, err := subscriptionPath(idOrName)
	if err != nil {
		return nil, err
	}
	var out Subscription
	if err := s.c.do(ctx, request{method: "PATCH", path: path, header: ifMatchHeader(opts.IfMatch), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete deletes a subscription and its delivery log; an unknown one is a
// 404 *Error.
func (s *Subscriptions) Delete(ctx context.Context, idOrName string) error {
	path, err := subscriptionPath(idOrName)
	if err != nil {
		return err
	}
	return s.c.do(ctx, request{method: "DELETE", path: path}, nil)
}

// RotateSecret gives a subscription a new signing secret (NewSecret makes
// one). Its previous secrets keep signing beside it, each delivery then
// carrying a signature by each, until req.PreviousExpiresIn from now (a
// Go duration, default 24h; "0s" ends them at once), so that receivers
// can move to the new one meanwhile. With opts.IfMatch, a subscription
// changed since that version is a 412 *Error. opts.DryRun is refused: a
// rotation has no dry run.
func (s *Subscriptions) RotateSecret(ctx context.Context, idOrName string, req RotateSecretRequest, opts UpdateOptions) (*Subscription, error) {
	if err := noDryRun(opts, "subscriptions"); err != nil {
		return nil, err
	}
	path, err := subscriptionPath(idOrName, "/secrets")
	if err != nil {
		return nil, err
	}
	var out Subscription
	if err := s.c.do(ctx, request{method: "POST", path: path, header: ifMatchHeader(opts.IfMatch), body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Deliveries returns one page of a subscription's delivery log, newest
// first, without the attempts of each (Delivery has them).
func (s *Subscriptions) Deliveries(ctx context.Context, idOrName string, opts DeliveryListOptions) (*DeliveryList, error) {
	path, err := subscriptionPath(idOrName, "/deliveries")
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	setNonEmpty(q, "state", opts.State)
	setNonEmpty(q, "page_token", opts.PageToken)
	if opts.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(opts.PageSize))
	}
	var out DeliveryList
	if err := s.c.do(ctx, request{method: "GET", path: path, query: q}, &out); err != nil {
		return nil, err
	}
	if out.Deliveries == nil {
		out.Deliveries = []Delivery{}
	}
	return &out, nil
}

// AllDeliveries iterates over a subscription's delivery log from
// opts.PageToken on, newest first, fetching pages as it goes. It yields an
// error at most once, then stops.
func (s *Subscriptions) AllDeliveries(ctx context.Context, idOrName string, opts DeliveryListOptions) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		for {
			page, err := s.Deliveries(ctx, idOrName, opts)
			if err != nil {
				yield(Delivery{}, err)
				return
			}
			for _, d := range page.Deliveries {
				if !yield(d, nil) {
					return
				}
			}
			if page.NextPageToken == "" {
				return
			}
			opts.PageToken = page.NextPageToken
		}
	}
}

// Delivery returns the delivery of one event to a subscription, with
// every attempt at it (Delivery.Log), oldest first; an event the
// subscription was not sent is a 404 *Error.
func (s *Subscriptions) Delivery(ctx context.Context, idOrName, eventID string) (*Delivery, error) {
	if eventID == "" {
		return nil, errEventIDRequired
	}
	path, err := subscriptionPath(idOrName, "/deliveries/"+url.PathEscape(eventID))
	if err != nil {
		return nil, err
	}
	var out Delivery
	if err := s.c.do(ctx, request{method: "GET", path: path}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Redeliver sends events to a subscription again: one event
// (req.EventID), or those written in [req.Since, req.Until) that pass its
// filters (Until defaults to now; the range spans at most 7 days). Their
// deliveries are made pending again, due now (those the subscription
// never had are made), and carry the events' own ids as webhook-id, so
// that a receiver that deduplicates by it sees them as repeats. It returns
// how many deliveries it made pending; the dispatcher then sends them.
func (s *Subscriptions) Redeliver(ctx context.Context, idOrName string, req RedeliverRequest) (*RedeliverResponse, error) {
	path, err := subscriptionPath(idOrName, "/redeliver")
	if err != nil {
		return nil, err
	}
	var out RedeliverResponse
	if err := s.c.do(ctx, request{method: "POST", path: path, body: req}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// subscriptionPath is the escaped path of a subscription.
func subscriptionPath(idOrName string, rest ...string) (string, error) {
	return resourcePath("/v1/subscriptions/", "a subscription id or name", idOrName, rest...)
}
