package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/events"
	"github.com/jaxxstorm/landlord/internal/events/webhooktest"
	"github.com/jaxxstorm/landlord/internal/poll"
)

// printedSecret finds the secret a verb printed.
var printedSecret = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)

// mustNotShow fails when the secret shows in a run's output.
func mustNotShow(t *testing.T, res cliResult, secret string) {
	t.Helper()
	key := strings.TrimPrefix(secret, client.SecretPrefix)
	if strings.Contains(res.stdout, key) || strings.Contains(res.stderr, key) {
		t.Errorf("the secret shows:\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	}
}

// fields is s with its runs of spaces as one, as a view's rows are
// compared whatever the width of its keys.
func fields(s string) string { return strings.Join(strings.Fields(s), " ") }

// hooks starts a receiver that verifies deliveries with secrets and
// answers with answer (nil: 204).
func hooks(t *testing.T, answer func(*webhooktest.Request) int, secrets ...string) (*webhooktest.Receiver, string) {
	t.Helper()
	rc := &webhooktest.Receiver{Secrets: secrets, Answer: answer, Hang: time.Second}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL + "/hooks"
}

// A secret landlord makes is printed once, on create and on rotate, with a
// note saying so; one given is never printed.
func TestSubscriptionSecrets(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Events: true})
	_, url := hooks(t, nil)

	res := mustRunCLI(t, srv, exitOK, "", "subscriptions", "create", "billing", "--url", url, "--type", "landlord.tenant.ready")
	made := printedSecret.FindString(res.stdout)
	if _, err := events.SecretKey(made); err != nil {
		t.Fatalf("create printed no secret the server takes (%q: %v):\n%s", made, err, res.stdout)
	}
	mustContain(t, "stdout", res.stdout, "Name:", "billing", "Secret: "+made)
	mustContain(t, "stderr", res.stderr, "This is the only time landlord shows the secret", "webhook-signature", "landlord subscriptions rotate billing")
	if strings.Count(res.stdout+res.stderr, made) != 1 {
		t.Errorf("the secret is printed more than once:\n%s\n%s", res.stdout, res.stderr)
	}
	for _, args := range [][]string{{"get", "billing"}, {"get", "billing", "-o", "json"}, {"list"}, {"list", "-o", "yaml"}} {
		mustNotShow(t, mustRunCLI(t, srv, exitOK, "", append([]string{"subscriptions"}, args...)...), made)
	}

	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "rotate", "billing", "--previous-expires-in", "1h", "-o", "json")
	var rotated struct {
		client.Subscription
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rotated); err != nil || rotated.Secret == made || len(rotated.Secrets) != 2 || rotated.Secrets[1].ExpiresAt == nil {
		t.Fatalf("rotate -o json: %v\n%s", err, res.stdout)
	}
	if _, err := events.SecretKey(rotated.Secret); err != nil {
		t.Errorf("rotate made %q: %v", rotated.Secret, err)
	}
	mustContain(t, "stderr", res.stderr, "This is the only time landlord shows the secret")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "get", "billing")
	mustContain(t, "get", res.stdout, "signs until")

	given := client.NewSecret()
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "create", "audit", "--url", url, "--secret", given)
	mustNotShow(t, res, given)
	if strings.Contains(res.stderr, "only time") {
		t.Errorf("a secret given is said to be shown:\n%s", res.stderr)
	}
	res = mustRunCLI(t, srv, exitOK, given+"\n", "subscriptions", "rotate", "audit", "--secret", "-")
	mustNotShow(t, res, given)
	res = mustRunCLI(t, srv, exitOK, given+"\n", "subscriptions", "create", "stdin", "--url", url, "--secret", "-", "-o", "json")
	mustNotShow(t, res, given)

	// A secret the server refuses is named by its flag, and not shown.
	res = mustRunCLI(t, srv, exitFailure, "", "subscriptions", "create", "bad", "--url", url, "--secret", "whsec_hunter2")
	mustContain(t, "stderr", res.stderr, "--secret: ")
	if strings.Contains(res.stderr, "hunter2") {
		t.Errorf("the refused secret shows:\n%s", res.stderr)
	}
	mustRunCLI(t, srv, exitUsage, "", "subscriptions", "create", "empty", "--url", url, "--secret", "-")
	mustRunCLI(t, srv, exitUsage, "", "subscriptions", "rotate", "audit", "--previous-expires-in", "a week")
}

// The subscriptions verbs manage one's life: list, get, update, disable
// and enable, its delivery log, redelivery and delete; the API's problems
// name the verbs' flags and commands.
func TestSubscriptionsVerbs(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Events: true})
	c := srv.Client(t, "")
	ctx := t.Context()
	secret := client.NewSecret()
	rc, url := hooks(t, nil, secret)

	mustRunCLI(t, srv, exitOK, "", "subscriptions", "create", "billing", "--url", url, "--secret", secret,
		"--type", "landlord.tenant.created,landlord.tenant.changed", "--label", "tier=gold", "--description", "opens accounts")
	res := mustRunCLI(t, srv, exitOK, "", "subscriptions", "list")
	mustContain(t, "list", res.stdout, "NAME", "STATE", "billing", "enabled", url, "landlord.tenant.created,landlord.tenant.changed", "tier=gold")
	res = mustRunCLI(t, srv, exitOK, "", "subscription", "get", "billing")
	mustContain(t, "get", fields(res.stdout), "URL: "+url, "Description: opens accounts", "tier=gold (only tenants with all of them)")

	tn, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", ComputeConfig: []byte(`{"image":"a"}`), Labels: map[string]string{"tier": "gold"}}, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the created event delivered", 10*time.Second, func() (bool, string) {
		page, err := c.Subscriptions().Deliveries(ctx, "billing", client.DeliveryListOptions{State: client.DeliveryDelivered})
		return err == nil && len(page.Deliveries) == 1, fmt.Sprint(page, err)
	})
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "deliveries", "billing")
	mustContain(t, "deliveries", res.stdout, "SEQUENCE", "EVENT", "LAST STATUS", "NEXT ATTEMPT", "landlord.tenant.created", tn.ID, "delivered", "204")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "deliveries", "billing", "-o", "json")
	var list client.DeliveryList
	if err := json.Unmarshal([]byte(res.stdout), &list); err != nil || len(list.Deliveries) != 1 {
		t.Fatalf("deliveries -o json: %v\n%s", err, res.stdout)
	}
	eventID := list.Deliveries[0].EventID
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "delivery", "billing", eventID)
	mustContain(t, "delivery", res.stdout, "Event:", eventID, "Attempts:", "NUMBER", "LATENCY", "204")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "deliveries", "billing", "--state", "failed")
	mustContain(t, "stderr", res.stderr, "subscription billing has no failed deliveries")
	mustRunCLI(t, srv, exitUsage, "", "subscriptions", "deliveries", "billing", "--state", "lost")
	mustRunCLI(t, srv, exitNotFound, "", "subscriptions", "delivery", "billing", "evt_none")

	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "redeliver", "billing", "--event", eventID)
	mustContain(t, "redeliver", res.stdout, "sending 1 event to billing again", "landlord subscriptions deliveries billing")
	poll.Until(t, "the event delivered again", 10*time.Second, func() (bool, string) {
		return len(rc.Requests()) == 2, fmt.Sprint(rc.Requests())
	})
	if r := rc.Requests(); r[0].ID != r[1].ID || r[1].VerifyError != nil {
		t.Errorf("the redelivery: %+v; want the same webhook-id, signed", r[1])
	}
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "redeliver", "billing", "--since", "1h", "-o", "json")
	if strings.TrimSpace(res.stdout) != "{\n  \"deliveries\": 1\n}" {
		t.Errorf("redeliver --since 1h -o json:\n%s", res.stdout)
	}
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	mustRunCLI(t, srv, exitOK, "", "subscriptions", "redeliver", "billing", "--since", since, "--until", "1m")
	for _, bad := range [][]string{
		{"subscriptions", "redeliver", "billing"},
		{"subscriptions", "redeliver", "billing", "--event", eventID, "--since", "1h"},
		{"subscriptions", "redeliver", "billing", "--since", "yesterday"},
		{"subscriptions", "redeliver", "billing", "--since", "1h", "--until", "2h"},
		{"subscriptions", "update", "billing"},
		{"subscriptions", "create", "nourl"},
		{"subscriptions", "create", "badtype", "--url", url, "--type", "landlord.tenant.readied"},
		{"subscriptions", "create", "badlabel", "--url", url, "--label", "tier"},
	} {
		mustRunCLI(t, srv, exitUsage, "", bad...)
	}

	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "update", "billing", "--type", "", "--label", "", "--description", "every event")
	mustContain(t, "update", fields(res.stdout), "Types: all", "Labels: any", "Description: every event")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "disable", "billing")
	mustContain(t, "disable", fields(res.stdout), "State: disabled")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "enable", "billing", "-o", "json")
	mustContain(t, "enable", res.stdout, `"enabled": true`)

	// The API's problems in the CLI's words.
	res = mustRunCLI(t, srv, exitFailure, "", "subscriptions", "update", "billing", "--url", "http://example.com/hooks")
	mustContain(t, "stderr", res.stderr, "--url: http is for loopback receivers only; use https")
	res = mustRunCLI(t, srv, exitFailure, "", "subscriptions", "create", "billing", "--url", url)
	mustContain(t, "stderr", res.stderr, "(409 name_taken)", "landlord subscriptions get billing")
	res = mustRunCLI(t, srv, exitFailure, "", "subscriptions", "update", "billing", "--label", "Bad Key!=x")
	mustContain(t, "stderr", res.stderr, "--label Bad Key!:")

	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "delete", "billing")
	mustContain(t, "delete", res.stdout, "deleted subscription billing and its delivery log")
	res = mustRunCLI(t, srv, exitNotFound, "", "subscriptions", "get", "billing")
	mustContain(t, "stderr", res.stderr, "landlord subscriptions list")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "list")
	mustContain(t, "stderr", res.stderr, "no subscriptions; create one with: landlord subscriptions create NAME --url URL")
}

// A receiver that keeps failing: the delivery log shows the failure, and
// the subscription that landlord disabled says why and how to enable it.
func TestSubscriptionDisabledByFailures(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Options{Events: true})
	c := srv.Client(t, "")
	_, url := hooks(t, func(*webhooktest.Request) int { return http.StatusServiceUnavailable })
	mustRunCLI(t, srv, exitOK, "", "subscriptions", "create", "flaky", "--url", url)
	if _, err := c.Tenants().Create(t.Context(), client.CreateTenantRequest{Name: "acme", ComputeConfig: []byte(`{"image":"a"}`)}, client.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the subscription disabled", 10*time.Second, func() (bool, string) {
		s, err := c.Subscriptions().Get(t.Context(), "flaky")
		return err == nil && !s.Enabled, fmt.Sprint(s, err)
	})
	res := mustRunCLI(t, srv, exitOK, "", "subscriptions", "deliveries", "flaky")
	mustContain(t, "deliveries", res.stdout, "failed", "503", "the receiver answered 503")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "get", "flaky")
	mustContain(t, "get", res.stdout, "disabled by landlord: ", "(enable it with: landlord subscriptions enable flaky)")
	res = mustRunCLI(t, srv, exitOK, "", "subscriptions", "list")
	mustContain(t, "list", res.stdout, "disabled by landlord", "REASON")
}
