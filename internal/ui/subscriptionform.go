package ui

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/jaxxstorm/landlord/client"
)

// The new-subscription form is made of the form's fields (field), so that
// it looks, reads back and shows the API's problems at their inputs as
// the tenant form does. It sends what was typed; the API alone judges it.

// subscriptionFormView is the new-subscription form.
type subscriptionFormView struct {
	// Fields holds name, url, types, labels and description.
	Fields *field
	// Detail and Problems are the API's answer when it refused the
	// subscription; Problems are those no field holds, Placed counts the
	// others.
	Detail   string
	Problems []fieldProblem
	Placed   int
	CSRF     string
}

// subscriptionNode describes the form's fields as the form machinery
// reads a schema. types is made apart (typesField).
var subscriptionNode = &node{Type: "object", Properties: []*property{
	{Name: "name", Required: true, node: &node{Type: "string",
		Description: "How the console, the CLI and the API name it: a lowercase DNS label (a-z, 0-9 and -)."}},
	{Name: "url", Required: true, node: &node{Type: "string",
		Description: "Where deliveries are posted: an https URL (http only to a loopback host). Its host must resolve to a public address, or to a network the operator allows."}},
	{Name: "labels", node: labelsNode},
	{Name: "description", node: &node{Type: "string", Description: "What it is for, for the people who read this list."}},
}}

// labelsNode is the labels field: name and value rows.
var labelsNode = &node{Type: "object", Values: &node{Type: "string"},
	Description: "Only the events of tenants that have every one of these labels; with any, the events of rollouts and plans are not sent."}

// typesHelp says what the types field means.
const typesHelp = "The event types to send. None chosen sends every type, those added later included."

// typesField is the types field: a checkbox per event type, of the
// client's list, which is held to the server's.
func typesField(chosen []string) *field {
	f := &field{Pointer: "/types", Label: "types", Kind: "checks", Help: typesHelp}
	known := client.EventTypes()
	for _, t := range known {
		f.Options = append(f.Options, option{Value: t, Label: t, Selected: slices.Contains(chosen, t)})
	}
	for _, t := range chosen { // a type the list lacks, sent anyway: shown, for the API's verdict on it
		if !slices.Contains(known, t) {
			f.Options = append(f.Options, option{Value: t, Label: t, Selected: true})
		}
	}
	return f
}

// subscriptionFields makes the form's fields holding what req has.
func subscriptionFields(req client.CreateSubscriptionRequest) *field {
	body := object{{Key: "name", Value: req.Name}, {Key: "url", Value: req.URL}}
	if len(req.Labels) > 0 {
		body = append(body, member{Key: "labels", Value: mapObject(req.Labels)})
	}
	body = append(body, member{Key: "description", Value: req.Description})
	root := fields(subscriptionNode, "", "", false, body, nil)
	// The types come after the URL: what is sent, then to whom.
	root.Children = slices.Insert(root.Children, 2, typesField(req.Types))
	return root
}

// readSubscription reads the request a submitted form makes, without its
// secret.
func readSubscription(values url.Values) client.CreateSubscriptionRequest {
	req := client.CreateSubscriptionRequest{
		Name:        strings.TrimSpace(values.Get("/name")),
		URL:         strings.TrimSpace(values.Get("/url")),
		Description: strings.TrimSpace(values.Get("/description")),
	}
	for _, t := range values["/types"] {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(req.Types, t) {
			req.Types = append(req.Types, t)
		}
	}
	if labels, ok := decode(labelsNode, "/labels", values, nil); ok {
		req.Labels = map[string]string{}
		for _, m := range labels.(object) {
			req.Labels[m.Key] = scalarText(m.Value)
		}
	}
	return req
}

func (c *Console) newSubscription(x *call) error {
	v := subscriptionFormView{Fields: subscriptionFields(client.CreateSubscriptionRequest{}), CSRF: x.sess.CSRF}
	return c.show(x, "subscription_new", "New subscription", "subscriptions", v)
}

// createSubscription handles the form's buttons: a row of labels more,
// and the save, which makes the subscription with a secret the console
// makes, shown once on the subscription's page.
func (c *Console) createSubscription(x *call) error {
	req := readSubscription(x.r.PostForm)
	v := subscriptionFormView{Fields: subscriptionFields(req), CSRF: x.sess.CSRF}
	switch action := x.r.PostFormValue("_action"); action {
	case "more:/labels": // every map shows a row more
		return c.show(x, "subscription_new", "New subscription", "subscriptions", v)
	case "save":
	default:
		c.renderError(x.w, x.r, x.sess, http.StatusBadRequest, "This form has no button "+strconv.Quote(action)+".")
		return nil
	}
	secret := client.NewSecret()
	req.Secret = secret
	sub, err := x.api.Subscriptions().Create(x.r.Context(), req)
	apiErr, isAPI := errors.AsType[*client.Error](err)
	switch {
	case err == nil:
		c.showSecretOnce(x, sub.ID, secret, false)
		http.Redirect(x.w, x.r, subscriptionPage(sub.Name), http.StatusSeeOther)
		return nil
	case !isAPI || apiErr.Status < 400 || apiErr.Status >= 500 || apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden:
		return err
	}
	v.Detail = apiErr.Problem.Detail
	var ps []fieldProblem
	for _, e := range apiErr.Problem.Errors {
		ptr := e.Pointer
		if strings.HasPrefix(ptr, "/types/") {
			ptr = "/types" // the message names the type
		}
		ps = append(ps, fieldProblem{Pointer: ptr, Message: e.Message})
	}
	if len(ps) == 0 && apiErr.Status == http.StatusConflict {
		// The one conflict of a create is a name taken; the alert says
		// the API's words.
		ps = append(ps, fieldProblem{Pointer: "/name", Message: "is taken"})
	}
	v.Problems = place(v.Fields, ps)
	v.Placed = len(ps) - len(v.Problems)
	return c.showStatus(x, apiErr.Status, "subscription_new", "New subscription", "subscriptions", v)
}
