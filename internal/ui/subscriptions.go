package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
)

// The webhook subscriptions' pages: the list, a subscription with its
// delivery log and its actions, and a delivery with its attempts, read
// and written through the client's Subscriptions, as the user.

// subscriptionsView is the list of subscriptions.
type subscriptionsView struct {
	Subscriptions []client.Subscription
	// Counted says the API counts their pending deliveries.
	Counted bool
}

func (c *Console) listSubscriptions(x *call) error {
	list, err := x.api.Subscriptions().List(x.r.Context())
	if err != nil {
		return err
	}
	v := subscriptionsView{Subscriptions: list.Subscriptions}
	v.Counted = slices.ContainsFunc(list.Subscriptions, func(s client.Subscription) bool { return s.Deliveries != nil })
	return c.show(x, "subscriptions", "Subscriptions", "subscriptions", v)
}

// subscriptionView is a subscription's page.
type subscriptionView struct {
	S       client.Subscription
	Secrets []secretRow
	// Secret is the secret the console made for it, shown once on the
	// page that follows its creation or rotation.
	Secret *shownSecret
	Log    deliveryLog
	// CanWrite shows the actions.
	CanWrite bool
	CSRF     string
	// Problem says why an action was refused.
	Problem string
	// ConfirmError says the name typed to confirm a deletion was wrong.
	ConfirmError string
}

// secretRow is one of a subscription's signing secrets, by its dates.
type secretRow struct {
	client.SecretInfo
	// Current is the newest, which signs from now on; Expired says an
	// older one signs no more.
	Current, Expired bool
}

// deliveryLog is a page of a subscription's delivery log.
type deliveryLog struct {
	// State is the filter; States the choices.
	State      string
	States     []string
	Deliveries []deliveryRow
	// This and Next are page tokens, FirstURL and NextURL their pages.
	This, Next        string
	FirstURL, NextURL string
	// Detail and Problems are the API's complaints about the filter,
	// Problems by parameter.
	Detail   string
	Problems map[string]string
}

// deliveryStates are a delivery's states, as the API names them.
var deliveryStates = []string{client.DeliveryPending, client.DeliveryDelivered, client.DeliveryFailed}

// deliveryRow is a delivery with the page of its subject.
type deliveryRow struct {
	client.Delivery
	// SubjectURL is the console's page of the tenant, rollout or plan
	// the event is about; "" when it has none.
	SubjectURL string
}

func newDeliveryRow(d client.Delivery) deliveryRow {
	return deliveryRow{Delivery: d, SubjectURL: subjectPage(d.Type, d.Subject)}
}

// Pending says the delivery is still to be made.
func (d deliveryRow) Pending() bool { return d.State == client.DeliveryPending }

// subjectPage is the console's page of what an event of type typ is
// about: a tenant's and a placement's events have the tenant's id as
// their subject, a rollout's its id, a plan's its name.
func subjectPage(typ, subject string) string {
	switch {
	case subject == "":
		return ""
	case strings.HasPrefix(typ, "landlord.tenant."), strings.HasPrefix(typ, "landlord.placement."):
		return tenantPath(subject)
	case strings.HasPrefix(typ, "landlord.rollout."):
		return rolloutPath(subject)
	case strings.HasPrefix(typ, "landlord.plan."):
		return Prefix + "plans/" + url.PathEscape(subject)
	}
	return ""
}

func (c *Console) subscriptionPage(x *call) error {
	v, status, err := c.subscriptionView(x, x.r.PathValue("subscription"), x.r.URL.Query())
	if err != nil {
		return err
	}
	v.Secret = c.takeSecret(x, v.S.ID)
	return c.showStatus(x, status, "subscription", v.S.Name, "subscriptions", v)
}

// subscriptionView reads what a subscription's page shows, its delivery
// log filtered and paged by q (state, page_token). status is 400 when the
// API refused the filter, whose problems the page then shows.
func (c *Console) subscriptionView(x *call, idOrName string, q url.Values) (*subscriptionView, int, error) {
	ctx := x.r.Context()
	api := x.api.Subscriptions()
	sub, err := api.Get(ctx, idOrName)
	if err != nil {
		return nil, 0, err
	}
	v := &subscriptionView{S: *sub, CanWrite: x.canWrite(), CSRF: x.sess.CSRF,
		Log: deliveryLog{State: q.Get("state"), States: deliveryStates, This: q.Get("page_token")}}
	now := c.opts.Now()
	for i, s := range sub.Secrets {
		v.Secrets = append(v.Secrets, secretRow{SecretInfo: s, Current: i == 0, Expired: s.ExpiresAt != nil && !now.Before(*s.ExpiresAt)})
	}
	page, err := api.Deliveries(ctx, sub.ID, client.DeliveryListOptions{State: v.Log.State, PageToken: v.Log.This, PageSize: listPageSize})
	if apiErr, ok := errors.AsType[*client.Error](err); ok && apiErr.Status == http.StatusBadRequest {
		v.Log.Detail, v.Log.Problems = apiErr.Problem.Detail, map[string]string{}
		for _, f := range apiErr.Problem.Errors {
			v.Log.Problems[f.Parameter] = strings.TrimSpace(v.Log.Problems[f.Parameter] + " " + f.Message)
		}
		return v, http.StatusBadRequest, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, d := range page.Deliveries {
		v.Log.Deliveries = append(v.Log.Deliveries, newDeliveryRow(d))
	}
	v.Log.Next = page.NextPageToken
	filters := url.Values{}
	if v.Log.State != "" {
		filters.Set("state", v.Log.State)
	}
	v.Log.FirstURL = subscriptionPage(sub.Name) + "?" + filters.Encode()
	filters.Set("page_token", v.Log.Next)
	v.Log.NextURL = subscriptionPage(sub.Name) + "?" + filters.Encode()
	return v, http.StatusOK, nil
}

// formVersion reads the version of the subscription a form was meant for,
// which its change is sent with (If-Match); ok is false, and the refusal
// shown, when it has none.
func (c *Console) formVersion(x *call) (int64, bool) {
	version, err := strconv.ParseInt(x.r.PostFormValue("version"), 10, 64)
	if err != nil || version < 1 {
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form does not say which version of the subscription it was meant for: go back, reload the page and try again.")
		return 0, false
	}
	return version, true
}

func (c *Console) enableSubscription(x *call) error  { return c.setEnabled(x, true) }
func (c *Console) disableSubscription(x *call) error { return c.setEnabled(x, false) }

// setEnabled enables or disables a subscription, if it is still at the
// version the page showed. Enabling one that landlord disabled clears
// its reason.
func (c *Console) setEnabled(x *call, enabled bool) error {
	version, ok := c.formVersion(x)
	if !ok {
		return nil
	}
	sub, err := x.api.Subscriptions().Update(x.r.Context(), x.r.PathValue("subscription"), client.UpdateSubscriptionRequest{Enabled: &enabled},
		client.UpdateOptions{IfMatch: version})
	if err != nil {
		verb := "enabled"
		if !enabled {
			verb = "disabled"
		}
		return c.refused(x, err, verb)
	}
	http.Redirect(x.w, x.r, subscriptionPage(sub.Name), http.StatusSeeOther)
	return nil
}

// previousSecret are the choices of how long a rotated-out secret keeps
// signing, by the value sent as previous_expires_in ("" is the API's
// default, 24 hours).
var previousSecret = []string{"", "1h", "168h", "0s"}

// rotateSecret gives a subscription a new secret, made here and shown
// once on the page that follows, if it is still at the version the page
// showed.
func (c *Console) rotateSecret(x *call) error {
	version, ok := c.formVersion(x)
	if !ok {
		return nil
	}
	keep := x.r.PostFormValue("previous")
	if !slices.Contains(previousSecret, keep) {
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form asks to keep the previous secret for "+strconv.Quote(keep)+", which is not one of its choices.")
		return nil
	}
	secret := client.NewSecret()
	sub, err := x.api.Subscriptions().RotateSecret(x.r.Context(), x.r.PathValue("subscription"), client.RotateSecretRequest{Secret: secret, PreviousExpiresIn: keep},
		client.UpdateOptions{IfMatch: version})
	if err != nil {
		return c.refused(x, err, "given a new secret")
	}
	c.showSecretOnce(x, sub.ID, secret, true)
	http.Redirect(x.w, x.r, subscriptionPage(sub.Name), http.StatusSeeOther)
	return nil
}

// deleteSubscription deletes a subscription, with its delivery log, once
// its name is typed to confirm it.
func (c *Console) deleteSubscription(x *call) error {
	api := x.api.Subscriptions()
	sub, err := api.Get(x.r.Context(), x.r.PathValue("subscription"))
	if err != nil {
		return err
	}
	if typed := strings.TrimSpace(x.r.PostFormValue("confirm")); typed != sub.Name {
		v, _, err := c.subscriptionView(x, sub.ID, url.Values{})
		if err != nil {
			return err
		}
		v.ConfirmError = "Type the subscription's name, " + sub.Name + ", to delete it."
		return c.showStatus(x, http.StatusUnprocessableEntity, "subscription", sub.Name, "subscriptions", v)
	}
	if err := api.Delete(x.r.Context(), sub.ID); err != nil {
		return err
	}
	http.Redirect(x.w, x.r, Prefix+"subscriptions", http.StatusSeeOther)
	return nil
}

// redeliver sends an event to a subscription again: its delivery is made
// pending, due now. The form's back says which page to return to: the
// delivery's, or the log (with its state filter).
func (c *Console) redeliver(x *call) error {
	name := x.r.PathValue("subscription")
	event := strings.TrimSpace(x.r.PostFormValue("event_id"))
	if event == "" {
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form does not say which event to send again: go back, reload the page and try again.")
		return nil
	}
	if _, err := x.api.Subscriptions().Redeliver(x.r.Context(), name, client.RedeliverRequest{EventID: event}); err != nil {
		if client.IsNotFound(err) {
			return err
		}
		return c.refused(x, err, "sent again")
	}
	back := subscriptionPage(name)
	switch state := x.r.PostFormValue("back"); {
	case state == "delivery":
		back = deliveryPage(name, event)
	case slices.Contains(deliveryStates, state):
		back += "?state=" + state
	}
	http.Redirect(x.w, x.r, back, http.StatusSeeOther)
	return nil
}

// refused shows the subscription's page again, saying why an action the
// API refused (a stale version, a conflict, a request it does not take)
// was: what the verb would have made of it. Other errors are returned.
func (c *Console) refused(x *call, err error, verb string) error {
	apiErr, ok := errors.AsType[*client.Error](err)
	if !ok || (apiErr.Status != http.StatusConflict && apiErr.Status != http.StatusPreconditionFailed && apiErr.Status != http.StatusUnprocessableEntity) {
		return err
	}
	v, _, err := c.subscriptionView(x, x.r.PathValue("subscription"), url.Values{})
	if err != nil {
		return err
	}
	if apiErr.Status == http.StatusPreconditionFailed {
		v.Problem = "Nothing was done: the subscription changed after this page showed it. Look at it again, then choose."
	} else {
		var msgs []string
		for _, f := range apiErr.Problem.Errors {
			msgs = append(msgs, strings.TrimPrefix(f.Pointer+" ", " ")+f.Message)
		}
		v.Problem = fmt.Sprintf("The subscription could not be %s: %s", verb, apiErr.Problem.Detail)
		if len(msgs) > 0 {
			v.Problem += " (" + strings.Join(msgs, "; ") + ")"
		}
	}
	return c.showStatus(x, apiErr.Status, "subscription", v.S.Name, "subscriptions", v)
}

// deliveryView is the page of one delivery.
type deliveryView struct {
	S        client.Subscription
	D        deliveryRow
	CanWrite bool
	CSRF     string
}

func (c *Console) deliveryPage(x *call) error {
	api := x.api.Subscriptions()
	sub, err := api.Get(x.r.Context(), x.r.PathValue("subscription"))
	if err != nil {
		return err
	}
	d, err := api.Delivery(x.r.Context(), sub.ID, x.r.PathValue("event"))
	if err != nil {
		return err
	}
	slices.Reverse(d.Log) // newest first, as the log
	v := deliveryView{S: *sub, D: newDeliveryRow(*d), CanWrite: x.canWrite(), CSRF: x.sess.CSRF}
	return c.show(x, "delivery", "Delivery of "+d.EventID+" to "+sub.Name, "subscriptions", v)
}

func subscriptionPage(idOrName string) string {
	return Prefix + "subscriptions/" + url.PathEscape(idOrName)
}

func deliveryPage(subscription, event string) string {
	return subscriptionPage(subscription) + "/deliveries/" + url.PathEscape(event)
}

// deliveryClass is the CSS class of the badge of a delivery's state.
func deliveryClass(state string) string {
	switch state {
	case client.DeliveryDelivered:
		return "ok"
	case client.DeliveryFailed:
		return "bad"
	}
	return "busy"
}

// attemptClass is the CSS class of an attempt's answer: ok for a 2xx,
// which delivers, bad for anything else.
func attemptClass(status int) string {
	if status >= 200 && status <= 299 {
		return "ok"
	}
	return "bad"
}

// latency says how long an attempt took: "84 ms", "1.2 s".
func latency(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
	if ms < 10 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// httpStatus says an HTTP status with its text: "503 Service Unavailable";
// "" for none.
func httpStatus(code int) string {
	if code == 0 {
		return ""
	}
	return strings.TrimSpace(strconv.Itoa(code) + " " + http.StatusText(code))
}
